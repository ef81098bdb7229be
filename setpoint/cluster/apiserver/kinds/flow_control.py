"""API priority and fairness objects: the mandatory configuration kube-apiserver keeps.

kube-apiserver 1.32 makes sure the two mandatory priority levels and flow schemas exist
(``exempt``: everything ``system:masters`` sends is never queued; ``catch-all``: every other
request, by user), annotated ``apf.kubernetes.io/autoupdate-spec: "true"``. They are created
here at start when missing. Nothing enforces them: requests are not queued or limited (the
suggested configuration objects, such as ``system-leader-election``, are not created either).
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry

GROUP: Final = "flowcontrol.apiserver.k8s.io"
AUTOUPDATE_ANNOTATION: Final = "apf.kubernetes.io/autoupdate-spec"
_EVERYTHING: Final = {
    "resourceRules": [
        {
            "verbs": ["*"],
            "apiGroups": ["*"],
            "resources": ["*"],
            "clusterScope": True,
            "namespaces": ["*"],
        }
    ],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
}


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "annotations": {AUTOUPDATE_ANNOTATION: "true"}}


def _group(name: str) -> dict[str, Any]:
    return {"kind": "Group", "group": {"name": name}}


def mandatory_priority_levels() -> list[dict[str, Any]]:
    """The ``exempt`` and ``catch-all`` PriorityLevelConfigurations."""
    kind = {"apiVersion": f"{GROUP}/v1", "kind": "PriorityLevelConfiguration"}
    return [
        {
            **kind,
            "metadata": _meta("exempt"),
            "spec": {
                "type": "Exempt",
                "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0},
            },
        },
        {
            **kind,
            "metadata": _meta("catch-all"),
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 5,
                    "lendablePercent": 0,
                    "limitResponse": {"type": "Reject"},
                },
            },
        },
    ]


def mandatory_flow_schemas() -> list[dict[str, Any]]:
    """The ``exempt`` and ``catch-all`` FlowSchemas."""
    kind = {"apiVersion": f"{GROUP}/v1", "kind": "FlowSchema"}
    return [
        {
            **kind,
            "metadata": _meta("exempt"),
            "spec": {
                "priorityLevelConfiguration": {"name": "exempt"},
                "matchingPrecedence": 1,
                "rules": [{"subjects": [_group("system:masters")], **_EVERYTHING}],
            },
        },
        {
            **kind,
            "metadata": _meta("catch-all"),
            "spec": {
                "priorityLevelConfiguration": {"name": "catch-all"},
                "matchingPrecedence": 10000,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [
                    {
                        "subjects": [
                            _group("system:unauthenticated"),
                            _group("system:authenticated"),
                        ],
                        **_EVERYTHING,
                    }
                ],
            },
        },
    ]


async def ensure_mandatory_flow_control(
    operations: ObjectOperations, registry: ResourceRegistry
) -> None:
    """Create the mandatory priority levels and flow schemas that are missing."""
    for plural, objects in (
        ("prioritylevelconfigurations", mandatory_priority_levels()),
        ("flowschemas", mandatory_flow_schemas()),
    ):
        resource = registry.get(GROUP, "v1", plural)
        assert resource is not None, f"{plural} missing from the built-in table"
        for obj in objects:
            name = obj["metadata"]["name"]
            if operations.storage.get(resource.storage_key(None, name)) is None:
                await operations.create(resource, None, obj, WriteOptions(server_built=True))
