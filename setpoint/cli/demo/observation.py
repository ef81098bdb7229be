"""What the demo reads from the cluster, and when a sample counts as converged.

A sample is converged when its kind's own notion of done holds: a cnat ``At`` has reached
``DONE``; a ``Foo`` or ``PodSet`` has all its replicas available; a kind that reports conditions
(TDSet, Memcached, MemcachedProxy, and any other example) has ``Ready``, ``Available`` or
``Complete`` (a job's) True.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Observation", "observe"]

#: Condition types that mean "this object has converged", in the order they are looked for.
_DONE_CONDITIONS = ("Ready", "Available", "Complete")


@dataclass(frozen=True, slots=True)
class Observation:
    """One sample as the demo shows it: what it is, a one-word state, and whether it is done."""

    kind: str
    name: str
    state: str
    converged: bool

    @property
    def label(self) -> str:
        """``Kind/name``, as kubectl prints it."""
        return f"{self.kind}/{self.name}"


def _conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        str(condition.get("type")): condition
        for condition in status.get("conditions") or []
        if isinstance(condition, dict)
    }


def _replicas(kind: str, name: str, obj: dict[str, Any], status: dict[str, Any]) -> Observation:
    wanted = (obj.get("spec") or {}).get("replicas", 1)
    available = status.get("availableReplicas") or 0
    return Observation(kind, name, f"{available}/{wanted} available", available == wanted)


def observe(obj: dict[str, Any]) -> Observation:
    """The state of one object, read from what its operator wrote in ``status``."""
    kind = str(obj.get("kind", ""))
    name = str((obj.get("metadata") or {}).get("name", ""))
    status = obj.get("status") or {}
    if kind == "At":
        phase = status.get("phase") or "PENDING"
        return Observation(kind, name, phase, phase == "DONE")
    if kind in ("Foo", "PodSet"):
        return _replicas(kind, name, obj, status)
    conditions = _conditions(status)
    for condition_type in _DONE_CONDITIONS:
        condition = conditions.get(condition_type)
        if condition is not None:
            status_value = str(condition.get("status") or "Unknown")
            reason = condition.get("reason")
            state = f"{condition_type} {status_value}" + (f" ({reason})" if reason else "")
            return Observation(kind, name, state, status_value == "True")
    phase = status.get("phase")
    return Observation(kind, name, str(phase) if phase else "waiting", False)
