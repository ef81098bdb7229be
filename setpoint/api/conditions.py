"""Status conditions (``status.conditions``): the standard way an object reports its state.

A condition is ``{type, status, reason, message, lastTransitionTime, observedGeneration?}``
(``metav1.Condition``). ``status`` is ``True``, ``False`` or ``Unknown``; ``reason`` is a
CamelCase word for programs; ``message`` is for humans. ``lastTransitionTime`` changes only when
``status`` changes, so it tells how long the object has been in its state; updating the reason
or message alone keeps it. ``observedGeneration`` says which ``metadata.generation`` the
condition describes (``kubectl wait`` ignores conditions older than the object's generation).

The list functions work on the list itself; the ``*_status_condition`` functions work on a whole
object and create ``status.conditions`` as needed. Writers return True when something changed,
so callers can skip no-op status writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from datetime import datetime
from typing import Any, Final

from setpoint.api.times import format_time, normalize_time, now_time

__all__ = [
    "CONDITION_FALSE",
    "CONDITION_TRUE",
    "CONDITION_UNKNOWN",
    "find_condition",
    "find_status_condition",
    "is_condition_false",
    "is_condition_true",
    "remove_condition",
    "remove_status_condition",
    "set_condition",
    "set_status_condition",
    "status_condition_met",
]

CONDITION_TRUE: Final = "True"
CONDITION_FALSE: Final = "False"
CONDITION_UNKNOWN: Final = "Unknown"
_STATUSES: Final = (CONDITION_TRUE, CONDITION_FALSE, CONDITION_UNKNOWN)

# The validation metav1.Condition declares in its CRD schema markers.
_TYPE_RE: Final = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])\Z",
    re.ASCII,
)
_TYPE_MAX_LENGTH: Final = 316
_REASON_RE: Final = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?\Z", re.ASCII)
_REASON_MAX_LENGTH: Final = 1024
_MESSAGE_MAX_LENGTH: Final = 32768


def _validate(
    type_: str, status: str, reason: str, message: str, observed_generation: int | None
) -> None:
    if not isinstance(type_, str) or not _TYPE_RE.match(type_) or len(type_) > _TYPE_MAX_LENGTH:
        raise ValueError(
            f"condition type {type_!r} is invalid: must be a CamelCase name such as 'Ready', "
            "optionally with a DNS subdomain prefix ('example.com/Ready'), at most 316 characters"
        )
    if status not in _STATUSES:
        raise ValueError(
            f"condition status {status!r} is invalid: must be one of 'True', 'False', 'Unknown'"
        )
    if not isinstance(reason, str) or not _REASON_RE.match(reason) or len(reason) > 1024:
        raise ValueError(
            f"condition reason {reason!r} is invalid: must be CamelCase such as 'ReplicasReady' "
            "(a letter first, then letters, digits, '_', ',' or ':'), 1 to 1024 characters"
        )
    if not isinstance(message, str) or len(message) > _MESSAGE_MAX_LENGTH:
        raise ValueError("condition message must be a string of at most 32768 characters")
    if observed_generation is not None and (
        isinstance(observed_generation, bool)
        or not isinstance(observed_generation, int)
        or observed_generation < 0
    ):
        raise ValueError(
            f"condition observedGeneration {observed_generation!r} is invalid: "
            "must be a non-negative integer"
        )


def find_condition(conditions: list[Any] | None, type: str) -> dict[str, Any] | None:
    """The condition of ``type`` in ``conditions`` (the stored dict), or None."""
    for condition in conditions or ():
        if isinstance(condition, dict) and condition.get("type") == type:
            return condition
    return None


def is_condition_true(conditions: list[Any] | None, type: str) -> bool:
    """Whether the condition of ``type`` exists with status ``True``."""
    condition = find_condition(conditions, type)
    return condition is not None and condition.get("status") == CONDITION_TRUE


def is_condition_false(conditions: list[Any] | None, type: str) -> bool:
    """Whether the condition of ``type`` exists with status ``False``."""
    condition = find_condition(conditions, type)
    return condition is not None and condition.get("status") == CONDITION_FALSE


def _timestamp(now: datetime | str | None) -> str:
    if now is None:
        return now_time()
    if isinstance(now, datetime):
        return format_time(now)
    return normalize_time(now)


def set_condition(
    conditions: list[Any],
    *,
    type: str,
    status: str,
    reason: str,
    message: str = "",
    observed_generation: int | None = None,
    now: datetime | str | None = None,
) -> bool:
    """Add or update the condition of ``type``; returns True when the list changed.

    ``lastTransitionTime`` is set to ``now`` (default: the current time) for a new condition and
    when ``status`` changes; otherwise it is kept. ``observed_generation=None`` removes the
    field. Raises ``ValueError`` naming the field for an invalid type, status or reason.
    """
    _validate(type, status, reason, message, observed_generation)
    existing = find_condition(conditions, type)
    if existing is None:
        condition: dict[str, Any] = {"type": type, "status": status}
        if observed_generation is not None:
            condition["observedGeneration"] = observed_generation
        condition["lastTransitionTime"] = _timestamp(now)
        condition["reason"] = reason
        condition["message"] = message
        conditions.append(condition)
        return True
    before = dict(existing)
    if existing.get("status") != status:
        existing["status"] = status
        existing["lastTransitionTime"] = _timestamp(now)
    elif not existing.get("lastTransitionTime"):
        existing["lastTransitionTime"] = _timestamp(now)
    existing["reason"] = reason
    existing["message"] = message
    if observed_generation is None:
        existing.pop("observedGeneration", None)
    else:
        existing["observedGeneration"] = observed_generation
    return existing != before


def remove_condition(conditions: list[Any], type: str) -> bool:
    """Remove the condition of ``type``; returns True when it was present."""
    kept = [c for c in conditions if not (isinstance(c, Mapping) and c.get("type") == type)]
    if len(kept) == len(conditions):
        return False
    conditions[:] = kept
    return True


def _status_conditions(obj: Mapping[str, Any]) -> list[Any] | None:
    status = obj.get("status")
    if not isinstance(status, Mapping):
        return None
    conditions = status.get("conditions")
    return conditions if isinstance(conditions, list) else None


def find_status_condition(obj: Mapping[str, Any], type: str) -> dict[str, Any] | None:
    """The condition of ``type`` in ``obj["status"]["conditions"]``, or None."""
    return find_condition(_status_conditions(obj), type)


def set_status_condition(
    obj: MutableMapping[str, Any],
    *,
    type: str,
    status: str,
    reason: str,
    message: str = "",
    observed_generation: int | None = None,
    now: datetime | str | None = None,
) -> bool:
    """:func:`set_condition` on ``obj["status"]["conditions"]``, creating them as needed."""
    _validate(type, status, reason, message, observed_generation)
    status_field = obj.get("status")
    if status_field is None:
        status_field = obj["status"] = {}
    if not isinstance(status_field, MutableMapping):
        raise ValueError(f"status must be an object, not {_json_type(status_field)}")
    conditions = status_field.get("conditions")
    if conditions is None:
        conditions = status_field["conditions"] = []
    if not isinstance(conditions, list):
        raise ValueError(f"status.conditions must be a list, not {_json_type(conditions)}")
    return set_condition(
        conditions,
        type=type,
        status=status,
        reason=reason,
        message=message,
        observed_generation=observed_generation,
        now=now,
    )


def _observed_generation(obj: Mapping[str, Any], condition: Mapping[str, Any]) -> int | None:
    for value in (condition.get("observedGeneration"), _status_field(obj, "observedGeneration")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _status_field(obj: Mapping[str, Any], field: str) -> Any:
    status = obj.get("status")
    return status.get(field) if isinstance(status, Mapping) else None


def status_condition_met(obj: Mapping[str, Any], type: str, status: str = CONDITION_TRUE) -> bool:
    """Whether ``obj`` has condition ``type`` with ``status``, as ``kubectl wait`` decides it.

    Type and status compare case-insensitively, and a condition describing an older generation
    does not count: when ``metadata.generation`` is set, the condition's ``observedGeneration``
    (or else ``status.observedGeneration``) must not be below it.
    """
    metadata = obj.get("metadata")
    generation = metadata.get("generation") if isinstance(metadata, Mapping) else None
    for condition in _status_conditions(obj) or ():
        if not isinstance(condition, Mapping):
            continue
        if str(condition.get("type", "")).lower() != type.lower():
            continue
        if str(condition.get("status", "")).lower() != status.lower():
            continue
        if isinstance(generation, int) and not isinstance(generation, bool):
            observed = _observed_generation(obj, condition)
            if observed is not None and observed < generation:
                return False
        return True
    return False


def remove_status_condition(obj: MutableMapping[str, Any], type: str) -> bool:
    """Remove the condition of ``type`` from ``obj["status"]["conditions"]``."""
    conditions = _status_conditions(obj)
    return remove_condition(conditions, type) if conditions is not None else False


def _json_type(value: Any) -> str:
    # The `type` parameter of the public functions shadows the builtin, hence this helper.
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number"}
    return "null" if value is None else names.get(value.__class__, value.__class__.__name__)
