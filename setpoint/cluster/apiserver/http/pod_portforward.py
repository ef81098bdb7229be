"""``pods/portforward`` over WebSocket (``v4.channel.k8s.io``), as the kubelet serves it.

What the Python clients speak (``kubernetes.stream.portforward``): the ports come in the
``ports`` query parameter (repeated or comma-separated); port *i* gets channel ``2i`` for its
data and ``2i+1`` for errors, and the server opens both by writing the port number (two bytes,
little endian) on each. Then bytes on the data channel go to a connection to the pod's port and
back; a connection that cannot be made is reported on the error channel in the kubelet's words
("error forwarding port 8080 to pod web, uid …: …"). The pod's ports are reached on
127.0.0.1: under ``--run-pods`` a container's processes share the host's network; a simulated
pod listens nowhere, so every forward to it reports a refused connection.

kubectl speaks SPDY here (raw, or tunnelled over WebSocket since 1.31): see :mod:`.spdy`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import WSMsgType, web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.pod_ports import PortUnreachable, connect_to_pod
from setpoint.cluster.apiserver.http.spdy.port_forward import PROTOCOL as SPDY_PROTOCOL
from setpoint.cluster.apiserver.http.spdy.port_forward import PortForwardStreams
from setpoint.cluster.apiserver.http.spdy.transports import (
    serve_tunnel,
    serve_upgrade,
    wants_spdy,
    wants_tunnel,
)

PROTOCOLS: Final = ("v4.channel.k8s.io",)
READ_CHUNK: Final = 64 * 1024


def requested_ports(query: Mapping[str, Any]) -> list[int]:
    """The ports of a port-forward request; a 400 naming the bad one."""
    values = query.getall("ports", []) if hasattr(query, "getall") else [query.get("ports")]
    ports: list[int] = []
    for value in values:
        if not value:
            raise status_errors.bad_request('query parameter "port" cannot be empty')
        for text in str(value).split(","):
            try:
                port = int(text)
            except ValueError:
                raise status_errors.bad_request(
                    f'unable to parse "{value}" as a port: invalid syntax'
                ) from None
            if not 1 <= port <= 65535:
                raise status_errors.bad_request(f'port "{value}" must be > 0 and < 65536')
            ports.append(port)
    if not ports:
        raise status_errors.bad_request('query parameter "port" is required')
    return ports


async def serve_port_forward(
    request: web.BaseRequest, pod: Mapping[str, Any]
) -> web.StreamResponse:
    """Upgrade to a WebSocket and forward each requested port (see the module docstring);
    kubectl's SPDY (raw or tunnelled) goes to :mod:`.spdy.port_forward`."""
    if wants_tunnel(request, (SPDY_PROTOCOL,)):
        return await serve_tunnel(request, (SPDY_PROTOCOL,), PortForwardStreams(pod).on_stream)
    if wants_spdy(request):
        return await serve_upgrade(request, (SPDY_PROTOCOL,), PortForwardStreams(pod).on_stream)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise status_errors.bad_request("Upgrade request required")
    ports = requested_ports(request.query)
    socket = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, heartbeat=None)
    await socket.prepare(request)
    writers: dict[int, asyncio.StreamWriter] = {}
    pumps: list[asyncio.Task[None]] = []
    send_lock = asyncio.Lock()

    async def send(channel: int, payload: bytes) -> None:
        async with send_lock:
            await socket.send_bytes(bytes([channel]) + payload)

    async def pump(index: int, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(READ_CHUNK):
                await send(2 * index, chunk)

    try:
        for index, port in enumerate(ports):
            prefix = port.to_bytes(2, "little")
            await send(2 * index, prefix)
            await send(2 * index + 1, prefix)
        for index, port in enumerate(ports):
            try:
                reader, writer = await connect_to_pod(pod, port)
            except PortUnreachable as unreachable:
                await send(2 * index + 1, str(unreachable).encode())
                continue
            writers[index] = writer
            pumps.append(asyncio.create_task(pump(index, reader)))

        async def close_when_done(copies: list[asyncio.Task[None]]) -> None:
            # Every pod-side connection closed (or none made): the forward is over.
            await asyncio.gather(*copies, return_exceptions=True)
            await socket.close()

        pumps.append(asyncio.create_task(close_when_done(list(pumps))))
        async for message in socket:
            if message.type != WSMsgType.BINARY or not message.data:
                continue
            channel, payload = message.data[0], message.data[1:]
            target = writers.get(channel // 2)
            if channel % 2 == 0 and target is not None and payload:
                target.write(payload)
                with contextlib.suppress(ConnectionError):
                    await target.drain()
    finally:
        for task in pumps:
            task.cancel()
        for task in pumps:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for writer in writers.values():
            writer.close()
        await socket.close()
    return socket
