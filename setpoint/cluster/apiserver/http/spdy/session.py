"""A server's side of one SPDY/3.1 connection: the streams the client opens.

The transport (a raw upgraded HTTP connection, or a WebSocket carrying the same bytes) feeds
received bytes to :meth:`SpdySession.feed` and gives the session a coroutine that writes bytes.
Every ``SYN_STREAM`` is accepted with a ``SYN_REPLY`` and handed to ``on_stream``; data frames
go to their stream's queue; ``PING`` is answered; ``RST_STREAM`` and ``GOAWAY`` end streams.
Flow control is not enforced in either direction, as in the ``spdystream`` library kubectl
uses.
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


class Stream:
    """One stream the client opened: its headers, what it sent, and a way to answer."""

    def __init__(self, session: SpdySession, stream_id: int, headers: dict[str, str]) -> None:
        self.session = session
        self.stream_id = stream_id
        self.headers = headers
        self._received: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.remote_closed = False
        self.local_closed = False

    def _deliver(self, data: bytes, fin: bool) -> None:
        if data:
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
        return received

    async def write(self, data: bytes) -> None:
        """Send ``data`` on this stream."""
        if data and not self.local_closed:
            await self.session.send(frames.data_frames(self.stream_id, data))

    async def close(self) -> None:
        """Close this side of the stream (``FIN``)."""
        if not self.local_closed:
            self.local_closed = True
            await self.session.send(frames.data_frames(self.stream_id, b"", fin=True))

    def reset(self) -> None:
        """The stream ended abruptly (the client reset it, or the session ended)."""
        self.local_closed = True
        self._deliver(b"", fin=True)


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

    async def send(self, data: bytes) -> None:
        """Write frames (one writer at a time, so frames never interleave)."""
        if self.closed:
            return
        async with self._lock:
            try:
                await self._write(data)
            except (ConnectionError, RuntimeError):
                self.closed = True

    async def feed(self, data: bytes) -> None:
        """Act on the frames completed by ``data``; :class:`frames.ProtocolError` if bad."""
        for frame in self._reader.feed(data):
            await self._frame(frame)

    async def _frame(self, frame: Frame) -> None:
        if frame.kind == 0:
            stream = self.streams.get(frame.stream_id)
            if stream is None:
                await self.send(frames.rst_stream(frame.stream_id, frames.INVALID_STREAM))
                return
            stream._deliver(frame.data, frame.fin)
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
