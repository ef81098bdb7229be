"""The one-walk managedFields of a create equal the general comparison's, field for field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.patch.field_paths import (
    RepeatedElementError,
    compare,
    created_fields,
    encode_fields,
)
from setpoint.cluster.apiserver.patch.managed_fields import tracked
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode, builtin_root, custom_root

META = {
    "name": "x",
    "namespace": "ns",
    "uid": "u",
    "resourceVersion": "1",
    "creationTimestamp": "2026-01-01T00:00:00Z",
    "labels": {"app": "x", "tier": "web"},
    "annotations": {"a": "b"},
    "finalizers": ["example.com/f"],
    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "ou"}],
}
POD_SPEC = {
    "containers": [
        {
            "name": "app",
            "image": "busybox",
            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81}],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {}}}],
            "resources": {"limits": {"cpu": "1"}},
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        }
    ],
    "volumes": [{"name": "v", "emptyDir": {}}],
    "tolerations": [{"operator": "Exists"}],
    "nodeSelector": {"a": "b"},
    "restartPolicy": "Always",
}
OBJECTS: list[tuple[str, str, dict[str, Any]]] = [
    ("v1", "ConfigMap", {"metadata": META, "data": {"a": "1", "b": "2"}, "binaryData": {}}),
    ("v1", "Secret", {"metadata": META, "data": {"k": "aGVsbG8="}, "type": "Opaque"}),
    ("v1", "Pod", {"metadata": META, "spec": POD_SPEC, "status": {"phase": "Pending"}}),
    (
        "apps/v1",
        "Deployment",
        {
            "metadata": META,
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            },
        },
    ),
    (
        "apps/v1",
        "StatefulSet",
        {
            "metadata": META,
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC},
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
                ],
            },
        },
    ),
    (
        "v1",
        "Service",
        {
            "metadata": META,
            "spec": {
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080, "name": "http"}],
                "selector": {"app": "x"},
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
            },
            "status": {"loadBalancer": {}},
        },
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "Role",
        {
            "metadata": META,
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    ),
]


def _general(root: MergeNode, obj: dict[str, Any], builtin: bool, has_status: bool) -> Any:
    comparison = compare(root, {}, _trackable(obj, has_status), value_structs=builtin)
    return encode_fields(tracked(comparison.changed, "", has_status))


def _ordered(fields: Any) -> str:
    """The trie as stored: FieldsV1 is written in its keys' order, so the order must agree too."""
    return json.dumps(fields)


def _trackable(obj: dict[str, Any], has_status: bool) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if not (has_status and k == "status")}


@pytest.mark.parametrize(("api_version", "kind", "obj"), OBJECTS, ids=[o[1] for o in OBJECTS])
@pytest.mark.parametrize("has_status", [False, True])
def test_builtin_objects(
    api_version: str, kind: str, obj: dict[str, Any], has_status: bool
) -> None:
    root = builtin_root(api_version, kind)
    assert root is not None
    full = {"apiVersion": api_version, "kind": kind, **obj}

    fast = created_fields(root, full, value_structs=True, drop_status=has_status)

    assert _ordered(fast) == _ordered(_general(root, full, True, has_status))


def test_a_repeated_list_key_is_left_to_the_general_path() -> None:
    root = builtin_root("v1", "Pod")
    assert root is not None
    port = {"containerPort": 80, "protocol": "TCP"}
    twice = {"spec": {"containers": [{"name": "a", "ports": [port, {**port, "name": "p"}]}]}}

    with pytest.raises(RepeatedElementError):
        created_fields(root, twice, value_structs=True, drop_status=True)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["a", "b", "metadata", "name", "status"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["spec", "status", "metadata", "data"]), _JSON, max_size=4))
def test_custom_resources_any_shape(obj: dict[str, Any]) -> None:
    root = custom_root(None)

    fast = created_fields(root, obj, value_structs=False, drop_status=True)

    assert _ordered(fast) == _ordered(_general(root, obj, False, True))


_POD_SHAPES = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": st.text(max_size=3),
                "labels": st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=3),
                "finalizers": st.lists(st.text(max_size=2), max_size=3, unique=True),
            },
        ),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "containers": st.lists(
                    st.fixed_dictionaries(
                        {"name": st.text(max_size=2)},
                        optional={
                            "image": st.text(max_size=2),
                            "env": st.lists(
                                st.fixed_dictionaries(
                                    {"name": st.text(max_size=2)}, optional={"value": _JSON}
                                ),
                                max_size=2,
                                unique_by=lambda e: e["name"],
                            ),
                            "resources": _JSON,
                        },
                    ),
                    max_size=3,
                    unique_by=lambda c: c["name"],
                ),
                "nodeSelector": st.dictionaries(st.text(max_size=2), _JSON, max_size=2),
                "tolerations": st.lists(_JSON, max_size=2),
            },
        ),
        "status": _JSON,
    },
)


@settings(max_examples=150, deadline=None)
@given(_POD_SHAPES, st.booleans())
def test_pods_of_any_shape(obj: dict[str, Any], has_status: bool) -> None:
    root = builtin_root("v1", "Pod")
    assert root is not None
    full = {"apiVersion": "v1", "kind": "Pod", **obj}

    fast = created_fields(root, full, value_structs=True, drop_status=has_status)

    assert _ordered(fast) == _ordered(_general(root, full, True, has_status))
