"""Which stored object a request changed, for the audit feed: the state before and after.

The HTTP handler sets :data:`WRITE_CAPTURE` to a fresh :class:`WriteCapture` while it serves a
mutating request; :class:`~.object_operations.ObjectOperations` tells it about each write it
commits (one context variable read per write when nobody captures). Only the request's first
object counts: writes that follow it to other objects (a kind's reaction, run in tasks that
inherit the variable) are not the request's own.
"""

from __future__ import annotations

import contextvars
from typing import Any

import msgspec

from setpoint.cluster.apiserver.registry.served_resources import ServedResource

__all__ = ["WRITE_CAPTURE", "WriteCapture", "stored_identity"]

_ENCODER = msgspec.json.Encoder()


class WriteCapture:
    """The stored object one request changed: its JSON before (None: created) and after
    (None: deleted), and the revision of the last write."""

    __slots__ = ("_first", "after", "before", "resource", "revision", "writes")

    def __init__(self) -> None:
        self.resource: ServedResource | None = None
        self.before: bytes | None = None
        self.after: bytes | None = None
        self.revision = 0
        self.writes = 0
        # The first write's JSON (before, else after): its key is worked out only if another
        # write follows (most requests make one).
        self._first: bytes | None = None

    def wrote(
        self, resource: ServedResource, old: dict[str, Any] | None, new: bytes | None, revision: int
    ) -> None:
        """A write was committed (``old`` as it was stored, ``new`` its JSON)."""
        if self.writes == 0:
            self.resource = resource
            # Encoded (in C) rather than kept: bytes are a fraction of a decoded object's size.
            self.before = _ENCODER.encode(old) if old is not None else None
            self._first = self.before if self.before is not None else new
        elif self._first is None or _key(resource, old, new) != _key(
            self.resource, None, self._first
        ):
            return  # another object's write (a reaction): not the request's own
        self.after = new
        self.revision = revision
        self.writes += 1


class _Metadata(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""


class _Named(msgspec.Struct):
    metadata: _Metadata = msgspec.field(default_factory=_Metadata)


_NAMED = msgspec.json.Decoder(_Named)


def stored_identity(value: bytes) -> tuple[str, str, str]:
    """``(name, namespace, uid)`` of a stored object's JSON (only those fields are decoded)."""
    metadata = _NAMED.decode(value).metadata
    return metadata.name, metadata.namespace, metadata.uid


def _key(resource: ServedResource | None, old: dict[str, Any] | None, new: bytes | None) -> str:
    """The storage key of the written object (only its name is decoded from ``new``)."""
    if old is not None:
        metadata = old.get("metadata") or {}
        name, namespace = str(metadata.get("name") or ""), metadata.get("namespace") or None
    elif new is not None:
        named = _NAMED.decode(new).metadata
        name, namespace = named.name, named.namespace or None
    else:
        return ""
    return resource.storage_key(namespace, name) if resource is not None else ""


#: The capture of the request being served (None: nobody captures).
WRITE_CAPTURE: contextvars.ContextVar[WriteCapture | None] = contextvars.ContextVar(
    "setpoint_write_capture", default=None
)
