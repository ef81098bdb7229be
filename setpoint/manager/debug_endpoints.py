"""`/debug/setpoint/...`: the operator's state and reconcile trace as JSON, on the metrics server.

- ``GET /debug/setpoint/controllers``: per controller its queue (depth, oldest item's age, the
  keys in backoff with their retries and last error), workers, reconcile counts, rate and
  latency percentiles; the informers' sizes; leader election; whether the trace is on. It reads
  what the runtime keeps anyway (work queues, the Prometheus metrics), so it works with the
  trace off.
- ``GET /debug/setpoint/trace?since=SEQ&kind=&namespace=&name=&controller=&limit=``: the trace
  records after ``since`` (:mod:`setpoint.controller.trace`); 404 when tracing is off.
- ``GET /debug/setpoint/trace/stream?...``: the same records as Server-Sent Events, then each new
  one as it is recorded (``: keepalive`` every 15 s).

The shapes are those of the console's contract (``docs/runtime.md``, "Tracing reconciles").
They are served where ``/metrics`` is: loopback by default outside a pod, so only the user's
own processes read them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec
from aiohttp import web

from setpoint.controller import metrics
from setpoint.controller.controller import Controller
from setpoint.controller.trace.records import TraceFilter, TraceRecord, rfc3339_micro

if TYPE_CHECKING:
    from setpoint.cache import Cache
    from setpoint.client.client import Client
    from setpoint.controller.trace import ReconcileTrace
    from setpoint.manager.leader_election import LeaderElector


class ManagerView(Protocol):
    """What the debug endpoints read of a manager (:class:`~setpoint.manager.Manager`)."""

    trace: ReconcileTrace | None
    identity: str
    start_time: float | None
    leader_election: bool
    leader_election_id: str | None
    leader_election_namespace: str | None
    elector: LeaderElector | None

    @property
    def debug_peers(self) -> Sequence[ManagerView]: ...
    @property
    def controllers(self) -> list[Controller]: ...
    @property
    def connected(self) -> bool: ...
    @property
    def started(self) -> bool: ...
    @property
    def is_leader(self) -> bool: ...
    @property
    def client(self) -> Client: ...
    @property
    def cache(self) -> Cache: ...


__all__ = [
    "CONTROLLERS_PATH",
    "KEEPALIVE_SECONDS",
    "TRACE_PATH",
    "TRACE_STREAM_PATH",
    "add_debug_routes",
]

CONTROLLERS_PATH: Final = "/debug/setpoint/controllers"
TRACE_PATH: Final = "/debug/setpoint/trace"
TRACE_STREAM_PATH: Final = "/debug/setpoint/trace/stream"
#: A stream with nothing to send writes a comment this often (proxies cut idle streams).
KEEPALIVE_SECONDS: Final = 15.0
#: The reconcile rate is averaged over this window, from samples taken this often.
RATE_WINDOW_SECONDS: Final = 60.0
RATE_SAMPLE_SECONDS: Final = 5.0

_ENCODER = msgspec.json.Encoder()
_RESULTS: Final = ("success", "error", "requeue", "requeue_after")


def add_debug_routes(app: web.Application, manager: ManagerView) -> None:
    """Serve `manager`'s (and its debug peers') debug endpoints on `app`."""
    endpoints = _DebugEndpoints(manager)
    app.router.add_get(CONTROLLERS_PATH, endpoints.controllers)
    app.router.add_get(TRACE_PATH, endpoints.trace)
    app.router.add_get(TRACE_STREAM_PATH, endpoints.stream)
    app.on_startup.append(endpoints.start_sampling)
    app.on_shutdown.append(endpoints.end_streams)
    app.on_cleanup.append(endpoints.stop_sampling)


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        status=status, body=_ENCODER.encode(body) + b"\n", content_type="application/json"
    )


class _BadQuery(ValueError):
    """A query parameter that cannot be used (the message names it)."""


def _whole(query: Mapping[str, str], name: str, default: int | None, minimum: int) -> int | None:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise _BadQuery(f"{name}: must be a whole number, got {text!r}") from None
    if value < minimum:
        raise _BadQuery(f"{name}: must be at least {minimum}, got {value}")
    return value


class _DebugEndpoints:
    def __init__(self, manager: ManagerView) -> None:
        self.manager = manager
        # (monotonic time, {controller: reconciles so far}) samples for the 1-minute rate.
        self._samples: deque[tuple[float, dict[str, float]]] = deque()
        self._sampler: asyncio.Task[None] | None = None
        # Set when the server stops: open streams end (else stopping waits for them).
        self._closing = False

    # -- what is shown ------------------------------------------------------------------------

    def _managers(self) -> list[ManagerView]:
        return [self.manager, *self.manager.debug_peers]

    def _controllers(self) -> list[Controller]:
        return [c for m in self._managers() for c in m.controllers]

    async def controllers(self, request: web.Request) -> web.Response:
        totals = _samples_by_controller(metrics.RECONCILE_TOTAL)
        self._sample(totals)
        buckets = _histogram_buckets(metrics.RECONCILE_TIME)
        manager = self.manager
        trace = manager.trace
        body = {
            "operator": {
                "name": str(getattr(manager, "name", "") or manager.identity),
                "identity": manager.identity,
                "startTime": rfc3339_micro(manager.start_time) if manager.start_time else None,
            },
            "leaderElection": _leader_election(manager),
            "controllers": [
                self._controller(controller, totals, buckets) for controller in self._controllers()
            ],
            "informers": [informer for m in self._managers() for informer in _informers(m)],
            "trace": {
                "enabled": trace is not None,
                "capacity": trace.capacity if trace is not None else 0,
                "size": len(trace.ring) if trace is not None else 0,
                "lastSeq": trace.ring.last_seq if trace is not None else 0,
            },
        }
        return _json(body)

    def _controller(
        self,
        controller: Controller,
        totals: Mapping[str, Mapping[str, float]],
        buckets: Mapping[str, list[tuple[float, float]]],
    ) -> dict[str, Any]:
        queue = controller.queue
        counts = totals.get(controller.name, {})
        total = sum(counts.get(result, 0.0) for result in _RESULTS)
        in_backoff = []
        for key, remaining in sorted(queue.delayed_keys(), key=lambda item: item[1]):
            retries = queue.num_requeues(key)
            error = controller.failures.get(key)
            if retries or error is not None:
                in_backoff.append(
                    {
                        "key": str(key),
                        "retries": retries,
                        "nextAttemptInSeconds": round(remaining, 3),
                        "lastError": error,
                    }
                )
        latency = buckets.get(controller.name, [])
        api_version, kind = controller.for_kind or ("", "")
        return {
            "name": controller.name,
            "forKind": f"{api_version}/{kind}" if kind else None,
            "queue": {
                "depth": len(queue),
                "oldestAgeSeconds": _rounded(queue.oldest_wait()),
                "inBackoff": in_backoff,
            },
            "workers": {"max": controller.max_concurrent_reconciles, "busy": queue.in_flight},
            "reconciles": {
                "total": int(total),
                "errors": int(counts.get("error", 0.0)),
                "requeues": int(counts.get("requeue", 0.0) + counts.get("requeue_after", 0.0)),
                "perSecond1m": round(self._rate(controller.name, total), 3),
                "latencySeconds": {
                    "p50": _quantile(latency, 0.5),
                    "p90": _quantile(latency, 0.9),
                    "p99": _quantile(latency, 0.99),
                },
            },
        }

    # -- the reconcile rate -------------------------------------------------------------------

    def _sample(self, totals: Mapping[str, Mapping[str, float]]) -> None:
        now = time.monotonic()
        self._samples.append((now, {name: sum(counts.values()) for name, counts in totals.items()}))
        while len(self._samples) > 1 and self._samples[1][0] <= now - RATE_WINDOW_SECONDS:
            self._samples.popleft()

    def _rate(self, name: str, total: float) -> float:
        """Reconciles per second over the last minute (or since the first sample)."""
        if not self._samples:
            return 0.0
        since, counts = self._samples[0]
        elapsed = time.monotonic() - since
        if elapsed <= 0:
            return 0.0
        return max(0.0, total - counts.get(name, 0.0)) / elapsed

    async def start_sampling(self, app: web.Application) -> None:
        self._sampler = asyncio.create_task(self._sample_forever(), name="debug rate sampler")

    async def end_streams(self, app: web.Application) -> None:
        self._closing = True
        for manager in self._managers():
            if manager.trace is not None:
                manager.trace.ring.wake()

    async def stop_sampling(self, app: web.Application) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sampler
            self._sampler = None

    async def _sample_forever(self) -> None:
        while True:
            self._sample(_samples_by_controller(metrics.RECONCILE_TOTAL))
            await asyncio.sleep(RATE_SAMPLE_SECONDS)

    # -- the trace ----------------------------------------------------------------------------

    def _trace_query(
        self, request: web.Request
    ) -> tuple[int, int | None, Callable[[TraceRecord], bool] | None]:
        query = request.query
        since = _whole(query, "since", 0, 0)
        limit = _whole(query, "limit", None, 1)
        assert since is not None
        return since, limit, TraceFilter.accepting(query)

    async def trace(self, request: web.Request) -> web.Response:
        trace = self.manager.trace
        if trace is None:
            return _json({"message": _TRACE_OFF}, 404)
        try:
            since, limit, match = self._trace_query(request)
        except _BadQuery as error:
            return _json({"message": str(error)}, 400)
        ring = trace.ring
        last_seq = ring.last_seq
        records, dropped = ring.since(since, match, limit)
        body = b"".join(
            (
                b'{"lastSeq":%d,"capacity":%d,"dropped":%s,"records":['
                % (last_seq, ring.capacity, b"true" if dropped else b"false"),
                b",".join(record.to_json(seq) for seq, record in records),
                b"]}\n",
            )
        )
        return web.Response(body=body, content_type="application/json")

    async def stream(self, request: web.Request) -> web.StreamResponse:
        trace = self.manager.trace
        if trace is None:
            return _json({"message": _TRACE_OFF}, 404)
        try:
            since, _, match = self._trace_query(request)
            last_event = request.headers.get("Last-Event-ID")
            if last_event:
                since = _whole({"since": last_event}, "since", 0, 0) or 0
        except _BadQuery as error:
            return _json({"message": str(error)}, 400)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        ring = trace.ring
        last = since
        with contextlib.suppress(ConnectionResetError):
            while not self._closing:
                records, _ = ring.since(last)
                if records:
                    last = records[-1][0]
                    chunk = b"".join(
                        b"id: %d\nevent: record\ndata: %s\n\n" % (seq, record.to_json(seq))
                        for seq, record in records
                        if match is None or match(record)
                    )
                    if chunk:
                        await response.write(chunk)
                    continue
                if not await ring.wait_after(last, KEEPALIVE_SECONDS) and not self._closing:
                    await response.write(b": keepalive\n\n")
        return response


_TRACE_OFF: Final = (
    "reconcile tracing is off: start the operator with `setpoint run --trace` "
    "(on by default under `setpoint dev` and `setpoint demo`) or Manager(trace_capacity=N)"
)


def _leader_election(manager: ManagerView) -> dict[str, Any]:
    enabled = bool(manager.leader_election)
    lease = None
    if enabled and manager.connected:
        namespace = manager.leader_election_namespace or manager.client.default_namespace
        lease = f"{namespace}/{manager.leader_election_id or ''}"
    elector = manager.elector
    holder = (elector.observed_holder or None) if elector is not None else None
    if not enabled and manager.started:
        holder = manager.identity
    return {"enabled": enabled, "leader": manager.is_leader, "lease": lease, "holder": holder}


def _informers(manager: ManagerView) -> Iterable[dict[str, Any]]:
    if not manager.connected:
        return []
    found = []
    for informer in manager.cache.informers:
        resource = informer.resource
        namespaces = sorted(informer.namespaces)
        found.append(
            {
                "kind": f"{resource.gvk.api_version}/{resource.kind}",
                "namespace": ",".join(namespaces) if namespaces else None,
                "objects": len(informer.store),
                "synced": informer.has_synced,
            }
        )
    return found


def _samples_by_controller(metric: Any) -> dict[str, dict[str, float]]:
    """``{controller: {result: value}}`` of a counter labelled by controller and result."""
    found: dict[str, dict[str, float]] = {}
    for family in metric.collect():
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            labels = sample.labels
            found.setdefault(labels.get("controller", ""), {})[labels.get("result", "")] = (
                sample.value
            )
    return found


def _histogram_buckets(metric: Any) -> dict[str, list[tuple[float, float]]]:
    """``{controller: [(upper bound, cumulative count), ...]}`` of a histogram."""
    found: dict[str, list[tuple[float, float]]] = {}
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                found.setdefault(sample.labels.get("controller", ""), []).append(
                    (bound, sample.value)
                )
    for buckets in found.values():
        buckets.sort()
    return found


def _quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """The ``q`` quantile of a histogram, interpolated within its bucket as Prometheus'
    ``histogram_quantile`` does (None without observations)."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf"):
                return lower
            if count == below:
                return bound
            return round(lower + (bound - lower) * (rank - below) / (count - below), 6)
        lower, below = bound, count
    return lower


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
