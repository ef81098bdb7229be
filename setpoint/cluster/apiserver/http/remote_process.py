"""What a streaming session (``exec`` or ``attach``, over WebSocket or SPDY) is connected to.

The transports (:mod:`.pod_exec` for WebSocket, :mod:`.spdy.remote_command` for SPDY) carry
the client's stdin to a :class:`RemoteProcess`, its output back, and its end as the ``Status``
kubectl turns into an exit code. ``exec`` connects them to a new command
(:class:`CommandProcess`); ``attach`` to the running process of a container, which the kubelet
provides. When the client goes away first, :meth:`RemoteProcess.abandon` says so: an exec'd
command is killed, an attached container keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, Protocol

from setpoint.cluster.apiserver.http.exec_command import exit_status, start_command, start_failure

#: Bytes read from a command's output at a time.
READ_CHUNK: Final = 64 * 1024
#: Output chunks held for a slow client before the command's pipes stop being read.
OUTPUT_QUEUE_CHUNKS: Final = 16


class StartFailed(Exception):
    """The process could not start; ``status`` is the ``Status`` to send the client."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status


class RemoteProcess(Protocol):
    """One process as a streaming session sees it."""

    def output(self) -> AsyncIterator[tuple[str, bytes]]:
        """``("stdout"|"stderr", bytes)`` until the process's output ends."""
        ...

    async def write_stdin(self, data: bytes) -> None:
        """Feed the process's stdin (ignored when it has none)."""
        ...

    def close_stdin(self) -> None:
        """The client's stdin ended."""
        ...

    async def status(self) -> dict[str, Any]:
        """Once the output ended: the ``Status`` that reports the end."""
        ...

    def abandon(self) -> None:
        """The client went away before the end."""
        ...


#: Starts the process of a session: ``(stdin, tty)`` -> the process, or :class:`StartFailed`.
ProcessStarter = Callable[[bool, bool], Awaitable[RemoteProcess]]


class CommandProcess:
    """A command started for ``exec``: its pipes, its exit code as the ``Status``."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    @classmethod
    def starter(cls, command: list[str], cwd: str, env: dict[str, str]) -> ProcessStarter:
        """How to start ``command`` for a session (as the kubelet starts an exec)."""

        async def start(stdin: bool, tty: bool) -> RemoteProcess:
            try:
                process = await start_command(command, cwd, env, stdin=stdin, tty=tty)
            except OSError as exc:
                raise StartFailed(start_failure(command, exc)) from exc
            return cls(process)

        return start

    async def output(self) -> AsyncIterator[tuple[str, bytes]]:
        queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue(OUTPUT_QUEUE_CHUNKS)

        async def pump(stream: asyncio.StreamReader | None, name: str) -> None:
            try:
                while stream is not None and (chunk := await stream.read(READ_CHUNK)):
                    await queue.put((name, chunk))
            finally:
                await queue.put(None)

        pumps = [
            asyncio.create_task(pump(self._process.stdout, "stdout")),
            asyncio.create_task(pump(self._process.stderr, "stderr")),
        ]
        try:
            ended = 0
            while ended < len(pumps):
                item = await queue.get()
                if item is None:
                    ended += 1
                    continue
                yield item
        finally:
            for task in pumps:
                task.cancel()
            for task in pumps:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def write_stdin(self, data: bytes) -> None:
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(data)
        with contextlib.suppress(ConnectionError):
            await stdin.drain()

    def close_stdin(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()

    async def status(self) -> dict[str, Any]:
        return exit_status(await self._process.wait())

    def abandon(self) -> None:
        if self._process.returncode is None:
            # Its own process group (the session it started), so what it forked goes too:
            # ``nsenter`` forks the command into the container's PID namespace.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
