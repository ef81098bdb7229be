"""Operators' debug endpoints: their controllers' state over time, and their reconcile traces.

Each ``--operator URL`` (the operator's metrics address; ``/metrics`` at its end is dropped) is
polled once a second for ``/debug/setpoint/controllers``. An endpoint that stops answering is
shown as *gone* (with the reason and since when) and as *up* again when it answers again; the
queue depth of every controller is kept for the last :data:`HISTORY_POINTS` polls, for the
chart. Traces (``/debug/setpoint/trace`` and its ``/stream``) are read on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from setpoint.console.event_stream import read_events

__all__ = [
    "CONTROLLERS_PATH",
    "HISTORY_POINTS",
    "TRACE_PATH",
    "OperatorEndpoint",
    "OperatorWatch",
    "normalize_operator_url",
]

CONTROLLERS_PATH = "/debug/setpoint/controllers"
TRACE_PATH = "/debug/setpoint/trace"
#: How often each endpoint is polled.
POLL_SECONDS = 1.0
#: How long one poll may take before the endpoint counts as gone.
POLL_TIMEOUT_SECONDS = 2.0
#: Polls kept for the queue-depth chart (ten minutes at one a second).
HISTORY_POINTS = 600


def normalize_operator_url(url: str) -> str:
    """``http://host:port`` from what a user passes (a trailing ``/metrics`` or ``/`` dropped);
    raises ValueError naming the problem for anything but an http(s) URL with a host."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"--operator {url!r}: only http:// and https:// URLs are served")
    if not parts.hostname:
        raise ValueError(f"--operator {url!r}: no host")
    path = parts.path.rstrip("/").removesuffix("/metrics").rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class OperatorEndpoint:
    """One operator as last seen: ``state`` is connecting, up or gone."""

    url: str
    state: str = "connecting"
    since: str = field(default_factory=_now)
    reason: str | None = None
    snapshot: dict[str, Any] | None = None
    history: deque[tuple[float, dict[str, int]]] = field(
        default_factory=lambda: deque(maxlen=HISTORY_POINTS)
    )

    def _set_state(self, state: str, reason: str | None) -> None:
        if state != self.state:
            self.since = _now()
        self.state, self.reason = state, reason

    def record(self, snapshot: dict[str, Any]) -> None:
        """A successful poll."""
        self._set_state("up", None)
        self.snapshot = snapshot
        depths = {
            str(c.get("name")): int((c.get("queue") or {}).get("depth") or 0)
            for c in snapshot.get("controllers") or []
            if isinstance(c, dict)
        }
        self.history.append((time.time(), depths))

    def lost(self, reason: str) -> None:
        """A failed poll: the endpoint is gone (its last snapshot is kept, marked stale)."""
        self._set_state("gone", reason)

    def to_json(self) -> dict[str, Any]:
        """What the Controllers view reads."""
        return {
            "url": self.url,
            "state": self.state,
            "since": self.since,
            "reason": self.reason,
            "snapshot": self.snapshot,
            "history": [{"time": t, "depths": d} for t, d in self.history],
        }

    def for_kinds(self) -> dict[str, str]:
        """Controller name -> the Kind it reconciles (from the last snapshot)."""
        controllers = (self.snapshot or {}).get("controllers") or []
        # forKind is "<apiVersion>/<Kind>" ("v1/Pod", "apps/v1/Deployment"), or null.
        return {
            str(c.get("name")): str(c.get("forKind") or "").rsplit("/", 1)[-1]
            for c in controllers
            if isinstance(c, dict)
        }


class OperatorWatch:
    """Polls every endpoint in the background while the console runs."""

    def __init__(self, urls: list[str], session: aiohttp.ClientSession) -> None:
        self.endpoints = [OperatorEndpoint(url) for url in urls]
        self.session = session
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start polling."""
        self._tasks = [asyncio.create_task(self._poll(e)) for e in self.endpoints]

    async def stop(self) -> None:
        """Stop polling."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def poll_once(self, endpoint: OperatorEndpoint) -> None:
        """One poll of one endpoint."""
        timeout = aiohttp.ClientTimeout(total=POLL_TIMEOUT_SECONDS)
        try:
            async with self.session.get(endpoint.url + CONTROLLERS_PATH, timeout=timeout) as got:
                if got.status != 200:
                    endpoint.lost(f"{CONTROLLERS_PATH} answered HTTP {got.status}")
                    return
                snapshot = await got.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as failed:
            reason = f"{type(failed).__name__}: {failed}" if str(failed) else type(failed).__name__
            endpoint.lost(reason)
            return
        if isinstance(snapshot, dict):
            endpoint.record(snapshot)
        else:
            endpoint.lost(f"{CONTROLLERS_PATH} answered something other than an object")

    async def _poll(self, endpoint: OperatorEndpoint) -> None:
        while True:
            await self.poll_once(endpoint)
            await asyncio.sleep(POLL_SECONDS)

    async def trace_records(
        self, endpoint: OperatorEndpoint, *, namespace: str | None, since: int = 0
    ) -> dict[str, Any]:
        """``GET /debug/setpoint/trace``: ``{"state": ok|off|gone, "lastSeq", "records"}``."""
        params = {"since": str(since), **({"namespace": namespace} if namespace else {})}
        timeout = aiohttp.ClientTimeout(total=POLL_TIMEOUT_SECONDS * 2)
        try:
            async with self.session.get(
                endpoint.url + TRACE_PATH, params=params, timeout=timeout
            ) as got:
                if got.status == 404:
                    return {"state": "off", "message": "tracing is off in this operator"}
                if got.status != 200:
                    return {"state": "gone", "message": f"HTTP {got.status}"}
                answer = await got.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as failed:
            return {"state": "gone", "message": str(failed) or type(failed).__name__}
        if not isinstance(answer, dict):
            return {"state": "gone", "message": "not an object"}
        return {
            "state": "ok",
            "lastSeq": int(answer.get("lastSeq") or 0),
            "dropped": bool(answer.get("dropped")),
            "records": [r for r in answer.get("records") or [] if isinstance(r, dict)],
        }

    async def trace_stream(
        self, endpoint: OperatorEndpoint, *, namespace: str | None, since: int
    ) -> AsyncIterator[dict[str, Any]]:
        """``/debug/setpoint/trace/stream``: the records after ``since`` as they come."""
        params = {"since": str(since), **({"namespace": namespace} if namespace else {})}
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=POLL_TIMEOUT_SECONDS)
        async with self.session.get(
            endpoint.url + TRACE_PATH + "/stream", params=params, timeout=timeout
        ) as got:
            if got.status != 200:
                raise aiohttp.ClientResponseError(
                    got.request_info, (), status=got.status, message="trace stream refused"
                )
            async for name, data in read_events(got):
                if name == "record":
                    record = json.loads(data)
                    if isinstance(record, dict):
                        yield record
