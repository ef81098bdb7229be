"""Built-in objects against the upstream schemas shipped by kubernetes-validate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from setpoint.cluster.apiserver.validation.builtin_schemas import (
    BuiltinSchemas,
    builtin_schemas,
    has_builtin_schema,
    validate_builtin,
)

CONFIG_MAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cm", "namespace": "default", "labels": {"a": "b"}},
    "data": {"key": "value"},
    "binaryData": {"blob": "aGVsbG8="},
}

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "env": [{"name": "A", "value": "1"}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "1Gi"},
                    "requests": {"cpu": "500m"},
                },
                "livenessProbe": {"httpGet": {"port": "http", "path": "/"}},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
            }
        ],
        "restartPolicy": "Always",
        "nodeName": None,
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": None}],
    },
}

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "d"}},
        "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
    },
}

LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "leader", "namespace": "default"},
    "spec": {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:00.000000Z",
        "renewTime": "2024-01-01T00:00:10.000000Z",
    },
}

EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
    "reason": "Started",
    "type": "Normal",
    "count": 1,
    "firstTimestamp": "2024-01-01T00:00:00Z",
}

EVENTS_V1: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "eventTime": "2024-01-01T00:00:00.000000Z",
    "reportingController": "me",
    "reportingInstance": "me-1",
    "action": "Start",
    "reason": "Started",
    "regarding": {"kind": "Pod", "name": "p"},
}


@pytest.mark.parametrize("obj", [CONFIG_MAP, POD, DEPLOYMENT, LEASE, EVENT, EVENTS_V1])
def test_valid_objects_pass_unchanged(obj: dict[str, Any]) -> None:
    copied = copy.deepcopy(obj)
    result = validate_builtin(copied)
    assert result.errors == []
    assert result.ok
    assert result.unknown_fields == []
    assert copied == obj


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    target: Any = result
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return result


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            _with(CONFIG_MAP, "data.key", 1),
            [
                'data.key: Invalid value: "integer": data.key in body must be of type string: '
                '"integer"'
            ],
        ),
        (
            _with(CONFIG_MAP, "binaryData.blob", "not base64!"),
            [
                'binaryData.blob: Invalid value: "not base64!": binaryData.blob in body must be of '
                'type byte: "not base64!"'
            ],
        ),
        (
            _with(CONFIG_MAP, "metadata.labels", "oops"),
            [
                'metadata.labels: Invalid value: "string": metadata.labels in body must be of type '
                'object: "string"'
            ],
        ),
        # null decodes to a zero value, as from Go clients' non-omitempty fields
        (_with(POD, "spec.containers", None), []),
        (_with(POD, "spec.containers.0.name", None), []),
        (_with(CONFIG_MAP, "apiVersion", None), []),
        (
            _with(POD, "spec.containers.0", {"image": "nginx"}),
            ["spec.containers[0].name: Required value"],
        ),
        (
            _with(POD, "spec.containers.0.resources.limits.cpu", "lots"),
            [
                'spec.containers[0].resources.limits.cpu: Invalid value: "lots": quantities must '
                "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ],
        ),
        (
            _with(POD, "spec.containers.0.livenessProbe.httpGet.port", True),
            [
                'spec.containers[0].livenessProbe.httpGet.port: Invalid value: "boolean": '
                "spec.containers[0].livenessProbe.httpGet.port in body must be of type "
                'integer,string: "boolean"'
            ],
        ),
        (
            _with(POD, "spec.containers.0.ports.0.containerPort", "80"),
            [
                'spec.containers[0].ports[0].containerPort: Invalid value: "string": '
                "spec.containers[0].ports[0].containerPort in body must be of type integer: "
                '"string"'
            ],
        ),
        (
            _with(DEPLOYMENT, "spec.replicas", 2**31),
            [
                "spec.replicas: Invalid value: 2147483648: spec.replicas in body should be less "
                "than or equal to 2147483647"
            ],
        ),
        (
            _with(DEPLOYMENT, "spec", {"replicas": 1}),
            ["spec.selector: Required value", "spec.template: Required value"],
        ),
        (
            _with(LEASE, "spec.renewTime", "soon"),
            [
                'spec.renewTime: Invalid value: "soon": spec.renewTime in body must be of type '
                'date-time: "soon"'
            ],
        ),
        (
            _with(EVENT, "involvedObject", "pod/p"),
            [
                'involvedObject: Invalid value: "string": involvedObject in body must be of type '
                'object: "string"'
            ],
        ),
    ],
)
def test_invalid_objects(obj: dict[str, Any], expected: list[str]) -> None:
    assert [error.message for error in validate_builtin(obj).errors] == expected


def test_missing_required_top_level_field() -> None:
    event = copy.deepcopy(EVENT)
    del event["involvedObject"]
    errors = validate_builtin(event).errors
    assert [(e.type, e.field) for e in errors] == [("FieldValueRequired", "involvedObject")]


def test_unknown_fields_are_reported_and_pruned() -> None:
    pod = _with(POD, "spec.containers.0.colour", "blue")
    pod["extra"] = 1
    pod["metadata"]["bogus"] = True
    result = validate_builtin(pod)
    assert result.errors == []
    assert result.unknown_fields == ["extra", "metadata.bogus", "spec.containers[0].colour"]
    assert "colour" not in pod["spec"]["containers"][0]
    assert "extra" not in pod
    assert "bogus" not in pod["metadata"]


def test_unknown_fields_can_be_kept() -> None:
    cm = _with(CONFIG_MAP, "surprise", {"x": 1})
    result = validate_builtin(cm, prune_unknown=False)
    assert result.unknown_fields == ["surprise"]
    assert cm["surprise"] == {"x": 1}


def test_free_form_fields_keep_everything() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "widgets.example.com",
            "managedFields": [
                {"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}
            ],
        },
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "default": {"any": [1]}}},
                        }
                    },
                }
            ],
        },
    }
    result = validate_builtin(copy.deepcopy(crd))
    assert result.errors == []
    assert result.unknown_fields == []


def test_kinds_without_a_schema_pass() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}
    assert not has_builtin_schema("example.com/v1", "Widget")
    result = validate_builtin(widget)
    assert result.ok
    assert result.unknown_fields == []
    assert validate_builtin({"kind": "Pod"}).ok  # no apiVersion: nothing to look up


def test_schema_lookup() -> None:
    schemas = builtin_schemas()
    assert schemas.definition_name("v1", "Pod") == "io.k8s.api.core.v1.Pod"
    assert schemas.definition_name("apps/v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"
    assert schemas.definition_name("coordination.k8s.io/v1", "Lease") == (
        "io.k8s.api.coordination.v1.Lease"
    )
    assert has_builtin_schema("rbac.authorization.k8s.io/v1", "ClusterRole")
    assert schemas.node_for("v1", "Pod") is schemas.node_for("v1", "Pod")  # compiled once


def test_unknown_schema_version_is_a_clear_error() -> None:
    from setpoint.cluster.apiserver.validation.builtin_schemas import BuiltinSchemaError

    with pytest.raises(BuiltinSchemaError, match=r"no schemas for v0\.1\.0"):
        BuiltinSchemas("v0.1.0").definition_name("v1", "Pod")


def test_status_requires_nothing() -> None:
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}},
        "status": {"conditions": [{"reason": "x"}]},  # no replicas, no type/status
    }
    assert validate_builtin(replica_set).errors == []
    pod = _with(POD, "status.containerStatuses", [{"name": "c", "ready": True}])
    assert validate_builtin(pod).errors == []
    wrong_type = _with(POD, "status.phase", 3)
    assert [e.field for e in validate_builtin(wrong_type).errors] == ["status.phase"]


def test_missing_numbers_booleans_and_lists_decode_to_zero_values() -> None:
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"}}
    slice_ = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "s"},
    }
    assert validate_builtin(revision).errors == []
    assert [e.field for e in validate_builtin(slice_).errors] == ["addressType"]


def test_spec_still_requires_what_its_go_type_requires() -> None:
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {},
    }
    assert [e.message for e in validate_builtin(replica_set).errors] == [
        "spec.selector: Required value"
    ]


def test_quantities_are_rewritten_in_canonical_form() -> None:
    pod = copy.deepcopy(POD)
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 0.5, "memory": "1024Mi"}}
    result = validate_builtin(pod)
    assert result.ok
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"}
    }
