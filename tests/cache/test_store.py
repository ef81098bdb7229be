"""Store: lookups, indexes, watch-event application and relist diffs (no server needed)."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest

from setpoint.api.gvk import ObjectKey
from setpoint.cache import (
    NAMESPACE_INDEX,
    OWNER_UID_INDEX,
    CachedObject,
    DeltaType,
    MutableStore,
)

from .objects import bookmark_line, configmap, event_line, expired_line, list_body, owner
from .thread_race import reader_failures


def cm(name: str, namespace: str | None = "default", **kwargs: Any) -> CachedObject:
    return CachedObject.from_dict(configmap(name, namespace, **kwargs))


def names(objs: list[CachedObject]) -> list[str]:
    return sorted(o.name for o in objs)


def test_get_list_and_len() -> None:
    store = MutableStore()
    store.upsert(cm("a", "ns1", labels={"app": "web"}))
    store.upsert(cm("b", "ns1", labels={"app": "db"}))
    store.upsert(cm("a", "ns2"))
    assert len(store) == 3
    assert store.get(ObjectKey("ns1", "a")) is not None
    assert store.get(ObjectKey("ns3", "a")) is None
    assert store.get_by_name("a", "ns2") is not None
    assert ObjectKey("ns1", "b") in store
    assert names(store.list()) == ["a", "a", "b"]
    assert names(store.list("ns1")) == ["a", "b"]
    assert names(store.list("nope")) == []
    assert names(store.list(label_selector="app=web")) == ["a"]
    assert names(store.list(label_selector="app in (web,db)")) == ["a", "b"]
    assert names(store.list("ns1", label_selector={"app": "db"})) == ["b"]
    assert names(store.list(label_selector="!app")) == ["a"]
    assert store.count("ns1") == 2
    assert sorted(store.namespaces()) == ["ns1", "ns2"]
    assert sorted(map(str, store.keys())) == ["ns1/a", "ns1/b", "ns2/a"]


def test_bad_label_selector_is_a_clear_error() -> None:
    store = MutableStore()
    with pytest.raises(ValueError, match="invalid label_selector 'app in'"):
        store.list(label_selector="app in")
    with pytest.raises(TypeError, match="label_selector must be"):
        store.list(label_selector=42)  # type: ignore[arg-type]


def test_cluster_scoped_objects_live_under_the_empty_namespace() -> None:
    store = MutableStore()
    store.upsert(cm("n1", None))
    assert store.get(ObjectKey(None, "n1")) is not None
    assert store.get(ObjectKey("", "n1")) is not None
    assert names(store.by_index(NAMESPACE_INDEX, "")) == ["n1"]


def test_upsert_replaces_and_remove_returns_the_old_object() -> None:
    store = MutableStore()
    assert store.upsert(cm("a", rv="1")) is None
    old = store.upsert(cm("a", rv="2"))
    assert old is not None and old.resource_version == "1"
    assert len(store) == 1
    removed = store.remove(ObjectKey("default", "a"))
    assert removed is not None and removed.resource_version == "2"
    assert store.remove(ObjectKey("default", "a")) is None
    assert len(store) == 0
    assert store.namespaces() == []


def test_owner_uid_index_follows_updates() -> None:
    store = MutableStore()
    store.upsert(cm("child1", owners=[owner("p1")]))
    store.upsert(cm("child2", owners=[owner("p1"), owner("p2", controller=False)]))
    store.upsert(cm("orphan"))
    assert names(store.by_index(OWNER_UID_INDEX, "p1")) == ["child1", "child2"]
    assert names(store.by_index(OWNER_UID_INDEX, "p2")) == ["child2"]
    store.upsert(cm("child1", rv="2", owners=[owner("p2")]))
    assert names(store.by_index(OWNER_UID_INDEX, "p1")) == ["child2"]
    assert names(store.by_index(OWNER_UID_INDEX, "p2")) == ["child1", "child2"]
    store.remove(ObjectKey("default", "child2"))
    assert store.by_index(OWNER_UID_INDEX, "p1") == []
    assert sorted(store.index_values(OWNER_UID_INDEX)) == ["p2"]
    # A reference without a uid (a broken object) indexes nothing, alone or beside others.
    store.upsert(cm("no-uid", owners=[owner("")]))
    store.upsert(cm("mixed", owners=[owner(""), owner("p3")]))
    assert sorted(store.index_values(OWNER_UID_INDEX)) == ["p2", "p3"]
    assert names(store.by_index(OWNER_UID_INDEX, "p3")) == ["mixed"]


def test_user_index_is_built_over_existing_objects_and_maintained() -> None:
    store = MutableStore()
    store.upsert(cm("a", data={"node": "n1"}))
    store.add_index("node", lambda o: [o.get("data")["node"]])
    store.upsert(cm("b", data={"node": "n1"}))
    store.upsert(cm("c", data={"node": "n2"}))
    assert names(store.by_index("node", "n1")) == ["a", "b"]
    store.upsert(cm("a", rv="2", data={"node": "n2"}))
    assert names(store.by_index("node", "n2")) == ["a", "c"]
    assert "node" in store.index_names


def test_indexes_survive_updates_that_keep_or_drop_their_values() -> None:
    store = MutableStore()
    store.add_index("node", lambda o: [o.get("data")["node"]])
    store.upsert(cm("a", owners=[owner("p1")], data={"node": "n1"}))
    store.apply("MODIFIED", cm("a", rv="2", owners=[owner("p1")], data={"node": "n1"}))
    assert names(store.by_index(OWNER_UID_INDEX, "p1")) == ["a"]
    assert names(store.by_index("node", "n1")) == ["a"]
    store.apply("MODIFIED", cm("a", rv="3", data={"node": "n1"}))
    assert store.by_index(OWNER_UID_INDEX, "p1") == []
    assert store.index_values(OWNER_UID_INDEX) == []
    store.apply("DELETED", cm("a", rv="4"))
    assert store.index_values("node") == []


def test_index_function_returning_a_string_indexes_one_value() -> None:
    store = MutableStore()
    store.add_index("first-label", lambda o: o.labels.get("app", ""))
    store.upsert(cm("a", labels={"app": "web"}))
    assert names(store.by_index("first-label", "web")) == ["a"]


def test_unknown_and_duplicate_indexes_are_clear_errors() -> None:
    store = MutableStore()
    with pytest.raises(KeyError, match="no index named 'nope'"):
        store.by_index("nope", "x")
    store.add_index("x", lambda o: [])
    with pytest.raises(ValueError, match="index 'x' already exists"):
        store.add_index("x", lambda o: [])
    with pytest.raises(ValueError, match="already exists"):
        store.add_index(NAMESPACE_INDEX, lambda o: [])


def test_failing_index_function_is_logged_and_the_object_still_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = MutableStore()

    def broken(obj: CachedObject) -> list[str]:
        raise RuntimeError("boom")

    store.add_index("broken", broken)
    with caplog.at_level(logging.ERROR):
        store.upsert(cm("a"))
    assert store.get_by_name("a", "default") is not None
    assert "index function 'broken' failed" in caplog.text


def test_watch_events_produce_deltas_and_duplicates_are_dropped() -> None:
    store = MutableStore()
    added = store.apply("ADDED", cm("a", rv="1"))
    assert added is not None and added.type is DeltaType.ADD
    assert store.apply("ADDED", cm("a", rv="1")) is None  # replayed duplicate
    updated = store.apply("MODIFIED", cm("a", rv="2"))
    assert updated is not None and updated.type is DeltaType.UPDATE
    assert updated.old is not None and updated.old.resource_version == "1"
    deleted = store.apply("DELETED", cm("a", rv="3"))
    assert deleted is not None and deleted.type is DeltaType.DELETE
    assert deleted.obj.resource_version == "3"  # the final state the server sent
    assert store.apply("DELETED", cm("a", rv="3")) is None
    with pytest.raises(ValueError, match="cannot apply a BOOKMARK"):
        store.apply("BOOKMARK", cm("a"))


def test_diff_reports_adds_updates_and_tombstones_only_in_scope() -> None:
    store = MutableStore()
    store.replace([cm("same"), cm("changed"), cm("gone"), cm("recreated", uid="old-uid")])
    store.upsert(cm("other-ns", "ns2"))
    listed = [
        cm("same"),
        cm("changed", rv="2"),
        cm("new"),
        cm("recreated", uid="new-uid", rv="5"),
    ]
    deltas = store.diff(listed, "default")
    summary = sorted((d.type.value, d.obj.name, d.obj.uid) for d in deltas)
    assert summary == [
        ("add", "new", "uid-default-new"),
        ("add", "recreated", "new-uid"),
        ("delete", "gone", "uid-default-gone"),
        ("delete", "recreated", "old-uid"),
        ("update", "changed", "uid-default-changed"),
    ]
    assert len(store) == 5  # diff alone changes nothing
    for delta in deltas:
        store.commit(delta)
    assert names(store.list("default")) == ["changed", "new", "recreated", "same"]
    assert store.get_by_name("recreated", "default").uid == "new-uid"  # type: ignore[union-attr]
    assert store.get_by_name("other-ns", "ns2") is not None


def test_raw_entry_points_fill_a_store_without_a_server() -> None:
    store = MutableStore()
    rv = store.load_list(list_body([configmap("a"), configmap("b", "ns2")], rv="10"))
    assert rv == "10"
    assert names(store.list()) == ["a", "b"]
    delta = store.apply_event(event_line("MODIFIED", configmap("a", rv="11", data={"k": "2"})))
    assert delta is not None and delta.type is DeltaType.UPDATE
    assert store.get_by_name("a", "default").get("data") == {"k": "2"}  # type: ignore[union-attr]
    assert store.apply_event(bookmark_line("12")) is None
    assert store.apply_event(expired_line()) is None
    store.apply_event(event_line("DELETED", configmap("b", "ns2", rv="13")))
    assert names(store.list()) == ["a"]


def test_iteration_tolerates_changes_during_the_loop() -> None:
    store = MutableStore()
    store.replace([cm(f"o{i}") for i in range(5)])
    for obj in store:
        store.remove(obj.key)
    assert len(store) == 0


def test_reads_from_a_reconciler_thread_while_the_loop_writes_never_fail() -> None:
    # Sync reconcilers run in threads and may read the store (cached objects are immutable,
    # hence shareable) while the event loop applies watch events to it.
    store = MutableStore()
    children = [cm(f"child-{i}", owners=[owner("parent-uid")]) for i in range(300)]
    for child in children:
        store.upsert(child)
    steps = itertools.count()

    def read() -> None:
        store.by_index(OWNER_UID_INDEX, "parent-uid")
        store.index_values(OWNER_UID_INDEX)
        store.namespaces()
        store.list()

    def write() -> None:
        step = next(steps)
        for child in children[:50]:
            store.remove(child.key)
        store.upsert(cm(f"extra-{step}", f"ns-{step % 7}", owners=[owner(f"u-{step}")]))
        for child in children[:50]:
            store.upsert(child)

    assert reader_failures(read, write) == []
