"""Reaching a pod's port for port-forward (over WebSocket or SPDY), as the kubelet does.

A ``--run-pods`` container's processes share the host's network, so a pod's ports are reached
on 127.0.0.1; a simulated pod listens nowhere. A connection that cannot be made is reported in
the kubelet's words ("error forwarding port 8080 to pod web, uid …: …").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any, Final

#: Where a pod's ports are reached (see the module docstring).
POD_HOST: Final = "127.0.0.1"


class PortUnreachable(Exception):
    """The pod's port refused the connection; the message is what the error stream says."""


async def connect_to_pod(
    pod: Mapping[str, Any], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to ``port`` of ``pod``; :class:`PortUnreachable` when none can be made."""
    try:
        return await asyncio.open_connection(POD_HOST, port)
    except OSError as exc:
        meta = pod.get("metadata") or {}
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise PortUnreachable(
            f"error forwarding port {port} to pod {meta.get('name', '')}, uid "
            f"{meta.get('uid', '')}: failed to connect to localhost:{port} inside namespace: "
            f"dial tcp4 {POD_HOST}:{port}: connect: {why.lower()}"
        ) from exc
