"""Rollout arithmetic: how many pods a Deployment may add or remove in one step.

Mirrors ``deploymentutil`` (``ResolveFenceposts``, ``MaxSurge``, ``MaxUnavailable``,
``NewRSNewReplicas``, ``GetProportion``) and ``rolling.go`` (``cleanupUnhealthyReplicas``,
``scaleDownOldReplicaSetsForRollingUpdate``). Every function is pure: it returns the new
``spec.replicas`` per ReplicaSet name; the controller writes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from setpoint.cluster.controllers.deployment.replica_sets import (
    available_replicas,
    by_creation,
    created_at,
    is_active,
    spec_replicas,
    sum_available,
    sum_spec_replicas,
)

__all__ = [
    "MAX_REPLICAS_ANNOTATION",
    "IntOrPercentError",
    "active_or_latest",
    "deployment_replicas",
    "is_rolling_update",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "proportional_scale",
    "resolve_fenceposts",
    "round_half_away",
    "scale_down_old_for_rolling_update",
    "scaled_value",
    "unhealthy_cleanup",
]

MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"


class IntOrPercentError(ValueError):
    """An int-or-string field that is neither an integer nor a percentage."""


def round_half_away(value: float) -> int:
    """Go's ``math.Round``: halves go away from zero (Python's ``round`` goes to even)."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` (a missing value counts as 0)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise IntOrPercentError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise IntOrPercentError(
            "invalid value for IntOrString: invalid type: string is not a percentage"
        )
    try:
        percent = int(text[:-1])
    except ValueError as error:
        raise IntOrPercentError(f"invalid value {text!r}: {error}") from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def deployment_replicas(deployment: Mapping[str, Any]) -> int:
    """``spec.replicas`` (1 when unset)."""
    value = (deployment.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _strategy(deployment: Mapping[str, Any]) -> Mapping[str, Any]:
    return (deployment.get("spec") or {}).get("strategy") or {}


def is_rolling_update(deployment: Mapping[str, Any]) -> bool:
    """Whether the strategy is RollingUpdate (the default)."""
    return (_strategy(deployment).get("type") or "RollingUpdate") == "RollingUpdate"


def resolve_fenceposts(
    surge: int | str | None, unavailable: int | str | None, desired: int
) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as pod counts: surge rounds up, unavailable down; never 0/0."""
    surge_count = scaled_value(surge, desired, True)
    unavailable_count = scaled_value(unavailable, desired, False)
    if surge_count == 0 and unavailable_count == 0:
        unavailable_count = 1
    return surge_count, unavailable_count


def _fenceposts(deployment: Mapping[str, Any]) -> tuple[int, int]:
    rolling = _strategy(deployment).get("rollingUpdate") or {}
    return resolve_fenceposts(
        rolling.get("maxSurge", "25%"),
        rolling.get("maxUnavailable", "25%"),
        deployment_replicas(deployment),
    )


def max_surge(deployment: Mapping[str, Any]) -> int:
    """``MaxSurge``: extra pods allowed above the desired count (0 unless RollingUpdate)."""
    if not is_rolling_update(deployment):
        return 0
    return _fenceposts(deployment)[0]


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    """``MaxUnavailable``: pods that may be unavailable (0 unless RollingUpdate; ≤ replicas)."""
    replicas = deployment_replicas(deployment)
    if not is_rolling_update(deployment) or replicas == 0:
        return 0
    return min(_fenceposts(deployment)[1], replicas)


def new_rs_new_replicas(
    deployment: Mapping[str, Any],
    all_sets: Sequence[Mapping[str, Any] | None],
    new_rs: Mapping[str, Any],
) -> int:
    """``NewRSNewReplicas``: the new ReplicaSet's size after one scale-up step."""
    replicas = deployment_replicas(deployment)
    if not is_rolling_update(deployment):
        return replicas
    current = sum_spec_replicas(all_sets)
    max_total = replicas + max_surge(deployment)
    new_size = spec_replicas(new_rs)
    if current >= max_total:
        return new_size
    return new_size + min(max_total - current, replicas - new_size)


def unhealthy_cleanup(old_sets: Sequence[Mapping[str, Any]], max_cleanup: int) -> dict[str, int]:
    """``cleanupUnhealthyReplicas``: shrink old sets by their unavailable pods, oldest first."""
    result: dict[str, int] = {}
    total = 0
    for rs in by_creation(old_sets):
        if total >= max_cleanup:
            break
        size, available = spec_replicas(rs), available_replicas(rs)
        if size == 0 or size == available:
            continue
        count = min(max_cleanup - total, size - available)
        result[rs["metadata"]["name"]] = size - count
        total += count
    return result


def scale_down_old_for_rolling_update(
    deployment: Mapping[str, Any],
    all_sets: Sequence[Mapping[str, Any] | None],
    old_sets: Sequence[Mapping[str, Any]],
) -> dict[str, int]:
    """``scaleDownOldReplicaSetsForRollingUpdate``: remove available old pods above minAvailable."""
    min_available = deployment_replicas(deployment) - max_unavailable(deployment)
    available = sum_available(all_sets)
    if available <= min_available:
        return {}
    to_remove = available - min_available
    result: dict[str, int] = {}
    total = 0
    for rs in by_creation(old_sets):
        if total >= to_remove:
            break
        size = spec_replicas(rs)
        if size == 0:
            continue
        count = min(size, to_remove - total)
        result[rs["metadata"]["name"]] = size - count
        total += count
    return result


def _max_replicas_annotation(rs: Mapping[str, Any]) -> int | None:
    text = ((rs.get("metadata") or {}).get("annotations") or {}).get(MAX_REPLICAS_ANNOTATION)
    try:
        return int(str(text)) if text is not None else None
    except ValueError:
        return None


def _fraction(rs: Mapping[str, Any], deployment: Mapping[str, Any]) -> int:
    replicas = deployment_replicas(deployment)
    if replicas == 0:
        return -spec_replicas(rs)
    allowed = replicas + max_surge(deployment)
    annotated = _max_replicas_annotation(rs)
    if annotated is None:
        annotated = int((deployment.get("status") or {}).get("replicas") or 0)
    if annotated == 0:
        return 0
    return round_half_away(spec_replicas(rs) * allowed / annotated) - spec_replicas(rs)


def proportional_scale(
    deployment: Mapping[str, Any], active_sets: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, int], str]:
    """``scale`` for a RollingUpdate mid-rollout: spread a size change over the active sets.

    Returns the new size per ReplicaSet name and the operation (``up``/``down``/``""``).
    """
    replicas = deployment_replicas(deployment)
    allowed = replicas + max_surge(deployment) if replicas > 0 else 0
    to_add = allowed - sum_spec_replicas(active_sets)
    if to_add > 0:
        ordered = sorted(
            active_sets, key=lambda rs: (-spec_replicas(rs), -created_at(rs).timestamp())
        )
        operation = "up"
    elif to_add < 0:
        ordered = sorted(active_sets, key=lambda rs: (-spec_replicas(rs), created_at(rs)))
        operation = "down"
    else:
        ordered, operation = list(active_sets), ""
    sizes: dict[str, int] = {}
    added = 0
    for rs in ordered:
        name = rs["metadata"]["name"]
        proportion = 0
        if to_add != 0 and spec_replicas(rs) != 0 and to_add != added:
            fraction, remaining = _fraction(rs, deployment), to_add - added
            proportion = min(fraction, remaining) if to_add > 0 else max(fraction, remaining)
        sizes[name] = spec_replicas(rs) + proportion
        added += proportion
    if ordered and added != to_add:
        first = ordered[0]["metadata"]["name"]
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes, operation


def active_or_latest(
    new_rs: Mapping[str, Any] | None, old_sets: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``FindActiveOrLatest``: the only active set, or the newest when none is active."""
    if new_rs is None and not old_sets:
        return None
    newest_first = list(reversed(by_creation(old_sets)))
    active: list[Mapping[str, Any]] = [
        rs for rs in [*newest_first, new_rs] if rs is not None and is_active(rs)
    ]
    if not active:
        return new_rs if new_rs is not None else newest_first[0]
    if len(active) == 1:
        return active[0]
    return None
