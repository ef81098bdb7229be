"""Facts about ReplicaSet dicts that the Deployment controller reads."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from setpoint.api.times import parse_time
from setpoint.cluster.controllers.workload_pods.template_hash import go_zero_stripped

__all__ = [
    "POD_TEMPLATE_HASH_LABEL",
    "REVISION_ANNOTATION",
    "available_replicas",
    "by_creation",
    "created_at",
    "equal_ignore_hash",
    "is_active",
    "ready_replicas",
    "revision_of",
    "spec_replicas",
    "status_replicas",
    "sum_available",
    "sum_ready",
    "sum_spec_replicas",
    "sum_status_replicas",
]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"

_EPOCH = datetime(1, 1, 1, tzinfo=UTC)


def spec_replicas(rs: Mapping[str, Any]) -> int:
    """``spec.replicas`` (1 when unset, the API default)."""
    value = (rs.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _status_int(rs: Mapping[str, Any], field: str) -> int:
    return int((rs.get("status") or {}).get(field) or 0)


def status_replicas(rs: Mapping[str, Any]) -> int:
    """``status.replicas``."""
    return _status_int(rs, "replicas")


def ready_replicas(rs: Mapping[str, Any]) -> int:
    """``status.readyReplicas``."""
    return _status_int(rs, "readyReplicas")


def available_replicas(rs: Mapping[str, Any]) -> int:
    """``status.availableReplicas``."""
    return _status_int(rs, "availableReplicas")


def sum_spec_replicas(sets: Iterable[Mapping[str, Any] | None]) -> int:
    """``GetReplicaCountForReplicaSets``: the sum of ``spec.replicas``."""
    return sum(spec_replicas(rs) for rs in sets if rs is not None)


def sum_status_replicas(sets: Iterable[Mapping[str, Any] | None]) -> int:
    """``GetActualReplicaCountForReplicaSets``: the sum of ``status.replicas``."""
    return sum(status_replicas(rs) for rs in sets if rs is not None)


def sum_ready(sets: Iterable[Mapping[str, Any] | None]) -> int:
    """The sum of ``status.readyReplicas``."""
    return sum(ready_replicas(rs) for rs in sets if rs is not None)


def sum_available(sets: Iterable[Mapping[str, Any] | None]) -> int:
    """The sum of ``status.availableReplicas``."""
    return sum(available_replicas(rs) for rs in sets if rs is not None)


def is_active(rs: Mapping[str, Any] | None) -> bool:
    """``FilterActiveReplicaSets``: a ReplicaSet that asks for pods."""
    return rs is not None and spec_replicas(rs) > 0


def created_at(obj: Mapping[str, Any]) -> datetime:
    """``metadata.creationTimestamp`` (the zero time when missing)."""
    text = (obj.get("metadata") or {}).get("creationTimestamp")
    try:
        return parse_time(text) if isinstance(text, str) and text else _EPOCH
    except ValueError:
        return _EPOCH


def by_creation(sets: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``ReplicaSetsByCreationTimestamp``: oldest first, ties by name."""
    return sorted(sets, key=lambda rs: (created_at(rs), rs["metadata"]["name"]))


def revision_of(rs: Mapping[str, Any]) -> int:
    """The ``deployment.kubernetes.io/revision`` annotation (0 when missing or invalid)."""
    text = ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION_ANNOTATION)
    try:
        return int(str(text)) if text is not None else 0
    except ValueError:
        return 0


def _without_hash(template: Mapping[str, Any] | None) -> dict[str, Any]:
    result: dict[str, Any] = go_zero_stripped(copy.deepcopy(dict(template or {})))
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        labels = metadata.get("labels")
        if isinstance(labels, dict):
            labels.pop(POD_TEMPLATE_HASH_LABEL, None)
            if not labels:
                metadata.pop("labels")
        if not metadata:
            result.pop("metadata")
    return result


def equal_ignore_hash(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """``EqualIgnoreHash``: two pod templates are equal apart from the pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)
