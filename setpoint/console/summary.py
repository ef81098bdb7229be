"""An object's status at a glance: the row the Resources view shows for it.

Phase (``status.phase``, or ``status.state``), the conditions (type, status, reason; the ones
that are not as expected first) and replicas ready/desired (a Pod's ready containers) when the
object has them. What is not there is left out; nothing is invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["age_seconds", "object_row"]

#: Conditions whose ``True`` is bad news (everything else is good when ``True``).
NEGATIVE_CONDITIONS = frozenset(
    {"Failed", "Degraded", "Stalled", "MemoryPressure", "DiskPressure", "PIDPressure",
     "NetworkUnavailable", "ReplicaFailure", "Terminating"}
)  # fmt: skip


def age_seconds(timestamp: object, now: datetime | None = None) -> float | None:
    """Seconds since an RFC 3339 timestamp, or None when it is missing or malformed."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    try:
        when = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, ((now or datetime.now(UTC)) - when).total_seconds())


def _conditions(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for condition in status.get("conditions") or []:
        if not isinstance(condition, Mapping) or not isinstance(condition.get("type"), str):
            continue
        kind = str(condition["type"])
        value = str(condition.get("status", "Unknown"))
        healthy = (value == "True") != (kind in NEGATIVE_CONDITIONS) if value != "Unknown" else None
        found.append(
            {
                "type": kind,
                "status": value,
                "reason": str(condition.get("reason") or ""),
                "message": str(condition.get("message") or ""),
                "healthy": healthy,
            }
        )
    found.sort(key=lambda c: c["healthy"] is not False)
    return found


def _replicas(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str | None:
    containers = status.get("containerStatuses")
    if isinstance(containers, list) and containers:  # a Pod: its ready containers
        ready = sum(1 for c in containers if isinstance(c, Mapping) and c.get("ready"))
        return f"{ready}/{len(containers)}"
    desired = spec.get("replicas")
    if not isinstance(desired, int) or isinstance(desired, bool):
        return None
    ready = status.get("readyReplicas", status.get("availableReplicas", 0))
    return f"{ready if isinstance(ready, int) else 0}/{desired}"


def object_row(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The page's row for one object: identity, age, phase, replicas and conditions."""
    metadata = obj.get("metadata") or {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    status = obj.get("status") if isinstance(obj.get("status"), Mapping) else {}
    assert isinstance(spec, Mapping) and isinstance(status, Mapping)
    phase = status.get("phase", status.get("state"))
    return {
        "name": str(metadata.get("name", "")),
        "namespace": metadata.get("namespace"),
        "uid": metadata.get("uid"),
        "resourceVersion": metadata.get("resourceVersion"),
        "created": metadata.get("creationTimestamp"),
        "deleting": bool(metadata.get("deletionTimestamp")),
        "phase": str(phase) if isinstance(phase, str | int) and phase != "" else None,
        "replicas": _replicas(spec, status),
        "conditions": _conditions(status),
        "owners": [
            {"kind": ref.get("kind"), "name": ref.get("name")}
            for ref in metadata.get("ownerReferences") or []
            if isinstance(ref, Mapping)
        ],
    }
