"""The fast pre-check of built-in objects never vouches for an object the full check faults.

Differential: random edits of valid objects (wrong types, nulls, integral floats, unknown
fields, bad enum values, bad quantities and timestamps) go through both checks; whenever the
fast one says "clean", the full one must find no error and prune nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.validation.builtin_schemas import builtin_schemas, validate_builtin
from setpoint.cluster.apiserver.validation.fast_check import FastChecker

SAMPLES: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {},
        "data": {"payload": "x", "other": "y"},
        "immutable": False,
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {},
        "spec": {
            "restartPolicy": "Always",
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    "env": [{"name": "A", "value": "1"}],
                }
            ],
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}], "type": "ClusterIP"},
    },
    {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {},
        "spec": {"holderIdentity": "me", "renewTime": "2024-01-01T00:00:00.000000Z"},
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {},
        "data": {"k": "aGVsbG8="},
        "type": "Opaque",
    },
]

#: Root keys the edits leave alone (the hook checks metadata itself; the type picks the schema).
TYPE_AND_META = frozenset({"apiVersion", "kind", "metadata"})

JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, 2.0, -3.0, 0.0]),
    st.sampled_from(["", "x", "500m", "1.5Gi", "not a quantity", "TCP", "Bogus", "2024-01-01"]),
    st.sampled_from(["aGVsbG8=", "%%%", "2024-01-01T00:00:00Z"]),
    # Fresh containers every draw: later edits may write into them.
    st.builds(dict),
    st.builds(list),
    st.builds(lambda: {"unknownField": 1}),
    st.builds(lambda: [{"name": "x"}]),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


def _edit(obj: dict[str, Any], path: tuple[Any, ...], key: str | None, value: Any) -> None:
    target: Any = obj
    for step in path:
        target = target[step]
    if isinstance(target, dict):
        target[key if key is not None else "unknownField"] = value
    elif isinstance(target, list):
        target.append(value)


def _fully_clean(obj: dict[str, Any]) -> bool:
    trial = copy.deepcopy(obj)
    result = validate_builtin(trial)
    return not result.errors and not result.unknown_fields and trial == obj


@st.composite
def edited_objects(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if not set(p[:1]) & TYPE_AND_META]
        path = draw(st.sampled_from(paths))
        parent: Any = obj
        for step in path:
            parent = parent[step]
        keys = [k for k in parent if k not in TYPE_AND_META] if isinstance(parent, dict) else []
        key = draw(st.sampled_from([*keys, "unknownField"])) if keys else None
        _edit(obj, path, key, draw(JSON_VALUES))
    return obj


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: str(s["kind"]))
def test_valid_samples_are_vouched_for(sample: dict[str, Any]) -> None:
    node = builtin_schemas().node_for(sample["apiVersion"], sample["kind"])
    assert node is not None
    assert _fully_clean(sample)
    assert FastChecker().clean(node, copy.deepcopy(sample), skip="metadata")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_objects())
def test_fast_clean_implies_full_check_clean(obj: dict[str, Any]) -> None:
    node = builtin_schemas().node_for(obj["apiVersion"], obj["kind"])
    assert node is not None
    before = copy.deepcopy(obj)
    if FastChecker().clean(node, obj, skip="metadata"):
        assert _fully_clean(obj), obj
    assert obj == before  # the fast check never changes the object


def test_unknown_field_is_not_vouched_for() -> None:
    obj = copy.deepcopy(SAMPLES[0]) | {"extra": 1}
    node = builtin_schemas().node_for("v1", "ConfigMap")
    assert node is not None
    assert not FastChecker().clean(node, obj, skip="metadata")
