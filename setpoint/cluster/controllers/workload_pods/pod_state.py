"""Whether a pod is active, ready, available; when it became ready; how often it restarted."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from setpoint.api.times import parse_time

__all__ = [
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "is_pod_terminal",
    "max_restart_count",
    "pod_phase",
    "ready_since",
]


def pod_phase(pod: Mapping[str, Any]) -> str:
    """``status.phase`` ("" when unset)."""
    return str((pod.get("status") or {}).get("phase") or "")


def is_pod_terminal(pod: Mapping[str, Any]) -> bool:
    """Whether the pod ended (phase Succeeded or Failed)."""
    return pod_phase(pod) in ("Succeeded", "Failed")


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """Not terminal and not being deleted (``controller.IsPodActive``)."""
    return not is_pod_terminal(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp")


def _ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition
    return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's Ready condition is True."""
    condition = _ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def ready_since(pod: Mapping[str, Any]) -> datetime | None:
    """When a ready pod's Ready condition last turned True (None if not ready or unknown)."""
    condition = _ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return None
    text = condition.get("lastTransitionTime")
    try:
        return parse_time(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """Ready for at least ``min_ready_seconds`` (``podutil.IsPodAvailable``)."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now


def max_restart_count(pod: Mapping[str, Any]) -> int:
    """The highest ``restartCount`` over the pod's containers."""
    counts = [
        int(status.get("restartCount") or 0)
        for status in (pod.get("status") or {}).get("containerStatuses") or ()
        if isinstance(status, Mapping)
    ]
    return max(counts, default=0)
