"""A server's side of one SPDY/3.1 connection: the streams the client opens.

The transport (a raw upgraded HTTP connection, or a WebSocket carrying the same bytes) feeds
received bytes to :meth:`SpdySession.feed` and gives the session a coroutine that writes bytes
(and waits while the connection's write buffer is full). Every ``SYN_STREAM`` is accepted with
a ``SYN_REPLY`` and handed to ``on_stream``; data frames go to their stream's buffer; ``PING``
is answered; ``RST_STREAM`` and ``GOAWAY`` end streams.

Flow control (SPDY/3.1 section 2.6.8): each stream, and the session, starts with a 64 KiB
window in each direction.

- Receiving: as a stream's bytes are read, ``WINDOW_UPDATE`` frames give the client its window
  back (for the stream and for the session, once half a window was read). ``spdystream``, the
  library kubectl speaks SPDY with, neither sends nor honours ``WINDOW_UPDATE``: it writes
  regardless. So a stream holding more than a window of unread bytes stops the session reading
  the connection until it is read down (TCP then holds the client back, as the kubelet's
  ``spdystream`` does through its blocking frame handlers); the server never buffers more than
  a window per stream.
- Sending: a client that does flow control says so, with a ``SETTINGS`` initial window size or
  a ``WINDOW_UPDATE``; from then on no stream sends beyond its window or the session's.
  Before that (kubectl never sends either, and would stall at 64 KiB if held to it) sending is
  paced by the connection alone: each write waits while the socket's buffer is full.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from setpoint.cluster.apiserver.http.spdy import frames
from setpoint.cluster.apiserver.http.spdy.frames import Frame, FrameReader, HeaderCodec

log = logging.getLogger(__name__)

#: Bytes read from a stream at most per read.
READ_CHUNK: Final = 64 * 1024
#: SPDY/3.1's initial window of a stream and of the session, each way.
INITIAL_WINDOW: Final = 64 * 1024
#: Read bytes are given back in ``WINDOW_UPDATE`` frames of at least this many.
WINDOW_UPDATE_THRESHOLD: Final = INITIAL_WINDOW // 2


class Stream:
    """One stream the client opened: its headers, what it sent, and a way to answer."""

    def __init__(self, session: SpdySession, stream_id: int, headers: dict[str, str]) -> None:
        self.session = session
        self.stream_id = stream_id
        self.headers = headers
        self._received: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.remote_closed = False
        self.local_closed = False
        #: Bytes received and not read yet.
        self.buffered = 0
        #: Bytes read and not yet given back to the client in a WINDOW_UPDATE.
        self._unacknowledged = 0
        #: What this stream may still send, when the client does flow control.
        self.send_window = session.peer_initial_window
        self._discarding = False

    def _deliver(self, data: bytes, fin: bool) -> None:
        if data and not self._discarding:
            self.buffered += len(data)
            self._received.put_nowait(data)
        if fin and not self.remote_closed:
            self.remote_closed = True
            self._received.put_nowait(None)

    async def read(self) -> bytes:
        """The next bytes the client sent on this stream (``b""`` once it closed its side)."""
        received = await self._received.get()
        if received is None:
            self._received.put_nowait(None)  # every later read sees the end too
            return b""
        self.buffered -= len(received)
        self._unacknowledged += len(received)
        if self._unacknowledged >= WINDOW_UPDATE_THRESHOLD and not self.remote_closed:
            delta, self._unacknowledged = self._unacknowledged, 0
            await self.session.send(frames.window_update(self.stream_id, delta))
        await self.session.consumed(self, len(received))
        return received

    async def write(self, data: bytes) -> None:
        """Send ``data`` on this stream (within the windows, when the client does flow
        control)."""
        offset = 0
        while offset < len(data) and not self.local_closed:
            room = await self.session.send_room(self, len(data) - offset)
            if room <= 0:
                return  # the session ended while waiting
            piece = data[offset : offset + room]
            offset += len(piece)
            await self.session.send(frames.data_frames(self.stream_id, piece))

    async def close(self) -> None:
        """Close this side of the stream (``FIN``)."""
        if not self.local_closed:
            self.local_closed = True
            await self.session.send(frames.data_frames(self.stream_id, b"", fin=True))

    def discard(self) -> None:
        """Nothing will read this stream any more: drop what it holds and what comes."""
        self._discarding = True
        dropped = self.buffered
        self.buffered = 0
        while not self._received.empty():
            self._received.get_nowait()
        if self.remote_closed:
            self._received.put_nowait(None)
        del dropped
        self.session.release(self, force=True)

    def reset(self) -> None:
        """The stream ended abruptly (the client reset it, or the session ended)."""
        self.local_closed = True
        self._deliver(b"", fin=True)
        self.session.release(self, force=True)


class SpdySession:
    """Serves one SPDY connection (see the module docstring)."""

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        on_stream: Callable[[Stream], Awaitable[None]],
    ) -> None:
        self._write = write
        self._on_stream = on_stream
        self._codec = HeaderCodec()
        self._reader = FrameReader(self._codec)
        self._lock = asyncio.Lock()
        self.streams: dict[int, Stream] = {}
        self._handlers: set[asyncio.Task[None]] = set()
        self._last_stream = 0
        self.closed = False
        #: Set once the connection is gone (every stream then ends).
        self.ended = asyncio.Event()
        #: Whether the client does flow control (it sent a window size or an update).
        self.flow_controlled = False
        #: A new stream's send window (the client's SETTINGS may change it).
        self.peer_initial_window = INITIAL_WINDOW
        #: What the session may still send, when the client does flow control.
        self.send_window = INITIAL_WINDOW
        self._window_changed = asyncio.Event()
        #: Streams holding more than a window of unread bytes: reading waits for them.
        self._over: set[Stream] = set()
        self._room = asyncio.Event()
        self._room.set()
        self._session_unacknowledged = 0

    async def send(self, data: bytes) -> None:
        """Write frames (one writer at a time, so frames never interleave)."""
        if self.closed:
            return
        async with self._lock:
            try:
                await self._write(data)
            except (ConnectionError, RuntimeError):
                self.closed = True
                self.end()

    async def feed(self, data: bytes) -> None:
        """Act on the frames completed by ``data``; :class:`frames.ProtocolError` if bad.
        Returns once every stream holds at most a window of unread bytes (see the module
        docstring), so the transport reads no further meanwhile."""
        for frame in self._reader.feed(data):
            await self._frame(frame)
        while self._over and not self.closed:
            self._room.clear()
            await self._room.wait()

    async def consumed(self, stream: Stream, size: int) -> None:
        """``size`` bytes of ``stream`` were read: give the session window back, and let the
        transport read again once no stream is over its window."""
        self._session_unacknowledged += size
        if self._session_unacknowledged >= WINDOW_UPDATE_THRESHOLD:
            delta, self._session_unacknowledged = self._session_unacknowledged, 0
            await self.send(frames.window_update(0, delta))
        self.release(stream)

    def release(self, stream: Stream, force: bool = False) -> None:
        """``stream`` holds fewer unread bytes (or, ``force``, nothing will read it any more):
        the transport may read again once no stream is over its window."""
        if stream in self._over and (force or stream.buffered <= INITIAL_WINDOW):
            self._over.discard(stream)
            if not self._over:
                self._room.set()

    async def send_room(self, stream: Stream, wanted: int) -> int:
        """How many of ``wanted`` bytes ``stream`` may send now (waiting for a window when the
        client does flow control); 0 once the session or stream is gone."""
        wanted = min(wanted, frames.MAX_PAYLOAD)
        if not self.flow_controlled:
            return wanted
        while not self.closed and not stream.local_closed:
            room = min(wanted, stream.send_window, self.send_window)
            if room > 0:
                stream.send_window -= room
                self.send_window -= room
                return room
            self._window_changed.clear()
            await self._window_changed.wait()
        return 0

    def _grow_windows(self, frame: Frame) -> None:
        self.flow_controlled = True
        if frame.kind == frames.WINDOW_UPDATE:
            if frame.stream_id == 0:
                self.send_window += frame.value
            elif (found := self.streams.get(frame.stream_id)) is not None:
                found.send_window += frame.value
        else:
            size = frame.settings[frames.SETTINGS_INITIAL_WINDOW_SIZE]
            for stream in self.streams.values():
                stream.send_window += size - self.peer_initial_window
            self.peer_initial_window = size
        self._window_changed.set()

    async def _frame(self, frame: Frame) -> None:
        if frame.kind == 0:
            stream = self.streams.get(frame.stream_id)
            if stream is None:
                await self.send(frames.rst_stream(frame.stream_id, frames.INVALID_STREAM))
                return
            stream._deliver(frame.data, frame.fin)
            if stream.buffered > INITIAL_WINDOW:
                self._over.add(stream)
        elif frame.kind == frames.WINDOW_UPDATE or (
            frame.kind == frames.SETTINGS and frames.SETTINGS_INITIAL_WINDOW_SIZE in frame.settings
        ):
            self._grow_windows(frame)
        elif frame.kind == frames.SYN_STREAM:
            stream = Stream(self, frame.stream_id, frame.headers)
            self.streams[frame.stream_id] = stream
            self._last_stream = max(self._last_stream, frame.stream_id)
            await self.send(frames.syn_reply(self._codec, frame.stream_id, {}))
            if frame.fin:
                stream._deliver(b"", fin=True)
            task = asyncio.get_running_loop().create_task(self._handle(stream))
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        elif frame.kind == frames.PING:
            await self.send(frames.ping(frame.value))
        elif frame.kind == frames.RST_STREAM:
            found = self.streams.get(frame.stream_id)
            if found is not None:
                found.reset()
        elif frame.kind == frames.GOAWAY:
            self.end()

    async def _handle(self, stream: Stream) -> None:
        try:
            await self._on_stream(stream)
        except Exception:
            log.exception("SPDY stream %d failed", stream.stream_id)
            await self.send(frames.rst_stream(stream.stream_id, frames.PROTOCOL_ERROR))

    def end(self) -> None:
        """The connection is gone: every stream ends."""
        self.ended.set()
        for stream in self.streams.values():
            stream.reset()
        self._over.clear()
        self._room.set()
        self._window_changed.set()

    async def close(self) -> None:
        """Say goodbye and stop every stream's handler."""
        if not self.closed:
            await self.send(frames.goaway(self._last_stream))
            self.closed = True
        self.end()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        for task in handlers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
