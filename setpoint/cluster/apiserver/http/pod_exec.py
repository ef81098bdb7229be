"""``pods/exec`` and ``pods/attach`` over WebSocket, as kubectl 1.30+ speaks them
(``v5.channel.k8s.io``, and v4).

Every message (binary, or text as the official Python client sends stdin) carries the channel
in byte 0 (0 stdin, 1 stdout, 2 stderr, 3 status,
4 resize; v5 adds 255, "close this channel"), the rest the payload. The session is connected
to a :class:`~.remote_process.RemoteProcess`: for exec a command run where the kubelet says
(the pod's working directory and the container's environment), for attach the container's
running process. Its end is reported on channel 3 as a ``Status``, which kubectl turns into
its exit code; a client that goes away ends the session (an exec'd command is then killed).
Older kubectl speaks SPDY: see :mod:`.spdy.remote_command`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import WSMsgType, web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.remote_process import (
    CommandProcess,
    ProcessStarter,
    StartFailed,
)
from setpoint.cluster.apiserver.http.spdy.remote_command import PROTOCOLS as SPDY_PROTOCOLS
from setpoint.cluster.apiserver.http.spdy.remote_command import RemoteCommand
from setpoint.cluster.apiserver.http.spdy.transports import serve_upgrade, wants_spdy

PROTOCOLS: Final = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def exec_container(pod: Mapping[str, Any], requested: str) -> str:
    """The container an exec targets (``container`` or the only one), or a 400."""
    names: list[str] = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    # Init and ephemeral containers are named explicitly (``podHasContainerWithName``).
    init: list[str] = [
        c.get("name", "")
        for key in ("initContainers", "ephemeralContainers")
        for c in (pod.get("spec") or {}).get(key) or []
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
    """Upgrade to a WebSocket (or SPDY), run ``command`` and stream it (module docstring)."""
    return await serve_remote(request, CommandProcess.starter(command, cwd, env))


async def serve_remote(request: web.BaseRequest, start: ProcessStarter) -> web.StreamResponse:
    """Upgrade to a WebSocket and connect it to the process ``start`` gives (an exec'd
    command, or an attached container); kubectl's SPDY (before 1.30) goes to
    :mod:`.spdy.remote_command`."""
    if wants_spdy(request):
        remote = RemoteCommand(request.query, start)
        return await serve_upgrade(request, SPDY_PROTOCOLS, remote.on_stream)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise status_errors.bad_request("Upgrade request required")
    query = request.query
    socket = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, heartbeat=None)
    await socket.prepare(request)
    v5 = socket.ws_protocol == PROTOCOLS[0]
    tty = query.get("tty") == "true"
    try:
        process = await start(query.get("stdin") == "true", tty)
    except StartFailed as failed:
        await socket.send_bytes(bytes([ERROR]) + json.dumps(failed.status).encode())
        await socket.close()
        return socket
    wanted = {STDOUT: query.get("stdout", "true") == "true"}
    wanted[STDERR] = query.get("stderr", "true") == "true" and not tty

    async def pump() -> None:
        async for name, chunk in process.output():
            channel = STDOUT if name == "stdout" or tty else STDERR
            if wanted[channel]:
                await socket.send_bytes(bytes([channel]) + chunk)
        await socket.send_bytes(bytes([ERROR]) + json.dumps(await process.status()).encode())

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
            if channel == STDIN:
                await process.write_stdin(payload)
            elif channel == CLOSE and v5 and payload[:1] == bytes([STDIN]):
                process.close_stdin()

    # The session ends with the output (then the Status is sent), or when the client goes.
    output = asyncio.create_task(pump())
    feeder = asyncio.create_task(feed())
    try:
        await asyncio.wait([output, feeder], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (output, feeder):
            task.cancel()
        for task in (output, feeder):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        process.abandon()
        await socket.close()
    return socket
