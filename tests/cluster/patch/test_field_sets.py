"""Field sets and their FieldsV1 form: the documented cases of structured-merge-diff
(``fieldpath/serialize-pe.go``, ``typed/tofieldset.go``), as facts."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.cluster.apiserver.patch.field_paths import (
    decode_fields,
    encode_fields,
    field_set,
    path_string,
)
from setpoint.cluster.apiserver.patch.managed_fields import tracked
from setpoint.cluster.apiserver.patch.merge_schema import builtin_root

CASES: list[tuple[str, tuple[str, str], dict[str, Any], dict[str, Any]]] = [
    (
        "map keys are owned, the map itself is not",
        ("v1", "ConfigMap"),
        {"metadata": {"name": "x", "labels": {"app": "a"}}, "data": {"k": "v"}},
        {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:app": {}}}},
    ),
    (
        "map-list elements by their keys, key fields listed under them",
        ("v1", "Service"),
        {"spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}]}},
        {
            "f:spec": {
                "f:ports": {
                    'k:{"port":80,"protocol":"TCP"}': {
                        ".": {},
                        "f:port": {},
                        "f:protocol": {},
                        "f:targetPort": {},
                    }
                }
            }
        },
    ),
    (
        "set elements by value",
        ("v1", "ConfigMap"),
        {"metadata": {"finalizers": ["example.com/f"]}},
        {"f:metadata": {"f:finalizers": {'v:"example.com/f"': {}}}},
    ),
    (
        "an atomic struct (LabelSelector) is one leaf",
        ("apps/v1", "Deployment"),
        {"spec": {"selector": {"matchLabels": {"app": "a"}}}},
        {"f:spec": {"f:selector": {}}},
    ),
    (
        "an atomic list (args) is one leaf",
        ("v1", "Pod"),
        {"spec": {"containers": [{"name": "c", "args": ["1", "2"]}]}},
        {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:args": {}, "f:name": {}}}}},
    ),
    (
        "name, namespace, uid and the like are never owned",
        ("v1", "ConfigMap"),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "n", "uid": "u", "resourceVersion": "1"},
        },
        {},
    ),
]


@pytest.mark.parametrize(
    ("kind", "obj", "fields_v1"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_field_sets(kind: tuple[str, str], obj: dict[str, Any], fields_v1: dict[str, Any]) -> None:
    root = builtin_root(*kind)
    assert root is not None
    paths = tracked(field_set(root, obj), "", False)
    assert encode_fields(paths) == fields_v1
    assert decode_fields(fields_v1) == paths


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (("f:spec", "f:replicas"), ".spec.replicas"),
        (("f:data", "f:a"), ".data.a"),
        (
            ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"nginx"}', "f:image"),
            '.spec.template.spec.containers[name="nginx"].image',
        ),
        (
            ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}'),
            '.spec.ports[port=80,protocol="TCP"]',
        ),
        (
            ("f:metadata", "f:finalizers", 'v:"example.com/f"'),
            '.metadata.finalizers[="example.com/f"]',
        ),
        (("f:spec", "f:args", "i:3"), ".spec.args[3]"),
    ],
)
def test_paths_print_as_upstream(path: tuple[str, ...], text: str) -> None:
    assert path_string(path) == text
