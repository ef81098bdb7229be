"""Which audit and trace records belong to one object's timeline (pure logic)."""

from __future__ import annotations

from typing import Any

from setpoint.console.timeline import API_LANE, ObjectRef, ObjectTimeline

FOO = "samplecontroller.k8s.io/v1alpha1"
REF = ObjectRef(FOO, "Foo", "foos", "ns", "foo-1", uid="u1")


def _audit(name: str = "foo-1", resource: str = "foos", **extra: Any) -> dict[str, Any]:
    ref = {
        "apiVersion": FOO,
        "resource": resource,
        "namespace": "ns",
        "name": name,
        "uid": extra.pop("uid", None),
    }
    return {"seq": 1, "verb": "patch", "objectRef": ref, **extra}


def _trace(kind: str, **extra: Any) -> dict[str, Any]:
    obj = extra.pop(
        "object",
        {"apiVersion": FOO, "kind": "Foo", "namespace": "ns", "name": "foo-1", "uid": "u1"},
    )
    return {"type": kind, "controller": "foo", "object": obj, "reconcileId": None, **extra}


def test_audit_records_of_the_object_and_its_subresources_are_on_it() -> None:
    timeline = ObjectTimeline(REF)
    entry = timeline.audit_entry(_audit())
    assert entry is not None and entry["lane"] == API_LANE and entry["about"] == "self"
    status = _audit()
    status["objectRef"]["subresource"] = "status"
    assert timeline.audit_entry(status) is not None


def test_audit_records_of_other_objects_and_older_namesakes_are_not() -> None:
    timeline = ObjectTimeline(REF)
    assert timeline.audit_entry(_audit(name="foo-2")) is None
    assert timeline.audit_entry(_audit(resource="bars")) is None
    assert timeline.audit_entry(_audit(uid="an-older-foo-1")) is None


def test_the_creation_of_a_child_is_on_its_owner() -> None:
    timeline = ObjectTimeline(REF)
    created = _audit(name="pod-1", resource="pods", verb="create")
    created["objectRef"]["apiVersion"] = "v1"
    created["object"] = {"metadata": {"name": "pod-1", "ownerReferences": [{"uid": "u1"}]}}
    entry = timeline.audit_entry(created)
    assert entry is not None and entry["about"] == "child"
    created["object"]["metadata"]["ownerReferences"] = [{"uid": "someone-else"}]
    assert timeline.audit_entry(created) is None


def test_a_reconcile_of_the_key_brings_its_writes_along() -> None:
    timeline = ObjectTimeline(REF, for_kinds={"foo": "Foo", "bar": "Bar"})
    pod = {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p", "uid": "p1"}
    write = _trace("write", object=pod, reconcileId="r1", verb="create")
    assert timeline.trace_entry("op", write) is None  # before its reconcile is known
    start = _trace("reconcileStart", key="ns/foo-1", reconcileId="r1")
    assert timeline.trace_entry("op", start) is not None
    entry = timeline.trace_entry("op", write)
    assert entry is not None and entry["about"] == "reconcile" and entry["lane"] == "foo"


def test_another_controller_s_key_of_the_same_name_is_not_on_it() -> None:
    timeline = ObjectTimeline(REF, for_kinds={"foo": "Foo", "bar": "Bar"})
    other = {"apiVersion": "x/v1", "kind": "Bar", "namespace": "ns", "name": "foo-1"}
    enqueue = _trace("enqueue", controller="bar", object=other, key="ns/foo-1")
    assert timeline.trace_entry("op", enqueue) is None
    start = _trace(
        "reconcileStart", controller="bar", object=other, key="ns/foo-1", reconcileId="rb"
    )
    assert timeline.trace_entry("op", start) is None
    assert "rb" not in timeline.reconcile_ids


def test_an_enqueue_caused_by_a_child_is_on_the_primary() -> None:
    timeline = ObjectTimeline(REF, for_kinds={"foo": "Foo"})
    enqueue = _trace(
        "enqueue",
        key="ns/foo-1",
        cause={"kind": "event", "source": {"kind": "Deployment", "name": "d"}},
    )
    entry = timeline.trace_entry("op", enqueue)
    assert entry is not None and entry["about"] == "self"


def test_a_write_naming_the_object_as_its_primary_is_on_it() -> None:
    timeline = ObjectTimeline(REF)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "d"}
    primary = {"apiVersion": FOO, "kind": "Foo", "namespace": "ns", "name": "foo-1", "uid": None}
    write = _trace("write", object=deployment, primary=primary, reconcileId="r9", verb="apply")
    entry = timeline.trace_entry("op", write)
    assert entry is not None and entry["about"] == "reconcile"
    other = {**primary, "name": "foo-2"}
    assert timeline.trace_entry("op", {**write, "primary": other, "reconcileId": "r8"}) is None
