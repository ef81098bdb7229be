"""CachedObject: compact decoding, fidelity of to_dict/get, and immutability."""

from __future__ import annotations

import gc
import sys
from typing import Any

import msgspec
import pytest

from setpoint.api.gvk import ObjectKey
from setpoint.cache import CachedObject, ObjectDecodeError, ObjectDecoder

from .objects import configmap, encode, owner


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p1",
            "namespace": "team-a",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": "2026-01-02T00:00:00Z",
            "deletionGracePeriodSeconds": 30,
            "generateName": "p",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"note": "hello"},
            "finalizers": ["example.com/cleanup"],
            "ownerReferences": [owner("o-1")],
            "selfLink": "/api/v1/namespaces/team-a/pods/p1",
        },
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]},
        "status": {"phase": "Running", "podIP": "10.0.0.1"},
    }


def test_metadata_fields_are_decoded() -> None:
    obj = CachedObject.from_json(encode(pod()))
    assert obj.api_version == "v1"
    assert obj.kind == "Pod"
    assert obj.name == "p1"
    assert obj.namespace == "team-a"
    assert obj.uid == "u-1"
    assert obj.resource_version == "42"
    assert obj.generation == 3
    assert obj.generate_name == "p"
    assert obj.creation_timestamp == "2026-01-01T00:00:00Z"
    assert obj.deletion_timestamp == "2026-01-02T00:00:00Z"
    assert obj.deletion_grace_period_seconds == 30
    assert dict(obj.labels) == {"app": "web", "tier": "front"}
    assert dict(obj.annotations) == {"note": "hello"}
    assert obj.finalizers == ("example.com/cleanup",)
    assert obj.key == ObjectKey("team-a", "p1")
    ref = obj.owner_references[0]
    assert (ref.kind, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "Widget",
        "o-1",
        True,
        True,
    )
    assert ref["apiVersion"] == "example.com/v1"
    assert ref.get("missing", "d") == "d"
    assert obj.controller_reference == ref


def test_to_dict_round_trips_everything_but_managed_fields() -> None:
    original = pod()
    assert CachedObject.from_json(encode(original)).to_dict() == original


def test_managed_fields_are_stripped_by_default_and_kept_on_request() -> None:
    raw = encode(configmap("a"))
    assert "managedFields" not in CachedObject.from_json(raw).metadata
    kept = ObjectDecoder(strip_managed_fields=False).decode(raw)
    assert kept.metadata["managedFields"][0]["manager"] == "kubectl"
    assert kept.to_dict() == configmap("a")


def test_get_decodes_a_top_level_field() -> None:
    obj = CachedObject.from_json(encode(pod()))
    assert obj.get("status") == {"phase": "Running", "podIP": "10.0.0.1"}
    assert obj.get("spec")["containers"][0]["image"] == "nginx"
    assert obj.get("kind") == "Pod"
    assert obj.get("metadata")["selfLink"] == "/api/v1/namespaces/team-a/pods/p1"
    assert obj.get("nope") is None
    assert obj.get("nope", 7) == 7
    assert obj.fields() == ("apiVersion", "kind", "metadata", "spec", "status")


def test_cluster_scoped_object_has_no_namespace() -> None:
    obj = CachedObject.from_dict(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    )
    assert obj.namespace is None
    assert obj.key == ObjectKey(None, "x")
    assert obj.generation is None
    assert obj.labels == {}
    assert obj.finalizers == ()
    assert obj.owner_references == ()
    assert obj.controller_reference is None


def test_readers_cannot_mutate_the_cached_object() -> None:
    obj = CachedObject.from_json(encode(pod()))
    with pytest.raises(TypeError):
        obj.labels["app"] = "evil"  # type: ignore[index]
    with pytest.raises(TypeError):
        obj.annotations["note"] = "evil"  # type: ignore[index]
    with pytest.raises(AttributeError):
        obj.finalizers.append("x")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        obj.kind = "Evil"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        obj.owner_references[0].uid = "evil"  # type: ignore[misc]


def test_copies_handed_out_are_independent_of_the_cache() -> None:
    obj = CachedObject.from_json(encode(pod()))
    first = obj.to_dict()
    first["metadata"]["labels"]["app"] = "evil"
    first["metadata"]["ownerReferences"].append({"uid": "x"})
    first["spec"]["containers"].clear()
    metadata = obj.metadata
    metadata["finalizers"].append("x")
    obj.get("status")["phase"] = "Failed"
    assert obj.to_dict() == pod()
    assert obj.labels["app"] == "web"


def test_metadata_only_keeps_only_the_head() -> None:
    obj = ObjectDecoder(metadata_only=True).decode(encode(pod()))
    assert obj.is_metadata_only
    assert obj.get("spec") is None
    assert set(obj.to_dict()) == {"apiVersion", "kind", "metadata"}
    assert obj.labels["app"] == "web"


def test_transform_is_applied_before_storing() -> None:
    def drop_status(d: dict[str, Any]) -> dict[str, Any]:
        d.pop("status", None)
        d["metadata"].setdefault("annotations", {})["seen"] = "yes"
        return d

    obj = ObjectDecoder(transform=drop_status).decode(encode(pod()))
    assert obj.get("status") is None
    assert obj.annotations["seen"] == "yes"


def test_transform_returning_a_non_dict_is_a_clear_error() -> None:
    decoder = ObjectDecoder(transform=lambda d: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ObjectDecodeError, match="returned NoneType, expected a dict"):
        decoder.decode(encode(pod()))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[1, 2]", "Expected `object`"),
        (b"{not json", "cannot decode object"),
        (b'{"metadata": {"labels": {"a": 1}}}', "labels"),
        (b'{"metadata": {"generation": "x"}}', "generation"),
    ],
)
def test_bad_input_is_rejected_naming_the_problem(raw: bytes, reason: str) -> None:
    with pytest.raises(ObjectDecodeError, match=reason):
        CachedObject.from_json(raw)


def test_no_reference_to_the_source_buffer_is_kept() -> None:
    # Objects decoded from a list page must not keep the page (with managedFields) alive.
    page = encode({"items": [configmap("a"), configmap("b")]})
    items = msgspec.json.decode(page, type=dict[str, list[msgspec.Raw]])["items"]
    objs = [CachedObject.from_json(item) for item in items]
    assert all(isinstance(o._rest, bytes) for o in objs)
    assert all(b"managedFields" not in (o._rest or b"") for o in objs)
    # msgspec.Raw items hold a reference to the whole page; the objects must not.
    del items
    assert sys.getrefcount(page) == 2  # the local name and getrefcount's argument


def test_owner_references_repeated_across_objects_are_shared_but_faithful() -> None:
    refs = [owner("rs-1"), {**owner("rs-2"), "controller": False}]
    a = CachedObject.from_dict(configmap("a", owners=refs))
    b = CachedObject.from_dict(configmap("b", owners=[dict(r) for r in refs]))
    assert a.owner_references is b.owner_references
    assert a.to_dict()["metadata"]["ownerReferences"] == refs
    other = CachedObject.from_dict(configmap("c", owners=[owner("rs-3")]))
    assert [ref.uid for ref in other.owner_references] == ["rs-3"]
    assert a.controller_reference is not None and a.controller_reference.uid == "rs-1"


def test_equal_creation_timestamps_share_one_string_and_stay_exact() -> None:
    decoder = ObjectDecoder()
    first = decoder.decode(encode(configmap("a", creationTimestamp="2026-03-04T05:06:07Z")))
    second = decoder.decode(encode(configmap("b", creationTimestamp="2026-03-04T05:06:07Z")))
    third = decoder.decode(encode(configmap("c", creationTimestamp="2026-03-04T05:06:08Z")))
    assert first.creation_timestamp is second.creation_timestamp
    assert third.creation_timestamp == "2026-03-04T05:06:08Z"
    assert second.metadata["creationTimestamp"] == "2026-03-04T05:06:07Z"


def test_finalizers_and_generate_name_round_trip() -> None:
    obj = CachedObject.from_dict(pod())
    assert obj.finalizers == ("example.com/cleanup",)
    assert obj.generate_name == "p"
    assert obj.to_dict() == pod()


def test_cached_objects_are_not_tracked_by_the_garbage_collector() -> None:
    obj = CachedObject.from_json(encode(pod()))
    assert not gc.is_tracked(obj)
    assert not gc.is_tracked(obj._meta)


def test_equal_content_compares_equal() -> None:
    a = CachedObject.from_json(encode(pod()))
    b = CachedObject.from_dict(pod())
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    changed = pod()
    changed["status"]["phase"] = "Failed"
    assert a != CachedObject.from_dict(changed)


def test_unicode_and_escapes_survive() -> None:
    cm = configmap("a", data={"k": 'line\n"quoted" \u00e9\u4e2d \U0001f600'}, managed_fields=False)
    assert CachedObject.from_json(encode(cm)).to_dict() == cm


@pytest.mark.parametrize(
    "metadata",
    [
        {"name": "a", "selfLink": "/api/v1/namespaces/ns/configmaps/a"},
        {"name": "a", "selfLink": None},
        {"name": "a", "zone": {"x": [1, 2]}},
        {"name": "a", "managedFields": None, "futureField": True},
    ],
)
def test_unusual_metadata_fields_are_kept_exactly(metadata: dict[str, Any]) -> None:
    obj = CachedObject.from_json(
        encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {}})
    )
    expected = {key: value for key, value in metadata.items() if key != "managedFields"}
    assert obj.metadata == expected
    assert obj.name == "a"


def test_null_managed_fields_are_kept_on_request() -> None:
    raw = encode({"kind": "ConfigMap", "metadata": {"name": "a", "managedFields": None}})
    assert ObjectDecoder(strip_managed_fields=False).decode(raw).metadata == {
        "name": "a",
        "managedFields": None,
    }
    assert CachedObject.from_json(raw).metadata == {"name": "a"}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"metadata": null}', "invalid metadata"),
        (b'{"metadata": []}', "invalid metadata"),
        (b'{"apiVersion": 1, "metadata": {}}', "cannot decode object"),
        (b'{"kind": null}', "cannot decode object"),
    ],
)
def test_invalid_head_fields_are_rejected(raw: bytes, reason: str) -> None:
    with pytest.raises(ObjectDecodeError, match=reason):
        CachedObject.from_json(raw)


def test_objects_without_metadata_or_other_fields_decode() -> None:
    obj = CachedObject.from_json(b'{"apiVersion": "v1", "kind": "Namespace"}')
    assert obj.to_dict() == {"apiVersion": "v1", "kind": "Namespace", "metadata": {}}
    assert obj.is_metadata_only
