"""Metadata accessors on plain dict objects."""

from typing import Any

import pytest

from setpoint.api import add_finalizer, has_finalizer, is_being_deleted, meta, remove_finalizer


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p1",
            "namespace": "ns",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "labels": {"app": "web"},
            "annotations": {"a": "b"},
            "finalizers": ["example.com/cleanup"],
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "r"}
            ],
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
    }


def test_readers() -> None:
    obj = pod()
    assert meta.name(obj) == "p1"
    assert meta.namespace(obj) == "ns"
    assert meta.uid(obj) == "u-1"
    assert meta.resource_version(obj) == "42"
    assert meta.generation(obj) == 3
    assert meta.labels(obj) == {"app": "web"}
    assert meta.annotations(obj) == {"a": "b"}
    assert meta.finalizers(obj) == ["example.com/cleanup"]
    assert meta.owner_references(obj)[0]["name"] == "rs"
    assert meta.creation_timestamp(obj) == "2024-01-01T00:00:00Z"
    assert meta.deletion_timestamp(obj) is None
    assert not is_being_deleted(obj)


def test_readers_tolerate_missing_metadata() -> None:
    for obj in ({}, {"metadata": None}, {"metadata": {"namespace": ""}}):
        assert meta.name(obj) is None
        assert meta.namespace(obj) is None
        assert meta.generation(obj) is None
        assert meta.labels(obj) == {}
        assert meta.finalizers(obj) == []
        assert meta.owner_references(obj) == []
        assert not is_being_deleted(obj)


def test_being_deleted() -> None:
    obj = pod()
    obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:01Z"
    assert is_being_deleted(obj)
    assert meta.deletion_timestamp(obj) == "2024-01-01T00:00:01Z"


def test_add_and_remove_finalizer_report_changes() -> None:
    obj: dict[str, Any] = {}
    assert add_finalizer(obj, "x/y") is True
    assert add_finalizer(obj, "x/y") is False
    assert obj == {"metadata": {"finalizers": ["x/y"]}}
    assert has_finalizer(obj, "x/y")
    assert add_finalizer(obj, "z") is True
    assert remove_finalizer(obj, "x/y") is True
    assert remove_finalizer(obj, "x/y") is False
    assert meta.finalizers(obj) == ["z"]
    assert remove_finalizer({}, "z") is False


def test_add_finalizer_rejects_empty_name() -> None:
    with pytest.raises(ValueError, match="finalizer"):
        add_finalizer({}, "")


def test_finalizer_list_returned_is_a_copy() -> None:
    obj = pod()
    meta.finalizers(obj).append("other")
    assert meta.finalizers(obj) == ["example.com/cleanup"]


def test_set_label_and_annotation() -> None:
    obj: dict[str, Any] = {"metadata": {}}
    assert meta.set_label(obj, "app", "web") is True
    assert meta.set_label(obj, "app", "web") is False
    assert meta.set_annotation(obj, "note", "x") is True
    assert meta.set_label(obj, "app", None) is True
    assert meta.set_label(obj, "app", None) is False
    assert obj == {"metadata": {"labels": {}, "annotations": {"note": "x"}}}
