"""``pods/exec`` over WebSocket, as kubectl 1.30+ speaks it (``v5.channel.k8s.io``, and v4).

Every message (binary, or text as the official Python client sends stdin) carries the channel
in byte 0 (0 stdin, 1 stdout, 2 stderr, 3 status,
4 resize; v5 adds 255, "close this channel"), the rest the payload. The command runs where the
kubelet says (the pod's working directory and the container's environment) and its exit is
reported on channel 3 as a ``Status``, which kubectl turns into its exit code. Older kubectl
speaks SPDY: see :mod:`.spdy.remote_command`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import WSMsgType, web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.exec_command import exit_status, start_command, start_failure
from setpoint.cluster.apiserver.http.spdy.remote_command import PROTOCOLS as SPDY_PROTOCOLS
from setpoint.cluster.apiserver.http.spdy.remote_command import RemoteCommand
from setpoint.cluster.apiserver.http.spdy.transports import serve_upgrade, wants_spdy

PROTOCOLS: Final = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
READ_CHUNK: Final = 64 * 1024


def exec_container(pod: Mapping[str, Any], requested: str) -> str:
    """The container an exec targets (``container`` or the only one), or a 400."""
    names: list[str] = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    init: list[str] = [
        c.get("name", "") for c in (pod.get("spec") or {}).get("initContainers") or []
    ]
    name = pod["metadata"]["name"]
    if not requested:
        if len(names) != 1:
            raise status_errors.bad_request(
                f"a container name must be specified for pod {name}, choose one of: "
                f"[{' '.join(names)}]"
            )
        return names[0]
    if requested not in names and requested not in init:
        raise status_errors.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


async def serve_exec(
    request: web.BaseRequest, command: list[str], cwd: str, env: dict[str, str]
) -> web.StreamResponse:
    """Upgrade to a WebSocket, run ``command`` and stream it (see the module docstring);
    kubectl's SPDY (before 1.30) goes to :mod:`.spdy.remote_command`."""
    if wants_spdy(request):
        remote = RemoteCommand(request.query, command, cwd, env)
        return await serve_upgrade(request, SPDY_PROTOCOLS, remote.on_stream)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise status_errors.bad_request("Upgrade request required")
    query = request.query
    want_stdin = query.get("stdin") == "true"
    tty = query.get("tty") == "true"
    socket = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, heartbeat=None)
    await socket.prepare(request)
    v5 = socket.ws_protocol == PROTOCOLS[0]
    try:
        process = await start_command(command, cwd, env, stdin=want_stdin, tty=tty)
    except OSError as exc:
        failure = start_failure(command, exc)
        await socket.send_bytes(bytes([ERROR]) + json.dumps(failure).encode())
        await socket.close()
        return socket

    async def pump(stream: asyncio.StreamReader | None, channel: int) -> None:
        if stream is None:
            return
        while chunk := await stream.read(READ_CHUNK):
            await socket.send_bytes(bytes([channel]) + chunk)

    async def feed() -> None:
        async for message in socket:
            if message.type == WSMsgType.BINARY:
                data: bytes = message.data
            elif message.type == WSMsgType.TEXT:
                # The official Python client writes str stdin as text frames; upstream reads
                # every frame's bytes alike (channel byte first), whatever its opcode.
                data = message.data.encode()
            else:
                continue
            if not data:
                continue
            channel, payload = data[0], data[1:]
            if channel == STDIN and process.stdin is not None:
                process.stdin.write(payload)
                with contextlib.suppress(ConnectionError):
                    await process.stdin.drain()
            elif (
                channel == CLOSE
                and v5
                and payload[:1] == bytes([STDIN])
                and process.stdin is not None
            ):
                process.stdin.close()

    feeder = asyncio.create_task(feed())
    try:
        await asyncio.gather(pump(process.stdout, STDOUT), pump(process.stderr, STDERR))
        status = exit_status(await process.wait())
        await socket.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
    finally:
        feeder.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await feeder
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await socket.close()
    return socket
