"""Trace records and their JSON (the shape the trace contract gives, camelCase).

A record is made on the hot path, so it keeps what it was given as it was given — tuples,
the key, the time as a float — and turns them into the contract's JSON only when it is first
read (then keeps the bytes).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from setpoint.api.gvk import ObjectKey

__all__ = ["Ref", "TraceFilter", "TraceRecord", "ref_json", "rfc3339_micro"]

#: An object as records name it: ``(apiVersion, kind, namespace, name, uid)``.
Ref = tuple[str, str, str | None, str, str | None]

_ENCODER = msgspec.json.Encoder()
_now = time.time


def ref_json(ref: Ref) -> dict[str, Any]:
    """The ``object`` of a record."""
    return {
        "apiVersion": ref[0],
        "kind": ref[1],
        "namespace": ref[2] or None,
        "name": ref[3],
        "uid": ref[4] or None,
    }


def key_ref(kind: tuple[str, str], key: ObjectKey | str) -> Ref:
    """The primary object ``key`` of a controller whose primary kind is ``kind``."""
    if isinstance(key, str):
        namespace, _, name = key.rpartition("/")  # the log context's "namespace/name"
        return (kind[0], kind[1], namespace or None, name, None)
    return (kind[0], kind[1], key[0], key[1], None)


#: The names of each record type's own fields, in the order of ``TraceRecord.values``
#: (``key`` and ``reconcileId`` come from the record itself, see :meth:`TraceRecord.to_json`).
FIELD_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "watch": ("eventType", "resourceVersion", "ownWrite"),
    "enqueue": ("key", "cause", "ownWrite", "deduplicated", "delaySeconds"),
    "dequeue": ("key", "queueWaitSeconds", "retries"),
    "reconcileStart": ("key", "reconcileId"),
    "reconcileEnd": (
        "key",
        "reconcileId",
        "durationSeconds",
        "result",
        "requeueAfterSeconds",
        "error",
        "backoffSeconds",
    ),
    "write": ("reconcileId", "verb", "resourceVersion", "fieldManager", "diff"),
    "event": ("reconcileId", "eventType", "reason", "message"),
}
#: Fields written only when they have a value.
_OPTIONAL: Final = frozenset({"delaySeconds"})


class TraceRecord(msgspec.Struct, gc=False):
    """One step of an event's way through a controller.

    Made on the hot path, so it holds plain values: ``values`` are the type's own fields in
    the order of :data:`FIELD_NAMES` (``key`` and ``reconcileId`` are filled in from ``object``
    and ``reconcile_id``; a ``cause`` is a tuple, a write's ``diff`` a function making it).
    ``primary`` is the primary object of the reconcile a ``write`` or ``event`` belongs to.
    Not tracked by the garbage collector (a full ring would otherwise be walked by every full
    collection); it holds no reference cycles.
    """

    type: str
    controller: str | None
    object: Ref
    reconcile_id: str | None
    values: tuple[Any, ...]
    primary: Ref | None = None
    time: float = msgspec.field(default_factory=_now)
    encoded: bytes | None = None

    def to_json(self, seq: int) -> bytes:
        """The record as JSON (encoded once, then kept)."""
        encoded = self.encoded
        if encoded is not None:
            return encoded
        ref = self.object
        document: dict[str, Any] = {
            "seq": seq,
            "time": rfc3339_micro(self.time),
            "type": self.type,
            "controller": self.controller,
            "object": ref_json(ref),
            "reconcileId": self.reconcile_id,
        }
        if self.primary is not None:
            document["primary"] = ref_json(self.primary)
        for name, value in zip(FIELD_NAMES[self.type], self.values, strict=False):
            if name == "key":
                value = f"{ref[2]}/{ref[3]}" if ref[2] else ref[3]
            elif name == "reconcileId":
                value = self.reconcile_id
            elif name == "cause":
                value = _cause_json(value)
            elif name == "diff" and callable(value):
                value = value()
            elif value is None and name in _OPTIONAL:
                continue
            document[name] = value
        encoded = self.encoded = _ENCODER.encode(document)
        self.values = ()  # the JSON holds them now (a write's objects are let go)
        return encoded


def _cause_json(cause: tuple[str, str | None, Ref | None, str | None]) -> dict[str, Any]:
    kind, handler, source, event_type = cause
    return {
        "kind": kind,
        "handler": handler,
        "source": None
        if source is None
        else {
            "apiVersion": source[0],
            "kind": source[1],
            "namespace": source[2] or None,
            "name": source[3],
        },
        "eventType": event_type,
    }


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

    def _object_matches(self, ref: Ref | None) -> bool:
        if ref is None:
            return False
        return (
            (self.kind is None or ref[1] == self.kind)
            and (self.namespace is None or ref[2] == self.namespace)
            and (self.name is None or ref[3] == self.name)
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
