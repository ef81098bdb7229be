"""Prometheus metrics of work queues and controllers, with controller-runtime's names and labels.

Everything registers into ``setpoint.client.metrics.REGISTRY``, the one registry the manager
serves, so dashboards written for Go operators work unchanged.

Work queue metrics are on the hot path (every add/get/done), so they are plain integer fields and
small bucket arrays on each queue (:class:`WorkQueueStats`), turned into Prometheus samples only
when the registry is scraped (:class:`WorkQueueCollector`). Gauges such as the depth or the
longest-running processor are computed at scrape time instead of being updated on every change.
Only named queues are exported (as in client-go), so throwaway queues cost nothing.
"""

from __future__ import annotations

import functools
import threading
import weakref
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from setpoint.client.metrics import REGISTRY

__all__ = [
    "ACTIVE_WORKERS",
    "MAX_CONCURRENT_RECONCILES",
    "RECONCILE_ERRORS",
    "RECONCILE_PANICS",
    "RECONCILE_TIME",
    "RECONCILE_TIMEOUTS",
    "RECONCILE_TIME_BUCKETS",
    "RECONCILE_TOTAL",
    "TERMINAL_RECONCILE_ERRORS",
    "WORKQUEUE_DURATION_BUCKETS",
    "ActiveCount",
    "FastHistogram",
    "WorkQueueCollector",
    "WorkQueueStats",
    "active_count",
    "register_queue",
]

# controller-runtime's reconcile latency buckets (pkg/internal/controller/metrics): fine-grained
# below a second where most reconciles land, coarse up to a minute.
RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
# client-go / controller-runtime work queue buckets: ExponentialBuckets(10e-9, 10, 12),
# i.e. 10 ns to 1000 s.
WORKQUEUE_DURATION_BUCKETS = tuple(1e-8 * 10.0**i for i in range(12))

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller",
    ["controller", "result"],
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller",
    ["controller"],
    registry=REGISTRY,
)
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors_total",
    "Total number of terminal reconciliation errors per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics_total",
    "Total number of reconciliation panics per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIMEOUTS = Counter(
    "controller_runtime_reconcile_timeouts_total",
    "Total number of reconciliation timeouts per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=RECONCILE_TIME_BUCKETS,
    registry=REGISTRY,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ["controller"],
    registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller",
    ["controller"],
    registry=REGISTRY,
)


class ActiveCount:
    """Reconciles in flight in one controller, as a plain int (``count += 1``/``-= 1`` on the
    hot path); ``controller_runtime_active_workers`` sums the counts of the controllers of a
    name when it is scraped."""

    __slots__ = ("__weakref__", "count")

    def __init__(self) -> None:
        self.count = 0


_active_lock = threading.Lock()
_active_by_name: dict[str, weakref.WeakSet[ActiveCount]] = {}


def active_count(controller: str) -> ActiveCount:
    """A new in-flight count for a controller named ``controller``, exported (summed with the
    other controllers of that name, as their shared gauge did) until it is garbage-collected."""
    count = ActiveCount()
    with _active_lock:
        counts = _active_by_name.get(controller)
        if counts is None:
            counts = _active_by_name[controller] = weakref.WeakSet()
            ACTIVE_WORKERS.labels(controller).set_function(functools.partial(_sum_active, counts))
        counts.add(count)
    return count


def _sum_active(counts: weakref.WeakSet[ActiveCount]) -> float:
    with _active_lock:
        live = list(counts)
    return float(sum(count.count for count in live))


class FastHistogram:
    """A lock-free histogram for one event loop: a bucket array, a sum and a count."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...] = WORKQUEUE_DURATION_BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last slot is +Inf
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        """Record one value (``le`` semantics: a value equal to a bound falls in that bucket)."""
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, float]]:
        """Prometheus ``(le, cumulative count)`` pairs, ending with ``+Inf``."""
        out: list[tuple[str, float]] = []
        total = 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            total += n
            out.append((_float_label(bound), float(total)))
        out.append(("+Inf", float(total + self.counts[-1])))
        return out


def _float_label(value: float) -> str:
    return repr(float(value))


class WorkQueueStats:
    """The counters one queue keeps for its metrics; gauges come from ``snapshot`` at scrape."""

    __slots__ = ("__weakref__", "adds", "controller", "depths", "name", "queue_duration",
                 "retries", "snapshot", "work_duration")  # fmt: skip

    def __init__(
        self,
        name: str,
        controller: str,
        snapshot: Callable[[], tuple[int, float, float]],
        depths: Callable[[], dict[int, int]] | None = None,
    ) -> None:
        self.name = name
        self.controller = controller
        self.adds = 0
        self.retries = 0
        self.queue_duration = FastHistogram()
        self.work_duration = FastHistogram()
        # () -> (depth, unfinished work seconds, longest running processor seconds)
        self.snapshot = snapshot
        # () -> {priority: depth}; None: everything at priority 0
        self.depths = depths


class WorkQueueCollector(Collector):
    """Turns the stats of every live named queue into controller-runtime's workqueue families."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: weakref.WeakSet[WorkQueueStats] = weakref.WeakSet()

    def add(self, stats: WorkQueueStats) -> None:
        """Export ``stats`` until its queue is garbage-collected."""
        with self._lock:
            self._stats.add(stats)

    def collect(self) -> Iterator[Any]:
        with self._lock:
            live = list(self._stats)
        labels = ["name", "controller"]
        depth = GaugeMetricFamily(
            "workqueue_depth", "Current depth of workqueue", labels=[*labels, "priority"]
        )
        adds = CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by workqueue", labels=labels
        )
        retries = CounterMetricFamily(
            "workqueue_retries", "Total number of retries handled by workqueue", labels=labels
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads. One can deduce "
            "the number of stuck threads by observing the rate at which this increases.",
            labels=labels,
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=labels,
        )
        queue_duration = HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            labels=labels,
        )
        work_duration = HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels=labels,
        )
        for stats in _merge_same_labels(live):
            values = [stats.name, stats.controller]
            queue_depth, unfinished_s, longest_s = stats.snapshot()
            by_priority = stats.depths() if stats.depths is not None else {0: queue_depth}
            for priority, count in sorted(by_priority.items(), reverse=True):
                depth.add_metric([*values, str(priority)], count)
            adds.add_metric(values, stats.adds)
            retries.add_metric(values, stats.retries)
            unfinished.add_metric(values, unfinished_s)
            longest.add_metric(values, longest_s)
            queue_duration.add_metric(
                values, stats.queue_duration.cumulative(), stats.queue_duration.sum
            )
            work_duration.add_metric(
                values, stats.work_duration.cumulative(), stats.work_duration.sum
            )
        yield from (depth, adds, retries, unfinished, longest, queue_duration, work_duration)


def _merge_same_labels(stats: list[WorkQueueStats]) -> list[WorkQueueStats]:
    """Sum queues that share ``(name, controller)`` so the exposition has no duplicate series."""
    by_labels: dict[tuple[str, str], list[WorkQueueStats]] = {}
    for item in stats:
        by_labels.setdefault((item.name, item.controller), []).append(item)
    merged: list[WorkQueueStats] = []
    for (name, controller), group in by_labels.items():
        if len(group) == 1:
            merged.append(group[0])
            continue
        snapshots = [g.snapshot() for g in group]
        total = (
            sum(s[0] for s in snapshots),
            sum(s[1] for s in snapshots),
            max(s[2] for s in snapshots),
        )
        depths: dict[int, int] = {}
        for g in group:
            for priority, count in (g.depths() if g.depths else {0: g.snapshot()[0]}).items():
                depths[priority] = depths.get(priority, 0) + count
        combined = WorkQueueStats(
            name,
            controller,
            functools.partial(_same, total),
            functools.partial(_same_depths, depths),
        )
        combined.adds = sum(g.adds for g in group)
        combined.retries = sum(g.retries for g in group)
        for attr in ("queue_duration", "work_duration"):
            target: FastHistogram = getattr(combined, attr)
            for g in group:
                source: FastHistogram = getattr(g, attr)
                target.counts = [a + b for a, b in zip(target.counts, source.counts, strict=True)]
                target.sum += source.sum
                target.count += source.count
        merged.append(combined)
    return merged


def _same(value: tuple[int, float, float]) -> tuple[int, float, float]:
    return value


def _same_depths(value: dict[int, int]) -> dict[int, int]:
    return value


_COLLECTOR = WorkQueueCollector()
REGISTRY.register(_COLLECTOR)


def register_queue(stats: WorkQueueStats) -> None:
    """Export a queue's stats into the shared registry (called by named queues)."""
    _COLLECTOR.add(stats)
