"""SPDY/3.1 flow control of port-forward streams, with a raw SPDY client: a client that reads
nothing (as kubectl's spdystream, which ignores windows) holds the pod's side back instead of
filling the server's memory; a client that does flow control gets no more than its windows;
and the server gives the client its window back as it reads."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import pytest

from setpoint.cluster.apiserver.http.spdy import frames
from setpoint.cluster.apiserver.http.spdy.frames import Frame, FrameReader, HeaderCodec
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI

WINDOW = 64 * 1024
ERROR_STREAM, DATA_STREAM = 1, 3


@dataclass
class Source:
    """A local TCP server standing for the pod's port: it writes ``size`` bytes to whoever
    connects (through a small send buffer) and counts what it managed to write."""

    size: int
    sent: int = 0
    received: int = 0
    server: asyncio.Server | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, WINDOW)

        async def sink() -> None:
            while chunk := await reader.read(WINDOW):
                self.received += len(chunk)

        task = asyncio.create_task(sink())
        self.tasks.add(task)
        chunk = b"x" * WINDOW
        with contextlib.suppress(ConnectionError):
            while self.sent < self.size:
                piece = chunk[: self.size - self.sent]
                writer.write(piece)
                await writer.drain()
                self.sent += len(piece)

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.server is not None:
            self.server.close()


class SpdyClient:
    """A port-forward client speaking SPDY/3.1 over a raw upgrade, as kubectl 1.27 does."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.codec = HeaderCodec()
        self.frames = FrameReader(self.codec)
        self.data: dict[int, int] = {}
        self.updates: dict[int, int] = {}

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(
        cls, cluster: BackgroundCluster, namespace: str, pod: str
    ) -> AsyncIterator[SpdyClient]:
        url = urlparse(cluster.url)
        sock = socket.socket()
        # A small receive buffer: what the client does not read holds the server back soon.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, WINDOW)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (url.hostname, url.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        request = (
            f"POST /api/v1/namespaces/{namespace}/pods/{pod}/portforward HTTP/1.1\r\n"
            f"Host: {url.netloc}\r\nAuthorization: Bearer {cluster.token}\r\n"
            "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
            "X-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n"
        )
        writer.write(request.encode())
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        try:
            yield cls(reader, writer)
        finally:
            writer.close()

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    def open_streams(self, port: int) -> None:
        for stream_id, kind in ((ERROR_STREAM, "error"), (DATA_STREAM, "data")):
            block = self.codec.encode({"streamtype": kind, "port": str(port), "requestid": "0"})
            payload = struct.pack(">II", stream_id, 0) + b"\x00\x00" + block
            self.send(frames.control_frame(frames.SYN_STREAM, 0, payload))

    async def read_for(self, seconds: float) -> None:
        """Take frames for ``seconds`` (counting data and window updates per stream)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while chunk := await self.reader.read(WINDOW):
                    for frame in self.frames.feed(chunk):
                        self._count(frame)

    async def read_until(self, done: Any, limit: float = 15.0) -> None:
        """Take frames until ``done()`` (at most ``limit`` seconds)."""
        for _ in range(int(limit / 0.25)):
            if done():
                return
            await self.read_for(0.25)

    def _count(self, frame: Frame) -> None:
        if frame.kind == 0:
            self.data[frame.stream_id] = self.data.get(frame.stream_id, 0) + len(frame.data)
        elif frame.kind == frames.WINDOW_UPDATE:
            self.updates[frame.stream_id] = self.updates.get(frame.stream_id, 0) + frame.value


@pytest.fixture
async def source() -> AsyncIterator[Source]:
    found = Source(64 * 1024 * 1024)
    try:
        yield found
    finally:
        found.close()


async def _pod(api: RawAPI, namespace: str) -> str:
    # A simulated pod: port-forward reaches 127.0.0.1 all the same, where the source listens.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "fwd"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }
    assert (await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)).status == 201

    async def running() -> bool:
        found = (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/fwd")).body
        return bool((found.get("status") or {}).get("phase") == "Running")

    await eventually(running, "the pod running")
    return "fwd"


async def _settled(source: Source) -> int:
    """What the source has sent once it stopped making progress for half a second."""
    last = -1
    for _ in range(40):
        if source.sent == last:
            return last
        last = source.sent
        await asyncio.sleep(0.5)
    return source.sent


async def test_a_client_that_reads_nothing_holds_the_pod_back(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str, source: Source
) -> None:
    port = await source.start()
    pod = await _pod(api, namespace)
    async with SpdyClient.connect(local_cluster, namespace, pod) as client:
        client.open_streams(port)
        sent = await _settled(source)
        # Without back-pressure the server would have read all 64 MiB into memory; now only
        # what the sockets' buffers hold left the source.
        assert 0 < sent < 16 * 1024 * 1024
        # Reading again lets the transfer go on.
        await client.read_until(lambda: source.sent > sent)
        assert client.data.get(DATA_STREAM, 0) > 0
        assert source.sent > sent


async def test_a_flow_controlled_client_gets_no_more_than_its_windows(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str, source: Source
) -> None:
    port = await source.start()
    pod = await _pod(api, namespace)
    async with SpdyClient.connect(local_cluster, namespace, pod) as client:
        client.send(frames.settings({frames.SETTINGS_INITIAL_WINDOW_SIZE: WINDOW}))
        client.open_streams(port)
        await client.read_until(lambda: client.data.get(DATA_STREAM, 0) >= WINDOW)
        await client.read_for(0.5)  # and nothing more comes
        assert client.data.get(DATA_STREAM) == WINDOW
        client.send(frames.window_update(DATA_STREAM, 100_000))
        await client.read_for(0.5)
        assert client.data.get(DATA_STREAM) == WINDOW  # the session's window is spent too
        client.send(frames.window_update(0, 100_000))
        await client.read_until(lambda: client.data.get(DATA_STREAM, 0) >= WINDOW + 100_000)
        await client.read_for(0.5)
        assert client.data.get(DATA_STREAM) == WINDOW + 100_000


async def test_the_server_gives_the_window_back_as_it_reads(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    source = Source(0)
    port = await source.start()
    try:
        pod = await _pod(api, namespace)
        async with SpdyClient.connect(local_cluster, namespace, pod) as client:
            client.open_streams(port)
            sent = 256 * 1024
            client.send(frames.data_frames(DATA_STREAM, b"y" * sent))
            await client.read_until(
                lambda: source.received == sent and client.updates.get(0, 0) >= sent - WINDOW // 2
            )
            assert source.received == sent
            # Updates come once half a window was read: all of it but at most that half.
            for stream_id in (DATA_STREAM, 0):
                assert sent - WINDOW // 2 <= client.updates.get(stream_id, 0) <= sent
    finally:
        source.close()
