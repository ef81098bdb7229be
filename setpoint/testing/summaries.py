"""One short line about what a wait saw last, for :class:`WaitTimeout` messages.

A failed ``wait_for`` must say what it was waiting for and what it saw, in a line a person
reads: an object is its kind, namespace/name, resourceVersion and generation, then its status
(conditions as ``Type=Status(Reason)``, other fields as ``key=value``), never its
``managedFields`` or its spec; a list is its length and the first few names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from setpoint.api.meta import as_mapping

__all__ = ["summarize"]

#: Longest summary of one value; a longer one is cut with an ellipsis.
MAX_SUMMARY: Final = 400
#: Items of a list named in a summary.
LISTED_ITEMS: Final = 5


def _cut(text: str, limit: int = MAX_SUMMARY) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_object(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("metadata"), Mapping)


def _as_object(value: Any) -> Mapping[str, Any] | None:
    if _is_object(value):
        return value  # type: ignore[no-any-return]
    try:
        mapping = as_mapping(value)
    except TypeError:
        return None
    return mapping if _is_object(mapping) else None


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    name = metadata.get("name") or metadata.get("generateName") or "?"
    namespace = metadata.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def _condition(condition: Mapping[str, Any]) -> str:
    reason = condition.get("reason")
    text = f"{condition.get('type')}={condition.get('status')}"
    return f"{text}({reason})" if reason else text


def _status(status: Any) -> str:
    if not isinstance(status, Mapping) or not status:
        return "no status"
    parts = []
    for key, value in status.items():
        if key == "conditions" and isinstance(value, Sequence):
            conditions = [_condition(c) for c in value if isinstance(c, Mapping)]
            parts.append(f"conditions [{', '.join(conditions)}]")
        elif isinstance(value, Mapping):
            parts.append(f"{key}=<{len(value)} keys>")
        elif isinstance(value, list):
            parts.append(f"{key}=<{len(value)} items>")
        else:
            parts.append(f"{key}={value}")
    return "status " + ", ".join(parts)


def _object(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    facts = [f"resourceVersion {metadata.get('resourceVersion')}"]
    if metadata.get("generation") is not None:
        facts.append(f"generation {metadata['generation']}")
    if metadata.get("deletionTimestamp"):
        facts.append("being deleted")
    kind = obj.get("kind") or "object"
    return f"{kind} {_name(obj)} ({', '.join(facts)}): {_status(obj.get('status'))}"


def summarize(value: Any) -> str:
    """A line about ``value``: an object, a list of objects, an error, or its cut ``repr``."""
    if value is None:
        return "nothing (None)"
    if isinstance(value, BaseException):
        return _cut(f"{type(value).__name__}: {value}")
    obj = _as_object(value)
    if obj is not None:
        return _cut(_object(obj))
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        objects = [_as_object(item) for item in value]
        if value and all(item is not None for item in objects):
            names = [f"{item.get('kind') or 'object'} {_name(item)}" for item in objects if item]
            more = f", … {len(names) - LISTED_ITEMS} more" if len(names) > LISTED_ITEMS else ""
            return _cut(f"{len(names)} items: {', '.join(names[:LISTED_ITEMS])}{more}")
        if not value:
            return "an empty list"
    return _cut(repr(value))
