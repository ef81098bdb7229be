"""The ``portforward.k8s.io`` protocol over SPDY, as the kubelet serves it to kubectl.

For each local connection kubectl opens two streams with the same ``requestid`` header: an
``error`` stream (it closes its own side at once and reads what the server reports) and a
``data`` stream, both naming the ``port``. Once both are there, the server connects to the
pod's port and copies bytes both ways until either side ends; a connection that cannot be made
is reported on the error stream in the kubelet's words ("error forwarding port 8080 to pod web,
uid …: …"). Ports are reached as :mod:`..pod_ports` says.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Final

from setpoint.cluster.apiserver.http.pod_ports import PortUnreachable, connect_to_pod
from setpoint.cluster.apiserver.http.spdy.session import READ_CHUNK, Stream

PROTOCOL: Final = "portforward.k8s.io"
#: How long the first stream of a pair waits for the other (the kubelet's stream creation timeout).
PAIR_TIMEOUT_SECONDS: Final = 30.0


class PortForwardStreams:
    """Pairs the streams of one connection and forwards each pair (see the module docstring)."""

    def __init__(self, pod: Mapping[str, Any]) -> None:
        self._pod = pod
        self._pairs: dict[str, dict[str, Stream]] = {}
        self._ready: dict[str, asyncio.Event] = {}

    def _request_id(self, stream: Stream) -> str:
        request_id = stream.headers.get("requestid")
        if request_id:
            return request_id
        # Clients before request ids: a data stream follows its error stream (ids 2 apart).
        offset = 2 if stream.headers.get("streamtype") == "data" else 0
        return str(stream.stream_id - offset)

    async def on_stream(self, stream: Stream) -> None:
        """Handle one new stream: the second of a pair forwards, the first waits for it."""
        kind = stream.headers.get("streamtype", "")
        if kind not in ("data", "error"):
            await stream.close()
            return
        request_id = self._request_id(stream)
        pair = self._pairs.setdefault(request_id, {})
        pair[kind] = stream
        ready = self._ready.setdefault(request_id, asyncio.Event())
        if len(pair) < 2:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PAIR_TIMEOUT_SECONDS):
                    await ready.wait()
            if not ready.is_set():
                await stream.close()
                self._pairs.pop(request_id, None)
                self._ready.pop(request_id, None)
            return
        ready.set()
        self._pairs.pop(request_id, None)
        self._ready.pop(request_id, None)
        await self._forward(pair["data"], pair["error"])

    async def _forward(self, data: Stream, error: Stream) -> None:
        try:
            port = int(data.headers.get("port", ""))
        except ValueError:
            await error.write(f"invalid port {data.headers.get('port', '')!r}".encode())
            await error.close()
            await data.close()
            return
        try:
            reader, writer = await connect_to_pod(self._pod, port)
        except PortUnreachable as unreachable:
            await error.write(str(unreachable).encode())
            await error.close()
            await data.close()
            return

        async def to_pod() -> None:
            while chunk := await data.read():
                writer.write(chunk)
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
            with contextlib.suppress(OSError):
                writer.write_eof()

        async def from_pod() -> None:
            with contextlib.suppress(ConnectionError):
                while chunk := await reader.read(READ_CHUNK):
                    await data.write(chunk)

        upstream = asyncio.create_task(to_pod())
        try:
            await from_pod()
        finally:
            upstream.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await upstream
            writer.close()
            data.discard()
            await data.close()
            await error.close()
