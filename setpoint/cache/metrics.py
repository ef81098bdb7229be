"""Prometheus metrics of the cache: how many objects (and bytes) it holds, lists and watches.

The number and size of cached objects is what decides an operator's memory, and
controller-runtime users have long asked for it (#3182): ``setpoint_cache_objects`` and
``setpoint_cache_bytes`` by ``group``, ``version``, ``kind`` (summed over the informers of a kind;
the bytes are an estimate within a few percent of the measured memory, see
``cached_object.estimated_size``). Values are read from the live informers when Prometheus scrapes
(no bookkeeping on the event path); they go into the runtime's one registry
(``setpoint.client.metrics.REGISTRY``), which the manager serves on ``/metrics``.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from setpoint.api.gvk import ResourceInfo
from setpoint.cache.cached_object import CachedObject, estimated_size
from setpoint.client.metrics import REGISTRY

__all__ = ["CACHE_COLLECTOR", "CacheCollector", "CountedInformer"]


class _CountedReflector(Protocol):
    lists: int
    watches: int


class CountedInformer(Protocol):
    """What the collector reads of an informer (a ``SharedInformer``), and nothing more: so
    that the informer module imports this one and not the other way round."""

    description: str
    resource: ResourceInfo

    @property
    def store(self) -> Collection[CachedObject]: ...

    @property
    def reflectors(self) -> Sequence[_CountedReflector]: ...


class CacheCollector(Collector):
    """Collects per-resource object counts, list and watch totals from registered informers."""

    def __init__(self) -> None:
        # The registry is scraped from a worker thread while the event loop creates informers:
        # the set is only changed or copied under this lock.
        self._lock = threading.Lock()
        self._informers: weakref.WeakSet[CountedInformer] = weakref.WeakSet()

    def track(self, informer: CountedInformer) -> None:
        """Report ``informer`` while it is alive."""
        with self._lock:
            self._informers.add(informer)

    def describe(self) -> Iterable[Metric]:
        """Nothing up front: the metrics are built at scrape time."""
        return []

    def collect(self) -> Iterable[Metric]:
        """The current values: objects and bytes per kind, lists and watches per resource."""
        objects: Counter[tuple[str, str, str]] = Counter()
        sizes: Counter[tuple[str, str, str]] = Counter()
        lists: Counter[str] = Counter()
        watches: Counter[str] = Counter()
        with self._lock:
            informers = list(self._informers)
        for informer in informers:
            name = informer.description
            gvk = informer.resource.gvk
            kind = (gvk.group, gvk.version, gvk.kind)
            objects[kind] += len(informer.store)
            sizes[kind] += sum(estimated_size(obj) for obj in informer.store)
            for reflector in informer.reflectors:
                lists[name] += reflector.lists
                watches[name] += reflector.watches
        labels = ["group", "version", "kind"]
        gauge = GaugeMetricFamily(
            "setpoint_cache_objects", "Objects held by the informer cache.", labels=labels
        )
        size = GaugeMetricFamily(
            "setpoint_cache_bytes",
            "Estimated memory of the objects held by the informer cache, in bytes.",
            labels=labels,
        )
        for key in objects:
            gauge.add_metric(list(key), objects[key])
            size.add_metric(list(key), sizes[key])
        listed = CounterMetricFamily(
            "setpoint_cache_lists", "Completed lists (initial and relists).", labels=["resource"]
        )
        watched = CounterMetricFamily(
            "setpoint_cache_watches", "Watch requests opened.", labels=["resource"]
        )
        for name in lists:
            listed.add_metric([name], lists[name])
            watched.add_metric([name], watches[name])
        return [gauge, size, listed, watched]


#: The collector registered in the shared registry; informers add themselves to it.
CACHE_COLLECTOR = CacheCollector()
REGISTRY.register(CACHE_COLLECTOR)
