"""Prometheus metrics of the API client, and the one registry all setpoint metrics live in.

``REGISTRY`` is shared by the whole runtime: the work queue and reconcile metrics
(``setpoint.controller.metrics``) register into it and the manager serves it on ``/metrics``.
Names and labels follow client-go's metrics as controller-runtime exports them, so dashboards
written for Go operators work unchanged.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.values import MutexValue

__all__ = [
    "RATE_LIMITER_DURATION",
    "REGISTRY",
    "REQUESTS_TOTAL",
    "REQUEST_DURATION",
    "REQUEST_RETRIES",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
    "CounterCell",
    "HistogramCell",
    "RequestMetrics",
]

REGISTRY = CollectorRegistry()

# client-go's latency buckets (k8s.io/component-base/metrics/prometheus/restclient).
LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

REQUESTS_TOTAL = Counter(
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
    registry=REGISTRY,
)

REQUEST_DURATION = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)

RATE_LIMITER_DURATION = Histogram(
    "rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)

# client-go's size buckets: 64 B to 16 MiB, x4 each.
SIZE_BUCKETS = (
    64.0,
    256.0,
    512.0,
    1024.0,
    4096.0,
    16384.0,
    65536.0,
    262144.0,
    1048576.0,
    4194304.0,
    16777216.0,
)

REQUEST_SIZE = Histogram(
    "rest_client_request_size_bytes",
    "Request size in bytes. Broken down by verb and host.",
    ["verb", "host"],
    buckets=SIZE_BUCKETS,
    registry=REGISTRY,
)

RESPONSE_SIZE = Histogram(
    "rest_client_response_size_bytes",
    "Response size in bytes. Broken down by verb and host.",
    ["verb", "host"],
    buckets=SIZE_BUCKETS,
    registry=REGISTRY,
)

REQUEST_RETRIES = Counter(
    "rest_client_request_retries_total",
    "Number of request retries, partitioned by status code, verb, and host.",
    ["code", "verb", "host"],
    registry=REGISTRY,
)


# Every request makes four observations. prometheus_client's observe() and inc() re-check on
# each call that the metric is a labelled child, walk the bucket bounds one by one and take one
# lock per value cell (seven per request). RequestMetrics writes the same cells of the same
# children, so /metrics is unchanged, with one bisection per histogram and one lock per answer.
# That lock orders the writes of every RequestMetrics; a program that also wrote these children
# itself (observe() from another thread) could lose an update, so nothing else writes them.
_CELLS_LOCK = threading.Lock()


def _plain_cells(*cells: Any) -> bool:
    """Whether these are in-process value cells (not the multiprocess mode's files)."""
    return all(type(cell) is MutexValue for cell in cells)


class _HistogramCells:
    __slots__ = ("bounds", "buckets", "child", "total")

    def __init__(self, child: Histogram) -> None:
        self.child = child
        self.bounds = tuple(getattr(child, "_upper_bounds", ()))
        self.total: Any = getattr(child, "_sum", None)
        self.buckets: tuple[Any, ...] = tuple(getattr(child, "_buckets", ()))

    @property
    def plain(self) -> bool:
        return (
            len(self.bounds) == len(self.buckets) > 0
            and self.bounds[-1] == math.inf
            and _plain_cells(self.total, *self.buckets)
        )


class CounterCell:
    """One labelled Counter child, counted up by one without prometheus_client's per-call
    checks: the same value cell under the same lock as the child's own ``inc()`` (which it
    falls back to in the multiprocess mode)."""

    __slots__ = ("_cell", "_child")

    def __init__(self, child: Counter) -> None:
        self._child = child
        cell = getattr(child, "_value", None)
        self._cell = cell if _plain_cells(cell) else None

    def inc(self) -> None:
        """Add one."""
        cell = self._cell
        if cell is None:
            self._child.inc()
            return
        with cell._lock:
            cell._value += 1


class HistogramCell:
    """One labelled Histogram child, observed with one bisection of its bounds instead of
    prometheus_client's walk over them, into the same cells under the same locks as the
    child's own ``observe()`` (its fallback in the multiprocess mode). Values are never NaN
    (they are durations)."""

    __slots__ = ("_cells", "_child")

    def __init__(self, child: Histogram) -> None:
        self._child = child
        cells = _HistogramCells(child)
        self._cells = cells if cells.plain else None

    def observe(self, value: float) -> None:
        """Record one value (``le``: a value equal to a bound falls in that bound's bucket)."""
        cells = self._cells
        if cells is None:
            self._child.observe(value)
            return
        total, bucket = cells.total, cells.buckets[bisect_left(cells.bounds, value)]
        with total._lock:
            total._value += value
        with bucket._lock:
            bucket._value += 1


class RequestMetrics:
    """The request metrics of one HTTP method on one host: size, answer code, latency, answer
    size. Amounts are never NaN (they are sizes and durations)."""

    __slots__ = ("_answers", "_duration", "_fast", "_host", "_method", "_request", "_response")

    def __init__(self, method: str, host: str) -> None:
        self._method = method
        self._host = host
        self._request = _HistogramCells(REQUEST_SIZE.labels(method, host))
        self._response = _HistogramCells(RESPONSE_SIZE.labels(method, host))
        self._duration = _HistogramCells(REQUEST_DURATION.labels(method, host))
        # status code -> the rest_client_requests_total child, and its value cell when plain
        self._answers: dict[int, tuple[Counter, Any]] = {}
        self._fast = self._request.plain and self._response.plain and self._duration.plain

    def _answer_cell(self, code: int) -> tuple[Counter, Any]:
        child = REQUESTS_TOTAL.labels(str(code), self._method, self._host)
        cell = getattr(child, "_value", None)
        found = self._answers[code] = (child, cell if self._fast and _plain_cells(cell) else None)
        return found

    def unanswered(self, request_size: int | None) -> None:
        """A request that got no answer: only its size (None: it had no body)."""
        if request_size is not None:
            self._request.child.observe(request_size)

    def answered(
        self, request_size: int | None, code: int, seconds: float, response_size: int | None
    ) -> None:
        """A request whose answer ``code`` came after ``seconds``; sizes are None for a request
        without a body and for an answer whose body was not read."""
        child, cell = self._answers.get(code) or self._answer_cell(code)
        request, duration, response = self._request, self._duration, self._response
        if cell is None:
            if request_size is not None:
                request.child.observe(request_size)
            child.inc()
            duration.child.observe(seconds)
            if response_size is not None:
                response.child.observe(response_size)
            return
        duration_bucket = duration.buckets[bisect_left(duration.bounds, seconds)]
        with _CELLS_LOCK:
            cell._value += 1
            duration.total._value += seconds
            duration_bucket._value += 1
            if request_size is not None:
                request.total._value += request_size
                request.buckets[bisect_left(request.bounds, request_size)]._value += 1
            if response_size is not None:
                response.total._value += response_size
                response.buckets[bisect_left(response.bounds, response_size)]._value += 1
