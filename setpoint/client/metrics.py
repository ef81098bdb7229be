"""Prometheus metrics of the API client, and the one registry all setpoint metrics live in.

``REGISTRY`` is shared by the whole runtime: the work queue and reconcile metrics
(``setpoint.controller.metrics``) register into it and the manager serves it on ``/metrics``.
Names and labels follow client-go's metrics as controller-runtime exports them, so dashboards
written for Go operators work unchanged.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = [
    "RATE_LIMITER_DURATION",
    "REGISTRY",
    "REQUESTS_TOTAL",
    "REQUEST_DURATION",
    "REQUEST_RETRIES",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
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
