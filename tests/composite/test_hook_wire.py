"""The pure parts: object maps, answers checked before anything is written, Go durations."""

from __future__ import annotations

import pytest

from setpoint.composite.hook_wire import HookError, parse_composite_response, parse_duration
from setpoint.composite.object_maps import object_map, type_key

DECLARED = {"ConfigMap.v1": True, "Namespace.v1": False}


def child(kind: str = "ConfigMap", **metadata: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", **metadata}}


def test_type_keys_are_kind_dot_api_version() -> None:
    assert type_key("v1", "Pod") == "Pod.v1"
    assert type_key("apps/v1", "Deployment") == "Deployment.apps/v1"


def test_object_maps_key_by_relative_name_in_v1_and_namespace_name_in_v2() -> None:
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}},
    ]
    types = [("v1", "Pod"), ("apps/v1", "Deployment")]
    namespaced_parent = object_map(types, pods, parent_namespace="ns")
    assert list(namespaced_parent["Pod.v1"]) == ["p"]
    assert namespaced_parent["Deployment.apps/v1"] == {}  # declared, even when empty
    assert list(object_map(types, pods, parent_namespace=None)["Pod.v1"]) == ["ns/p"]
    assert list(object_map(types, pods, parent_namespace="ns", version="v2")["Pod.v1"]) == ["ns/p"]


def test_children_get_the_parents_namespace_and_may_not_name_another() -> None:
    response = parse_composite_response(
        {"children": [child()]}, hook="sync", declared=DECLARED, parent_namespace="ns"
    )
    assert response.children[0]["metadata"]["namespace"] == "ns"
    with pytest.raises(HookError, match=r"children\[0\]\.metadata\.namespace: 'other' is not"):
        parse_composite_response(
            {"children": [child(namespace="other")]},
            hook="sync",
            declared=DECLARED,
            parent_namespace="ns",
        )


def test_cluster_scoped_children_get_no_namespace() -> None:
    response = parse_composite_response(
        {"children": [child("Namespace")]}, hook="sync", declared=DECLARED, parent_namespace="ns"
    )
    assert "namespace" not in response.children[0]["metadata"]
    with pytest.raises(HookError, match="Namespace is cluster-scoped"):
        parse_composite_response(
            {"children": [child("Namespace", namespace="ns")]},
            hook="sync",
            declared=DECLARED,
            parent_namespace="ns",
        )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([], "the response must be a JSON object, got a list"),
        ({"status": 3}, "status: must be an object, got a number"),
        ({"children": [child(), child()]}, "ConfigMap 'x' is returned twice"),
        ({"children": [{"apiVersion": "v1", "kind": "ConfigMap"}]}, r"metadata: Required value"),
        ({"resyncAfterSeconds": -1}, "resyncAfterSeconds: must be a number >= 0"),
        ({"finalized": "yes"}, "finalized: must be a boolean"),
    ],
)
def test_bad_answers_name_the_field(answer: object, message: str) -> None:
    with pytest.raises(HookError, match=message):
        parse_composite_response(answer, hook="sync", declared=DECLARED, parent_namespace="ns")


def test_strict_answers_refuse_unknown_fields_and_loose_ones_ignore_them() -> None:
    answer = {"children": [], "chidlren": []}
    parse_composite_response(answer, hook="sync", declared=DECLARED, parent_namespace="ns")
    with pytest.raises(HookError, match="unknown field 'chidlren'"):
        parse_composite_response(
            answer, hook="sync", declared=DECLARED, parent_namespace="ns", strict=True
        )


def test_go_durations() -> None:
    assert parse_duration("10s", field_name="t") == 10
    assert parse_duration("1m30s", field_name="t") == 90
    assert parse_duration("500ms", field_name="t") == 0.5
    assert parse_duration("1h", field_name="t") == 3600
    with pytest.raises(ValueError, match="t: invalid duration '10'"):
        parse_duration("10", field_name="t")
