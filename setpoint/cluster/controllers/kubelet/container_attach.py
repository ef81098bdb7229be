"""Attaching to a ``--run-pods`` container's running process (``kubectl attach``, ``debug -it``).

A container whose spec says ``stdin: true`` is started with its stdin a pipe the kubelet keeps
open (the runtime's ``OpenStdin``); others get ``/dev/null``. Every attach session receives what
the process writes from then on (the log file keeps everything, as upstream) and may write to
its stdin. With ``stdinOnce`` the pipe is closed when the first session that attached to stdin
ends (its stdin reached end of file, or it went away), so the process sees end of input, as
the container runtime does; without it stdin stays open across sessions. The session ends with
the process and reports ``Success`` whatever the exit code (as the kubelet's attach does).

There is no terminal: with ``tty`` the session gets stderr on stdout, and resize messages are
ignored; the process sees pipes, never a TTY.

A session that does not read keeps at most :data:`SESSION_BUFFER_CHUNKS` chunks; beyond that it
is cut off rather than slow the container down or hold its output in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, Final

log = logging.getLogger(__name__)

#: Output chunks (of at most 64 KiB) held for one attach session that does not keep up.
SESSION_BUFFER_CHUNKS: Final = 256
SUCCESS: Final = {"metadata": {}, "status": "Success"}


class ContainerStreams:
    """One container instance's stdin pipe and the attach sessions listening to its output."""

    def __init__(self, stdin: asyncio.StreamWriter | None, stdin_once: bool) -> None:
        self._stdin = stdin
        self._stdin_once = stdin_once
        self._sessions: set[Attachment] = set()
        self.ended = False

    def publish(self, stream: str, data: bytes) -> None:
        """The process wrote ``data`` on ``stream`` (``stdout`` or ``stderr``)."""
        for session in list(self._sessions):
            session.offer(stream, data)

    def end(self) -> None:
        """The process exited: every session ends."""
        self.ended = True
        self.close_stdin()
        for session in list(self._sessions):
            session.finish()
        self._sessions.clear()

    def attach(self, stdin: bool, tty: bool) -> Attachment:
        """A new session (with the client's stdin when ``stdin``)."""
        session = Attachment(self, stdin, tty)
        if self.ended:
            session.finish()
        else:
            self._sessions.add(session)
        return session

    def detach(self, session: Attachment) -> None:
        self._sessions.discard(session)

    async def write_stdin(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(data)
        with contextlib.suppress(ConnectionError):
            await stdin.drain()

    def stdin_ended(self) -> None:
        """A session that attached to stdin ended it: with ``stdinOnce`` the pipe closes."""
        if self._stdin_once:
            self.close_stdin()

    def close_stdin(self) -> None:
        if self._stdin is not None and not self._stdin.is_closing():
            self._stdin.close()


class Attachment:
    """One attach session (a :class:`~setpoint.cluster.apiserver.http.remote_process.
    RemoteProcess`)."""

    def __init__(self, streams: ContainerStreams, stdin: bool, tty: bool) -> None:
        self._streams = streams
        self._stdin = stdin
        self._tty = tty
        self._queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue()
        self._done = False

    def offer(self, stream: str, data: bytes) -> None:
        if self._done:
            return
        if self._queue.qsize() >= SESSION_BUFFER_CHUNKS:
            log.info("an attach session did not keep up with the container's output: cut off")
            self.finish()
            self._streams.detach(self)
            return
        self._queue.put_nowait(("stdout" if self._tty else stream, data))

    def finish(self) -> None:
        if not self._done:
            self._done = True
            self._queue.put_nowait(None)

    async def output(self) -> AsyncIterator[tuple[str, bytes]]:
        while (item := await self._queue.get()) is not None:
            yield item

    async def write_stdin(self, data: bytes) -> None:
        if self._stdin:
            await self._streams.write_stdin(data)

    def close_stdin(self) -> None:
        if self._stdin:
            self._stdin = False
            self._streams.stdin_ended()

    async def status(self) -> dict[str, Any]:
        return dict(SUCCESS)

    def abandon(self) -> None:
        self.close_stdin()
        self.finish()
        self._streams.detach(self)
