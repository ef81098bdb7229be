"""Expectations, own-write suppression and read-your-own-writes records, as units."""

from __future__ import annotations

from setpoint.api.clock import FakeClock
from setpoint.api.gvk import ObjectKey
from setpoint.cache.cached_object import CachedObject
from setpoint.cache.recent_writes import RecentWrites
from setpoint.controller.expectations import Expectations
from setpoint.controller.handlers import EnqueueRequestForObject
from setpoint.controller.own_writes import OwnWrites
from setpoint.controller.source import InformerSource
from setpoint.controller.workqueue import PRIORITY_LOW, PRIORITY_NORMAL, WorkQueue

from .fake_informer import FakeInformer
from .objects import cached


def test_expectations_wait_for_each_observation_or_expire() -> None:
    clock = FakeClock()
    expectations = Expectations(ttl=300, clock=clock)
    assert expectations.satisfied("rs")
    expectations.expect("rs", creations=2, deletions=1)
    expectations.observe_creation("rs")
    expectations.observe_deletion("rs")
    assert not expectations.satisfied("rs")
    expectations.observe_creation("rs")
    assert expectations.satisfied("rs")
    expectations.expect("rs", creations=1)
    clock.advance(301)
    assert expectations.satisfied("rs")  # a lost event delays, never blocks


def obj(name: str, rv: str, uid: str = "u1") -> CachedObject:
    return CachedObject.from_dict(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv},
        }
    )


def test_recent_writes_win_until_the_store_or_the_watch_catches_up() -> None:
    recent = RecentWrites()
    key = ObjectKey("ns", "a")
    recent.record(obj("a", "7"))
    assert recent.get(key, obj("a", "5"), lambda ns: 6) == obj("a", "7")
    assert recent.get(key, None, lambda ns: 6) == obj("a", "7")  # created, not listed yet
    assert recent.get(key, obj("a", "9"), lambda ns: 9) == obj("a", "9")  # newer in the store
    assert len(recent) == 0
    recent.record(obj("b", "8"))
    # The watch passed 8 and the store has no b: it was deleted since; the store is right.
    assert recent.get(ObjectKey("ns", "b"), None, lambda ns: 8) is None
    recent.record_deleted(key, "u1")
    stored = {"a": obj("a", "9"), "c": obj("c", "3", "u3")}
    merged = recent.merge(list(stored.values()), lambda k: stored.get(k.name), lambda ns: 9, bool)
    assert [o.name for o in merged] == ["c"]  # deleted by us, not yet by the watch


def test_an_encoded_write_is_decoded_only_when_read_and_a_failed_decode_reads_the_store() -> None:
    recent = RecentWrites()
    decoded: list[str] = []

    def decode(raw: bytes) -> CachedObject:
        name, rv = raw.decode().split(":")
        decoded.append(name)
        return obj(name, rv)

    recent.record_raw("ns", "a", "u1", "7", decode, b"a:7")
    recent.record_raw("ns", "b", "u1", "8", decode, b"b:8")
    recent.prune(lambda key: None, lambda ns: 7)  # the watch passed a's write, not b's
    assert decoded == [] and len(recent) == 1
    assert recent.get(ObjectKey("ns", "b"), obj("b", "5"), lambda ns: 7) == obj("b", "8")
    assert decoded == ["b"]

    def rejected(raw: bytes) -> CachedObject:
        raise ValueError("the informer's transform rejects it")

    recent.record_raw("ns", "c", "u1", "9", rejected, b"c:9")
    assert recent.get(ObjectKey("ns", "c"), obj("c", "4"), lambda ns: 8) == obj("c", "4")
    assert len(recent) == 1  # b's record only


def test_own_writes_match_once_by_uid_and_resource_version() -> None:
    own = OwnWrites()
    own.record("u1", "7")
    assert not own.is_own(obj("a", "6"))
    assert own.is_own(obj("a", "7"))
    assert not own.is_own(obj("a", "7"))  # once


async def test_sources_drop_own_write_events_and_list_at_low_priority() -> None:
    informer = FakeInformer.holding(cached("listed"))
    queue: WorkQueue[ObjectKey] = WorkQueue()
    source = InformerSource(informer, EnqueueRequestForObject())
    source.own_writes = OwnWrites()
    await source.start(queue)
    assert queue.depth_by_priority()[PRIORITY_LOW] == 1
    queue.get_nowait()
    written = obj("mine", "12", "u-mine")
    source.own_writes.record(written.uid, "12")
    informer.upsert(written)
    assert len(queue) == 0
    informer.upsert(obj("theirs", "13", "u-theirs"))
    assert len(queue) == 1


async def test_listed_objects_no_controller_has_acted_on_go_ahead_of_the_settled_backlog() -> None:
    """A listed object whose spec has no status yet, or whose status.observedGeneration lags,
    is queued at normal priority; settled ones (and kinds without a generation, and objects of
    a metadata-only informer, whose status is not kept) at low."""
    informer = FakeInformer.holding(
        cached("settled", generation=2, status={"observedGeneration": 2}),
        cached("no-convention", generation=2, status={"phase": "Ready"}),
        cached("configmap"),
        cached("new", generation=1, spec={"size": 1}),
        cached("changed", generation=3, status={"observedGeneration": 2}),
        cached("metadata-only", generation=1),  # as a metadata-only informer keeps it
    )
    queue: WorkQueue[ObjectKey] = WorkQueue()
    await InformerSource(informer, EnqueueRequestForObject()).start(queue)
    assert queue.depth_by_priority() == {PRIORITY_NORMAL: 2, PRIORITY_LOW: 4}
    first_two = {queue.get_nowait().name, queue.get_nowait().name}
    assert first_two == {"new", "changed"}


def test_an_event_that_beats_the_write_answer_is_held_until_the_answer() -> None:
    own = OwnWrites()
    delivered: list[str] = []
    key = own.begin("ConfigMap", "ns", "a")
    assert own.intercept(obj("a", "7"), lambda: delivered.append("own"))  # held
    own.end(key, "u1", "7")
    assert delivered == []  # it was the write's own event
    key = own.begin("ConfigMap", "ns", "a")
    assert own.intercept(obj("a", "8"), lambda: delivered.append("someone else's"))
    own.end(key, "u1", "9")
    assert delivered == ["someone else's"]
    assert not own.intercept(obj("a", "10"), lambda: None)  # nothing in flight: not held


def test_many_recent_writes_are_pruned_once_the_watch_caught_up() -> None:
    recent = RecentWrites()
    for i in range(100):
        recent.record(obj(f"o{i}", str(10 + i), f"u{i}"))
    assert len(recent) == 100
    assert recent.merge([], lambda key: None, lambda ns: 1000, lambda o: False) == []
    assert len(recent) == 0
