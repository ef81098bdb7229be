"""Pods: the default admission plugins (:mod:`.pod_admission`), the status a new pod starts
with, container checks, and graceful deletion (``pod/strategy.go``).

A pod that is not scheduled (no ``spec.nodeName``) or has finished is deleted at once, whatever
grace period was asked; a running pod is only marked deleting for its grace period, and the
kubelet (simulated or real, when present) removes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.kinds.pod_admission import (
    ObjectReader,
    admit_priority,
    admit_service_account,
    default_tolerations,
)
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import Storage
from setpoint.cluster.apiserver.validation.ephemeral_containers import (
    validate_ephemeral_containers,
    validate_ephemeral_create,
    validate_ephemeral_update,
)
from setpoint.cluster.apiserver.validation.pod_spec import validate_pod_spec
from setpoint.cluster.apiserver.validation.pod_update import validate_pod_update

#: ``spec.terminationGracePeriodSeconds`` defaults to 30 upstream.
DEFAULT_TERMINATION_GRACE_SECONDS: Final = 30
FINISHED_PHASES: Final = frozenset({"Succeeded", "Failed"})
SERVICE_ACCOUNTS_ROOT: Final = "/core/serviceaccounts/"
PRIORITY_CLASSES_ROOT: Final = "/scheduling.k8s.io/priorityclasses/"
#: How ``"globalDefault": true`` reads in a stored PriorityClass (stored JSON is compact; in a
#: string value the quotes would be escaped). A class without it cannot be the global default.
_GLOBAL_DEFAULT_JSON: Final = b'"globalDefault":true'
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

    def __init__(
        self, validator: BuiltinValidator | None = None, storage: Storage | None = None
    ) -> None:
        super().__init__(validator)
        #: Where the admission plugins read ServiceAccounts and PriorityClasses (None: nothing
        #: is stored, as for a pod built outside a server).
        self._storage = storage

    def _read(self, root: str) -> ObjectReader:
        def read(namespace: str | None, name: str) -> dict[str, Any] | None:
            if self._storage is None:
                return None
            key = f"{root}{namespace}/{name}" if namespace is not None else f"{root}{name}"
            record = self._storage.get(key)
            return decode(record.value) if record is not None else None

        return read

    def _default_candidates(self) -> list[Mapping[str, Any]]:
        """The stored PriorityClasses that may be the global default, decoded (a pod without a
        class is created per Deployment replica: decoding every class each time cost ~3 % of a
        burst's CPU)."""
        if self._storage is None:
            return []
        return [
            decode(r.value)
            for r in self._storage.list(PRIORITY_CLASSES_ROOT)
            if _GLOBAL_DEFAULT_JSON in r.value
        ]

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            # kube-apiserver's default mutating admission plugins, in their order.
            metadata = obj.get("metadata") or {}
            pod_name = str(metadata.get("name") or metadata.get("generateName") or "")
            admit_service_account(
                spec, str(metadata.get("namespace") or ""), self._read(SERVICE_ACCOUNTS_ROOT)
            )
            default_tolerations(spec)
            admit_priority(
                spec, pod_name, self._read(PRIORITY_CLASSES_ROOT), self._default_candidates
            )
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
        if subresource == "status":
            return []
        errors = validate_pod_spec(obj) + validate_ephemeral_containers(obj)
        if old is None:
            errors += validate_ephemeral_create(obj)
        elif subresource == "ephemeralcontainers":
            errors += validate_ephemeral_update(obj, old)
        elif subresource == "":
            errors += validate_pod_update(obj, old)
        return errors

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
