"""Prometheus metrics of the API client, and the one registry all setpoint metrics live in.

``REGISTRY`` is shared by the whole runtime: the work queue and reconcile metrics
(``setpoint.controller.metrics``) register into it and the manager serves it on ``/metrics``.
Names and labels follow client-go's metrics as controller-runtime exports them, so dashboards
written for Go operators work unchanged.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from functools import partial
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = [
    "RATE_LIMITER_DURATION",
    "REGISTRY",
    "REQUESTS_TOTAL",
    "REQUEST_DURATION",
    "REQUEST_RETRIES",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
    "counter_incrementer",
    "histogram_observer",
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
# each call that the metric is a labelled child and walk the bucket bounds one by one; bound
# once to a child's value cells, an observation is one bisection and two cell increments. The
# cells are the child's own, so what /metrics shows is unchanged.


def histogram_observer(child: Histogram) -> Callable[[float], None]:
    """A callable ``observe(amount)`` for one labelled ``Histogram`` child, equal to its
    ``observe`` for every amount that is not NaN (sizes and durations never are)."""
    bounds = getattr(child, "_upper_bounds", None)
    total: Any = getattr(child, "_sum", None)
    cells = getattr(child, "_buckets", None)
    if (
        not isinstance(bounds, list)
        or not bounds
        or bounds[-1] != float("inf")
        or not hasattr(total, "inc")
        or not isinstance(cells, list)
        or len(cells) != len(bounds)
    ):
        return child.observe  # a prometheus_client whose insides differ: its own method
    bounds_tuple = tuple(bounds)
    add_to_sum = total.inc
    bucket_incs = tuple(cell.inc for cell in cells)

    def observe(amount: float) -> None:
        add_to_sum(amount)
        # The first bound >= amount: buckets are stored per interval, cumulated when collected.
        bucket_incs[bisect_left(bounds_tuple, amount)](1)

    return observe


def counter_incrementer(child: Counter) -> Callable[[], None]:
    """A callable ``inc()`` adding 1 to one labelled ``Counter`` child, as its ``inc()``."""
    cell: Any = getattr(child, "_value", None)
    if not hasattr(cell, "inc"):
        return child.inc
    return partial(cell.inc, 1)
