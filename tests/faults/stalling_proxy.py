"""A TCP proxy that can stop forwarding without closing anything: a silently dead network path
(a NAT entry dropped, a proxy hung), the failure a watch cannot see by itself."""

from __future__ import annotations

import asyncio
import contextlib


class StallingProxy:
    """Forwards 127.0.0.1:port to an upstream port; ``stall()`` freezes every connection (old
    and new: accepted, never forwarded); ``resume()`` drops the frozen ones and forwards new
    ones again (as a restarted proxy would)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.stalled = False
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def stall(self) -> None:
        self.stalled = True

    def resume(self) -> None:
        self.stalled = False
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        self.resume()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        if self.stalled:
            return  # accepted, never answered; resume() drops it
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.add(up_writer)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await source.read(65536)
                if not data:
                    break
                while self.stalled:  # hold the bytes: the path is dead, nobody is told  # noqa: ASYNC110 - a frozen path
                    await asyncio.sleep(0.05)
                if sink.transport.is_closing():
                    break
                sink.write(data)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            sink.transport.abort()
