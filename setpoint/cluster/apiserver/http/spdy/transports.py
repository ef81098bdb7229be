"""Running a SPDY session over what kubectl opens: a WebSocket tunnel, or a raw upgrade.

kubectl 1.31 and newer first try a WebSocket whose subprotocol is
``SPDY/3.1+portforward.k8s.io`` and send the SPDY bytes in binary messages; older ones, and
newer ones when that fails, upgrade the HTTP connection itself (``Upgrade: SPDY/3.1``,
``X-Stream-Protocol-Version``). aiohttp passes only WebSocket upgrades on, so the raw upgrade
takes the connection over from aiohttp's protocol once the ``101`` is written.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Final

from aiohttp import WSMsgType, web

from setpoint.cluster.apiserver.http.spdy.frames import ProtocolError
from setpoint.cluster.apiserver.http.spdy.session import SpdySession, Stream

TUNNEL_PREFIX: Final = "SPDY/3.1+"
#: Chunks received and not yet taken by the session before the connection stops being read.
RECEIVED_CHUNKS: Final = 16
UPGRADE: Final = "SPDY/3.1"
PROTOCOL_HEADER: Final = "X-Stream-Protocol-Version"


def tunnel_protocols(subprotocols: tuple[str, ...]) -> tuple[str, ...]:
    """The WebSocket subprotocols that carry SPDY for each streaming protocol."""
    return tuple(TUNNEL_PREFIX + protocol for protocol in subprotocols)


def wants_spdy(request: web.BaseRequest) -> bool:
    """Whether ``request`` asks for a raw SPDY upgrade."""
    return request.headers.get("Upgrade", "").lower() == UPGRADE.lower()


def wants_tunnel(request: web.BaseRequest, subprotocols: tuple[str, ...]) -> bool:
    """Whether ``request`` is a WebSocket offering SPDY tunnelled for one of ``subprotocols``."""
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return False
    offered = {
        p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()
    }
    return bool(offered & set(tunnel_protocols(subprotocols)))


async def serve_tunnel(
    request: web.BaseRequest,
    subprotocols: tuple[str, ...],
    on_stream: Callable[[Stream], Awaitable[None]],
) -> web.StreamResponse:
    """A SPDY session over a WebSocket (binary messages carry the bytes)."""
    socket = web.WebSocketResponse(
        protocols=tunnel_protocols(subprotocols), autoping=True, heartbeat=None
    )
    await socket.prepare(request)
    session = SpdySession(socket.send_bytes, on_stream)
    try:
        async for message in socket:
            if message.type == WSMsgType.BINARY:
                await session.feed(message.data)
    except ProtocolError:
        pass
    finally:
        await session.close()
        await socket.close()
    return socket


class _RawConnection(asyncio.Protocol):
    """The upgraded connection's protocol: bytes in go to the session, with back-pressure both
    ways (reading pauses while the session has not taken what came; writers wait while the
    socket's buffer is full)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._reading_paused = False
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self._queue.put_nowait(data)
        if self._queue.qsize() >= RECEIVED_CHUNKS and not self._reading_paused:
            self._reading_paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool:
        self._queue.put_nowait(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._queue.put_nowait(None)
        self._writable.set()
        self.closed.set()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    async def next(self) -> bytes | None:
        data = await self._queue.get()
        if self._reading_paused and self._queue.qsize() < RECEIVED_CHUNKS // 2:
            self._reading_paused = False
            with contextlib.suppress(RuntimeError):
                self._transport.resume_reading()
        return data

    async def write(self, data: bytes) -> None:
        if self._transport.is_closing():
            raise ConnectionError("connection closed")
        self._transport.write(data)
        await self._writable.wait()


async def serve_upgrade(
    request: web.BaseRequest,
    subprotocols: tuple[str, ...],
    on_stream: Callable[[Stream], Awaitable[None]],
) -> web.StreamResponse:
    """A SPDY session over the HTTP connection itself, after ``101 Switching Protocols``."""
    offered = [
        p.strip()
        for value in request.headers.getall(PROTOCOL_HEADER, [])
        for p in value.split(",")
        if p.strip()
    ]
    chosen = next((p for p in offered if p in subprotocols), None)
    transport: Any = request.transport
    if chosen is None or transport is None:
        from setpoint.cluster.apiserver import status_errors

        raise status_errors.bad_request(
            f"unable to upgrade: unable to negotiate protocol: client supports {offered}, server "
            f"accepts {list(subprotocols)}"
        )
    response = web.StreamResponse(
        status=101,
        headers={"Connection": "Upgrade", "Upgrade": UPGRADE, PROTOCOL_HEADER: chosen},
    )
    await response.prepare(request)
    original = transport.get_protocol()
    connection = _RawConnection(transport)
    transport.set_protocol(connection)
    session = SpdySession(connection.write, on_stream)
    try:
        while (data := await connection.next()) is not None:
            await session.feed(data)
    except ProtocolError:
        pass
    finally:
        await session.close()
        # aiohttp's protocol gets the connection back to see it close (and clean up).
        with contextlib.suppress(Exception):
            transport.set_protocol(original)
        with contextlib.suppress(Exception):
            transport.close()
    return response
