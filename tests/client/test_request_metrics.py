"""RequestMetrics writes what prometheus_client's own observe()/inc() would, on both its paths."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from setpoint.client.metrics import REGISTRY, CounterCell, HistogramCell, RequestMetrics

NAMES = (
    "rest_client_request_size_bytes",
    "rest_client_response_size_bytes",
    "rest_client_request_duration_seconds",
)


def _samples(host: str) -> dict[tuple[str, str], float]:
    found: dict[tuple[str, str], float] = {}
    for family in REGISTRY.collect():
        for sample in family.samples:
            if sample.labels.get("host") != host or sample.name.endswith("_created"):
                continue
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()) if k != "host")
            found[(sample.name, labels)] = sample.value
    return found


def _record(metrics: RequestMetrics) -> None:
    # Bounds are inclusive: 64 bytes and 0.005 s fall into the buckets they bound.
    metrics.answered(64, 200, 0.005, 64)
    metrics.answered(65, 200, 0.0051, None)
    metrics.answered(None, 404, 100.0, 20_000_000)
    metrics.answered(0, 200, 0.0, None)
    metrics.unanswered(300)
    metrics.unanswered(None)


@pytest.mark.parametrize("fast", [True, False])
def test_request_metrics_match_prometheus_client(fast: bool) -> None:
    host = f"request-metrics-{fast}:6443"
    metrics = RequestMetrics("PATCH", host)
    assert metrics._fast  # the in-process cells of the pinned prometheus_client
    metrics._fast = fast
    _record(metrics)
    samples = _samples(host)
    size = "rest_client_request_size_bytes"
    assert samples[(f"{size}_bucket", "le=64.0,verb=PATCH")] == 2  # 0 and 64
    assert samples[(f"{size}_bucket", "le=256.0,verb=PATCH")] == 3
    assert samples[(f"{size}_bucket", "le=512.0,verb=PATCH")] == 4
    assert samples[(f"{size}_count", "verb=PATCH")] == 4
    assert samples[(f"{size}_sum", "verb=PATCH")] == 64 + 65 + 0 + 300
    reply = "rest_client_response_size_bytes"
    assert samples[(f"{reply}_bucket", "le=64.0,verb=PATCH")] == 1
    assert samples[(f"{reply}_bucket", "le=1.6777216e+07,verb=PATCH")] == 1
    assert samples[(f"{reply}_bucket", "le=+Inf,verb=PATCH")] == 2
    latency = "rest_client_request_duration_seconds"
    assert samples[(f"{latency}_bucket", "le=0.005,verb=PATCH")] == 2
    assert samples[(f"{latency}_bucket", "le=0.025,verb=PATCH")] == 3
    assert samples[(f"{latency}_bucket", "le=60.0,verb=PATCH")] == 3
    assert samples[(f"{latency}_bucket", "le=+Inf,verb=PATCH")] == 4
    assert samples[(f"{latency}_count", "verb=PATCH")] == 4
    assert samples[("rest_client_requests_total", "code=200,method=PATCH")] == 3
    assert samples[("rest_client_requests_total", "code=404,method=PATCH")] == 1


def _exposed(registry: CollectorRegistry) -> dict[tuple[str, str], float]:
    return {
        (sample.name, ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))): sample.value
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def _pair(
    kind: type[Counter] | type[Histogram],
) -> tuple[Any, Any, CollectorRegistry, CollectorRegistry]:
    """The same metric in two registries: one written by prometheus_client, one by a cell."""
    registries = CollectorRegistry(), CollectorRegistry()
    extra: dict[str, Any] = {"buckets": (0.005, 0.01, 0.5, 60.0)} if kind is Histogram else {}
    made = [kind("cell_metric", "Help.", ["controller"], registry=r, **extra) for r in registries]
    return made[0].labels("c"), made[1].labels("c"), *registries


# Values on a bound fall into that bound's bucket; 0 into the first; above all into +Inf.
OBSERVED = (0.0, 0.005, 0.0050001, 0.01, 0.3, 60.0, 61.0, 1e9)


@pytest.mark.parametrize("plain", [True, False])
def test_histogram_cell_matches_prometheus_client(plain: bool) -> None:
    own, celled, own_registry, cell_registry = _pair(Histogram)
    cell = HistogramCell(celled)
    assert cell._cells is not None  # the in-process cells of the pinned prometheus_client
    if not plain:
        cell._cells = None  # as in the multiprocess mode: the child's own observe()
    for value in OBSERVED:
        own.observe(value)
        cell.observe(value)
    exposed = _exposed(cell_registry)
    assert exposed == _exposed(own_registry)
    assert exposed[("cell_metric_bucket", "controller=c,le=0.005")] == 2
    assert exposed[("cell_metric_bucket", "controller=c,le=60.0")] == 6
    assert exposed[("cell_metric_count", "controller=c")] == len(OBSERVED)


@pytest.mark.parametrize("plain", [True, False])
def test_counter_cell_matches_prometheus_client(plain: bool) -> None:
    own, celled, own_registry, cell_registry = _pair(Counter)
    cell = CounterCell(celled)
    assert cell._cell is not None
    if not plain:
        cell._cell = None
    for _ in range(3):
        own.inc()
        cell.inc()
    celled.inc()  # the child's own inc() still adds to the same count
    own.inc()
    assert _exposed(cell_registry) == _exposed(own_registry)
    assert _exposed(cell_registry)[("cell_metric_total", "controller=c")] == 4
