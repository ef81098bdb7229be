"""Pods: the status a new pod starts with, container checks, and graceful deletion
(``pod/strategy.go``).

A pod that is not scheduled (no ``spec.nodeName``) or has finished is deleted at once, whatever
grace period was asked; a running pod is only marked deleting for its grace period, and the
kubelet (simulated or real, when present) removes it.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.validation.pod_spec import validate_pod_spec

#: ``spec.terminationGracePeriodSeconds`` defaults to 30 upstream.
DEFAULT_TERMINATION_GRACE_SECONDS: Final = 30
FINISHED_PHASES: Final = frozenset({"Succeeded", "Failed"})
_COMPUTE = ("cpu", "memory")


def qos_class(spec: dict[str, Any]) -> str:
    """``BestEffort``, ``Burstable`` or ``Guaranteed`` from the containers' resources."""
    containers = [
        c
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]
    requests_any = False
    guaranteed = bool(containers)
    for container in containers:
        resources = container.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        if any(r in requests or r in limits for r in _COMPUTE):
            requests_any = True
        for resource in _COMPUTE:
            limit = limits.get(resource)
            if limit is None or requests.get(resource, limit) != limit:
                guaranteed = False
    if not requests_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodBehaviour(KindBehaviour):
    """Pod rules: Pending status on create, graceful deletion only for running pods."""

    def __init__(self, validator: BuiltinValidator | None = None) -> None:
        super().__init__(validator)

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            # The ServiceAccount admission plugin: every pod runs as a service account.
            account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
            spec["serviceAccountName"] = spec["serviceAccount"] = account
        obj["status"] = {
            "phase": "Pending",
            "qosClass": qos_class(spec if isinstance(spec, dict) else {}),
        }

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        return [] if subresource == "status" else validate_pod_spec(obj)

    def spec_changed(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> bool:
        return False  # pods do not track generation in 1.32

    def delete_grace_seconds(
        self, resource: ServedResource, obj: dict[str, Any], requested: int | None
    ) -> int:
        spec = obj.get("spec") or {}
        phase = (obj.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in FINISHED_PHASES:
            return 0
        if requested is not None:
            return max(requested, 0)
        grace = spec.get("terminationGracePeriodSeconds")
        return grace if isinstance(grace, int) else DEFAULT_TERMINATION_GRACE_SECONDS
