"""Deployment status and conditions (``sync.go`` ``calculateStatus``, ``progress.go``).

Condition helpers keep upstream's quirks: setting a condition with the same status and reason
changes nothing (times and message stay); an updated condition moves to the end of the list.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from setpoint.api.times import format_time, parse_time
from setpoint.cluster.controllers.deployment.replica_sets import (
    sum_available,
    sum_ready,
    sum_spec_replicas,
    sum_status_replicas,
)
from setpoint.cluster.controllers.deployment.rollout_arithmetic import (
    deployment_replicas,
    max_unavailable,
)

__all__ = [
    "AVAILABLE",
    "NO_PROGRESS_DEADLINE",
    "PROGRESSING",
    "REPLICA_FAILURE",
    "calculate_status",
    "deployment_complete",
    "deployment_progressing",
    "deployment_timed_out",
    "find_condition",
    "has_progress_deadline",
    "new_condition",
    "progress_recheck_delay",
    "remove_condition",
    "rollout_status",
    "set_condition",
]

AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
NO_PROGRESS_DEADLINE = 2**31 - 1
"""``progressDeadlineSeconds: MaxInt32`` means no deadline."""


def new_condition(
    type: str, status: str, reason: str, message: str, now: datetime
) -> dict[str, Any]:
    """A condition with both times set to ``now`` (``NewDeploymentCondition``)."""
    stamp = format_time(now)
    return {
        "type": type,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def find_condition(status: Mapping[str, Any], type: str) -> dict[str, Any] | None:
    """The condition of ``type`` in ``status.conditions``."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == type:
            return condition  # type: ignore[no-any-return]
    return None


def remove_condition(status: dict[str, Any], type: str) -> None:
    """Drop the condition of ``type``."""
    conditions = [c for c in status.get("conditions") or () if c.get("type") != type]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def set_condition(status: dict[str, Any], condition: dict[str, Any]) -> None:
    """``SetDeploymentCondition``: no-op for the same status and reason; keeps the transition."""
    current = find_condition(status, condition["type"])
    if current is not None and current["status"] == condition["status"]:
        if current.get("reason") == condition["reason"]:
            return
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    others = [c for c in status.get("conditions") or () if c.get("type") != condition["type"]]
    status["conditions"] = [*others, condition]


def has_progress_deadline(deployment: Mapping[str, Any]) -> bool:
    """Whether ``progressDeadlineSeconds`` is set and not MaxInt32."""
    value = (deployment.get("spec") or {}).get("progressDeadlineSeconds", 600)
    return value is not None and int(value) != NO_PROGRESS_DEADLINE


def _replica_failure(
    all_sets: Sequence[Mapping[str, Any]], new_rs: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    ordered = ([new_rs] if new_rs is not None else []) + [rs for rs in all_sets if rs is not new_rs]
    for rs in ordered:
        for condition in (rs.get("status") or {}).get("conditions") or ():
            if condition.get("type") == REPLICA_FAILURE and condition.get("status") == "True":
                stamp = condition.get("lastTransitionTime")
                return {
                    "type": REPLICA_FAILURE,
                    "status": "True",
                    "lastUpdateTime": stamp,
                    "lastTransitionTime": stamp,
                    "reason": condition.get("reason", ""),
                    "message": condition.get("message", ""),
                }
    return None


def calculate_status(
    deployment: Mapping[str, Any],
    all_sets: Sequence[Mapping[str, Any]],
    new_rs: Mapping[str, Any] | None,
    now: datetime,
) -> dict[str, Any]:
    """``calculateStatus``: counts from the ReplicaSets plus the Available condition."""
    old_status = deployment.get("status") or {}
    available = sum_available(all_sets)
    status: dict[str, Any] = {
        "observedGeneration": int((deployment.get("metadata") or {}).get("generation") or 0),
        "replicas": sum_status_replicas(all_sets),
        "updatedReplicas": sum_status_replicas([new_rs]),
        "readyReplicas": sum_ready(all_sets),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum_spec_replicas(all_sets) - available),
    }
    if old_status.get("collisionCount") is not None:
        status["collisionCount"] = old_status["collisionCount"]
    if old_status.get("conditions"):
        status["conditions"] = copy.deepcopy(old_status["conditions"])
    if available >= deployment_replicas(deployment) - max_unavailable(deployment):
        condition = new_condition(
            AVAILABLE,
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        )
    else:
        condition = new_condition(
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    set_condition(status, condition)
    return status


def deployment_complete(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """All replicas updated and available, and the latest generation observed."""
    replicas = deployment_replicas(deployment)
    generation = int((deployment.get("metadata") or {}).get("generation") or 0)
    return (
        int(status.get("updatedReplicas") or 0) == replicas
        and int(status.get("replicas") or 0) == replicas
        and int(status.get("availableReplicas") or 0) == replicas
        and int(status.get("observedGeneration") or 0) >= generation
    )


def deployment_progressing(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """More updated, ready or available pods than last time, or fewer old ones."""
    old = deployment.get("status") or {}

    def field(source: Mapping[str, Any], name: str) -> int:
        return int(source.get(name) or 0)

    old_old = field(old, "replicas") - field(old, "updatedReplicas")
    new_old = field(status, "replicas") - field(status, "updatedReplicas")
    return (
        field(status, "updatedReplicas") > field(old, "updatedReplicas")
        or new_old < old_old
        or field(status, "readyReplicas") > field(old, "readyReplicas")
        or field(status, "availableReplicas") > field(old, "availableReplicas")
    )


def _deadline(deployment: Mapping[str, Any]) -> timedelta:
    return timedelta(
        seconds=int((deployment.get("spec") or {}).get("progressDeadlineSeconds", 600))
    )


def deployment_timed_out(
    deployment: Mapping[str, Any], status: Mapping[str, Any], now: datetime
) -> bool:
    """The Progressing condition was last updated longer ago than the progress deadline."""
    if not has_progress_deadline(deployment):
        return False
    condition = find_condition(status, PROGRESSING)
    if condition is None or condition.get("reason") == "NewReplicaSetAvailable":
        return False
    if condition.get("reason") == "ProgressDeadlineExceeded":
        return True
    try:
        since = parse_time(str(condition.get("lastUpdateTime")))
    except ValueError:
        return False
    return since + _deadline(deployment) < now


def rollout_status(
    deployment: Mapping[str, Any],
    all_sets: Sequence[Mapping[str, Any]],
    new_rs: Mapping[str, Any] | None,
    now: datetime,
) -> dict[str, Any]:
    """``syncRolloutStatus``: the status with the Progressing and ReplicaFailure conditions."""
    status = calculate_status(deployment, all_sets, new_rs, now)
    if not has_progress_deadline(deployment):
        remove_condition(status, PROGRESSING)
    current = find_condition(deployment.get("status") or {}, PROGRESSING)
    complete_already = (
        status["replicas"] == status["updatedReplicas"]
        and current is not None
        and current.get("reason") == "NewReplicaSetAvailable"
    )
    name = (deployment.get("metadata") or {}).get("name", "")
    subject = (
        f'ReplicaSet "{new_rs["metadata"]["name"]}"'
        if new_rs is not None
        else f'Deployment "{name}"'
    )
    if has_progress_deadline(deployment) and not complete_already:
        if deployment_complete(deployment, status):
            set_condition(
                status,
                new_condition(
                    PROGRESSING,
                    "True",
                    "NewReplicaSetAvailable",
                    f"{subject} has successfully progressed.",
                    now,
                ),
            )
        elif deployment_progressing(deployment, status):
            condition = new_condition(
                PROGRESSING, "True", "ReplicaSetUpdated", f"{subject} is progressing.", now
            )
            if current is not None:
                if current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                remove_condition(status, PROGRESSING)
            set_condition(status, condition)
        elif deployment_timed_out(deployment, status, now):
            set_condition(
                status,
                new_condition(
                    PROGRESSING,
                    "False",
                    "ProgressDeadlineExceeded",
                    f"{subject} has timed out progressing.",
                    now,
                ),
            )
    failure = _replica_failure(all_sets, new_rs)
    if failure is not None:
        set_condition(status, failure)
    else:
        remove_condition(status, REPLICA_FAILURE)
    return status


def progress_recheck_delay(
    deployment: Mapping[str, Any], status: Mapping[str, Any], now: datetime
) -> float | None:
    """``requeueStuckDeployment``: seconds until the progress deadline should be checked again."""
    current = find_condition(deployment.get("status") or {}, PROGRESSING)
    if not has_progress_deadline(deployment) or current is None:
        return None
    if (
        deployment_complete(deployment, status)
        or current.get("reason") == "ProgressDeadlineExceeded"
    ):
        return None
    try:
        since = parse_time(str(current.get("lastUpdateTime")))
    except ValueError:
        return None
    after = (since + _deadline(deployment) - now).total_seconds()
    # Upstream requeues one second after the deadline (rate-limited when it is that close).
    return max(0.0, after) + 1.0
