"""RecentWrites: pruning stays cheap while the watch lags behind many writes."""

from __future__ import annotations

from setpoint.api.gvk import ObjectKey
from setpoint.cache import CachedObject
from setpoint.cache.recent_writes import RecentWrites


def obj(name: str, rv: int) -> CachedObject:
    return CachedObject.from_dict(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": str(rv)},
        }
    )


def test_pruning_waits_for_the_records_to_double_while_the_watch_lags() -> None:
    recent = RecentWrites()
    looked_up: list[ObjectKey] = []

    def lookup(key: ObjectKey) -> CachedObject | None:
        looked_up.append(key)
        return None

    watch_at = 0
    for i in range(1, 101):
        recent.record(obj(f"o{i}", i))
        recent.prune_if_above(10, lookup, lambda ns: watch_at)
    # Nothing caught up: each prune kept everything, and the next one waited for twice as many
    # (11, 23, 47, 95 records scanned), instead of scanning all of them on every write.
    assert len(recent) == 100
    assert len(looked_up) == 11 + 23 + 47 + 95
    watch_at = 95
    for i in range(101, 201):
        recent.record(obj(f"o{i}", i))
        recent.prune_if_above(10, lookup, lambda ns: watch_at)
    # The watch caught up with the first 95 writes: the next prune (at 191) dropped them.
    assert len(recent) < 110
    assert recent.get(ObjectKey("ns", "o200"), None, lambda ns: watch_at) == obj("o200", 200)
    assert recent.get(ObjectKey("ns", "o50"), None, lambda ns: watch_at) is None
