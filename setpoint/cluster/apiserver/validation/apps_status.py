"""Status writes (``/status``) of Deployments, ReplicaSets, StatefulSets and DaemonSets
(``Validate<Kind>StatusUpdate``, 1.32): counts are non-negative and consistent, and
``collisionCount`` never goes down."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.validation.selectors import non_negative

_OVER_REPLICAS: Final = "cannot be greater than status.replicas"


def _status(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    status = obj.get("status") if obj is not None else None
    return status if isinstance(status, dict) else {}


def _count(status: Mapping[str, Any], key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _non_negative(status: Mapping[str, Any], keys: tuple[str, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in keys:
        errors += non_negative(status.get(key), f"status.{key}")
    return errors


def _not_over(
    status: Mapping[str, Any], keys: tuple[str, ...], limit: str, message: str
) -> list[FieldError]:
    return [
        fe.invalid(f"status.{key}", _count(status, key), message)
        for key in keys
        if _count(status, key) > _count(status, limit)
    ]


def _collision_count(status: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    new_value = status.get("collisionCount")
    old_value = _status(old).get("collisionCount")
    if isinstance(old_value, int) and (not isinstance(new_value, int) or new_value < old_value):
        shown = new_value if isinstance(new_value, int) else 0
        return [fe.invalid("status.collisionCount", shown, "cannot be decremented")]
    return []


def validate_deployment_status(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateDeploymentStatusUpdate``."""
    status = _status(obj)
    errors = _non_negative(
        status,
        ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
         "availableReplicas", "unavailableReplicas", "collisionCount"),
    )  # fmt: skip
    errors += _not_over(
        status,
        ("updatedReplicas", "readyReplicas", "availableReplicas"),
        "replicas",
        _OVER_REPLICAS,
    )
    errors += _not_over(
        status, ("availableReplicas",), "readyReplicas", "cannot be greater than readyReplicas"
    )
    return errors + _collision_count(status, old)


def validate_replica_set_status(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> list[FieldError]:
    """``ValidateReplicaSetStatusUpdate``."""
    status = _status(obj)
    errors = _non_negative(
        status,
        ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
         "observedGeneration"),
    )  # fmt: skip
    errors += _not_over(
        status,
        ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
        "replicas",
        _OVER_REPLICAS,
    )
    return errors + _not_over(
        status, ("availableReplicas",), "readyReplicas", "cannot be greater than readyReplicas"
    )


def validate_stateful_set_status(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> list[FieldError]:
    """``ValidateStatefulSetStatusUpdate``."""
    status = _status(obj)
    errors = _non_negative(
        status,
        ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
         "observedGeneration", "collisionCount"),
    )  # fmt: skip
    errors += _not_over(
        status,
        ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
        "replicas",
        _OVER_REPLICAS,
    )
    errors += _not_over(
        status,
        ("availableReplicas",),
        "readyReplicas",
        "cannot be greater than status.readyReplicas",
    )
    return errors + _collision_count(status, old)


def validate_daemon_set_status(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateDaemonSetStatusUpdate``."""
    status = _status(obj)
    errors = _non_negative(
        status,
        ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
         "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
         "collisionCount"),
    )  # fmt: skip
    return errors + _collision_count(status, old)
