"""A small server speaking the endpoints the console reads (docs/runtime.md, "Tracing
reconciles", and docs/local-cluster.md, "Audit feed"): an operator's
``/debug/setpoint/controllers`` and ``/debug/setpoint/trace`` (+ ``/stream``), and the local
cluster's ``/debug/setpoint/audit`` (list and ``watch=1``). Tests put records in; the console
reads them over HTTP exactly as it reads the real endpoints."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web


def rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def controller(name: str, for_kind: str, **overrides: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "forKind": for_kind,
        "queue": {"depth": 0, "oldestAgeSeconds": None, "inBackoff": []},
        "workers": {"max": 1, "busy": 0},
        "reconciles": {
            "total": 0,
            "errors": 0,
            "requeues": 0,
            "perSecond1m": 0.0,
            "latencySeconds": {"p50": None, "p90": None, "p99": None},
        },
    }
    entry.update(overrides)
    return entry


class ContractFake:
    """Records in, contract JSON and SSE out."""

    def __init__(self, name: str = "fake-operator", *, serve_audit: bool = True) -> None:
        self.name = name
        self.serve_audit = serve_audit  # False: a cluster without the feed (404)
        self.controllers: list[dict[str, Any]] = []
        self.trace: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []
        self.clock = datetime.now(UTC) - timedelta(minutes=1)
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _tick(self, seconds: float) -> str:
        self.clock += timedelta(seconds=seconds)
        return rfc3339(self.clock)

    def add_trace(self, record: dict[str, Any], after: float = 0.01) -> dict[str, Any]:
        full = {
            "seq": len(self.trace) + 1,
            "time": self._tick(after),
            "controller": None,
            "reconcileId": None,
            **record,
        }
        self.trace.append(full)
        self._changed.set()
        return full

    def add_audit(self, record: dict[str, Any], after: float = 0.01) -> dict[str, Any]:
        full = {
            "seq": len(self.audit) + 1,
            "time": self._tick(after),
            "auditID": f"a{len(self.audit)}",
            "user": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "userAgent": "kubectl/v1.32.0",
            "fieldManager": None,
            "responseCode": 200,
            "resourceVersion": None,
            "diff": None,
            **record,
        }
        self.audit.append(full)
        self._changed.set()
        return full

    # --- HTTP -----------------------------------------------------------------------------

    async def _controllers(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "operator": {
                    "name": self.name,
                    "identity": "fake_1",
                    "startTime": rfc3339(self.clock),
                },
                "leaderElection": {
                    "enabled": True,
                    "leader": True,
                    "lease": "default/fake",
                    "holder": "fake_1",
                },
                "controllers": self.controllers,
                "informers": [
                    {"kind": c["forKind"], "namespace": None, "objects": 3, "synced": True}
                    for c in self.controllers
                ],
                "trace": {
                    "enabled": True,
                    "capacity": 10000,
                    "size": len(self.trace),
                    "lastSeq": len(self.trace),
                },
            }
        )

    @staticmethod
    def _matches(record: dict[str, Any], request: web.Request) -> bool:
        namespace = request.query.get("namespace")
        if not namespace:
            return True
        where = record.get("objectRef") or record.get("object") or {}
        return bool(where.get("namespace") == namespace)

    async def _trace(self, request: web.Request) -> web.Response:
        since = int(request.query.get("since", "0"))
        records = [r for r in self.trace if r["seq"] > since and self._matches(r, request)]
        return web.json_response(
            {"lastSeq": len(self.trace), "capacity": 10000, "dropped": False, "records": records}
        )

    async def _stream(
        self, request: web.Request, source: list[dict[str, Any]], event: str
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        sent = int(request.query.get("since", "0"))
        while True:
            for record in source[sent:]:
                sent = record["seq"]
                if self._matches(record, request):
                    data = json.dumps(record)
                    await response.write(f"id: {sent}\nevent: {event}\ndata: {data}\n\n".encode())
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), 15)
            except TimeoutError:
                await response.write(b": keepalive\n\n")

    async def _trace_stream(self, request: web.Request) -> web.StreamResponse:
        return await self._stream(request, self.trace, "record")

    async def _audit(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("watch"):
            return await self._stream(request, self.audit, "audit")
        since = int(request.query.get("since", "0"))
        records = [r for r in self.audit if r["seq"] > since and self._matches(r, request)]
        return web.json_response({"lastSeq": len(self.audit), "records": records})

    async def start(self, port: int = 0) -> str:
        app = web.Application()
        app.router.add_get("/debug/setpoint/controllers", self._controllers)
        app.router.add_get("/debug/setpoint/trace", self._trace)
        app.router.add_get("/debug/setpoint/trace/stream", self._trace_stream)
        if self.serve_audit:
            app.router.add_get("/debug/setpoint/audit", self._audit)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port or self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
