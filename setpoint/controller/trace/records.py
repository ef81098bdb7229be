"""Trace records and their JSON (the shape the trace contract gives, camelCase)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

__all__ = ["TraceFilter", "TraceRecord", "object_ref", "rfc3339_micro"]

_ENCODER = msgspec.json.Encoder()


def object_ref(
    api_version: str, kind: str, namespace: str | None, name: str, uid: str | None = None
) -> dict[str, Any]:
    """The ``object`` of a record."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "namespace": namespace or None,
        "name": name,
        "uid": uid or None,
    }


class TraceRecord:
    """One step of an event's way through a controller.

    ``fields`` are the type's own fields (see the contract); ``primary`` is the primary object
    of the reconcile a ``write`` or ``event`` belongs to. A write's diff is made when the record
    is first encoded (``diff`` is then a function), not on the reconcile's path.
    """

    __slots__ = (
        "_json",
        "controller",
        "fields",
        "object",
        "primary",
        "reconcile_id",
        "time",
        "type",
    )

    def __init__(
        self,
        type: str,
        controller: str | None,
        obj: dict[str, Any],
        reconcile_id: str | None,
        fields: dict[str, Any],
        primary: dict[str, Any] | None = None,
    ) -> None:
        self.type = type
        self.time = time.time()
        self.controller = controller
        self.object = obj
        self.reconcile_id = reconcile_id
        self.fields = fields
        self.primary = primary
        self._json: bytes | None = None

    def to_json(self, seq: int) -> bytes:
        """The record as JSON (encoded once, then kept)."""
        encoded = self._json
        if encoded is None:
            fields = self.fields
            diff = fields.get("diff")
            if callable(diff):
                fields["diff"] = diff()
            document: dict[str, Any] = {
                "seq": seq,
                "time": rfc3339_micro(self.time),
                "type": self.type,
                "controller": self.controller,
                "object": self.object,
                "reconcileId": self.reconcile_id,
            }
            if self.primary is not None:
                document["primary"] = self.primary
            document.update(fields)
            encoded = self._json = _ENCODER.encode(document)
        return encoded


class TraceFilter:
    """The query's filters: a record matches when its object (or the primary object of its
    reconcile) has the kind, namespace and name given, and it belongs to the controller."""

    __slots__ = ("controller", "kind", "name", "namespace")

    def __init__(self, query: Mapping[str, str]) -> None:
        self.kind = query.get("kind") or None
        self.namespace = query.get("namespace") or None
        self.name = query.get("name") or None
        self.controller = query.get("controller") or None

    @property
    def empty(self) -> bool:
        """True when nothing is filtered."""
        return not (self.kind or self.namespace or self.name or self.controller)

    def _object_matches(self, obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        return (
            (self.kind is None or obj.get("kind") == self.kind)
            and (self.namespace is None or obj.get("namespace") == self.namespace)
            and (self.name is None or obj.get("name") == self.name)
        )

    def __call__(self, record: TraceRecord) -> bool:
        if self.controller is not None and record.controller != self.controller:
            return False
        if self.kind is None and self.namespace is None and self.name is None:
            return True
        return self._object_matches(record.object) or self._object_matches(record.primary)

    @classmethod
    def accepting(cls, query: Mapping[str, str]) -> Callable[[TraceRecord], bool] | None:
        """The filter of ``query``, or None when it filters nothing."""
        made = cls(query)
        return None if made.empty else made


def rfc3339_micro(seconds: float) -> str:
    """RFC 3339 in UTC with microseconds and ``Z`` (``MicroTime``)."""
    whole = int(seconds)
    return f"{_second(whole)}.{int((seconds - whole) * 1_000_000):06d}Z"


@functools.lru_cache(maxsize=64)
def _second(whole: int) -> str:
    # Most records share their second with others: format it once.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
