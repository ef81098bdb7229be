"""Secret values kept out of debug feeds: the reconcile trace and the local cluster's audit feed.

A core/v1 Secret's ``data`` and ``stringData`` values are replaced by ``"<redacted>"`` (the keys
stay, so a reader still sees which entries exist or changed), and so is kubectl's
``last-applied-configuration`` annotation, which holds a copy of them. A JSON patch between two
Secrets is made from the real objects first (so a changed value still shows up as a
``replace``), then its values under those fields are redacted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["REDACTED", "is_secret", "redact_patch", "redact_secret"]

#: What a redacted value reads as.
REDACTED: Final = "<redacted>"
_VALUE_FIELDS: Final = ("data", "stringData")
_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def is_secret(obj: Mapping[str, Any] | None) -> bool:
    """True for a core/v1 Secret."""
    return obj is not None and obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def redact_secret(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its Secret values redacted (a shallow copy; ``obj`` itself is left as is)."""
    if not is_secret(obj):
        return obj
    redacted = dict(obj)
    for field in _VALUE_FIELDS:
        values = obj.get(field)
        if isinstance(values, Mapping):
            redacted[field] = dict.fromkeys(values, REDACTED)
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        annotations = metadata.get("annotations")
        if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
            redacted["metadata"] = {
                **metadata,
                "annotations": {**annotations, _LAST_APPLIED: REDACTED},
            }
    return redacted


def redact_patch(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A JSON patch between two Secrets with the values it sets redacted where they hold
    Secret values (at, under or above ``data``, ``stringData`` and the annotation)."""
    redacted: list[dict[str, Any]] = []
    for operation in operations:
        if "value" in operation:
            path = str(operation.get("path", ""))
            tokens = [_unescape(token) for token in path.split("/")[1:]] if path else []
            operation = {**operation, "value": _redact_at(tokens, operation["value"])}
        redacted.append(operation)
    return redacted


def _redact_at(tokens: list[str], value: Any) -> Any:
    """``value``, found at ``tokens`` in a Secret, with the Secret values in it redacted."""
    if not tokens:
        return redact_secret(value) if isinstance(value, dict) else value
    head, rest = tokens[0], tokens[1:]
    if head in _VALUE_FIELDS:
        if not rest and isinstance(value, Mapping):
            return dict.fromkeys(value, REDACTED)
        return REDACTED
    if head != "metadata":
        return value
    if not rest:
        if isinstance(value, Mapping):
            return redact_secret({"kind": "Secret", "apiVersion": "v1", "metadata": value})[
                "metadata"
            ]
        return value
    if rest[0] != "annotations":
        return value
    if len(rest) == 1:
        if isinstance(value, Mapping) and _LAST_APPLIED in value:
            return {**value, _LAST_APPLIED: REDACTED}
        return value
    return REDACTED if rest[1] == _LAST_APPLIED else value


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")
