"""Decoding of list pages and watch event lines, keeping each object raw until it is needed.

The envelope (list metadata, event type) is decoded eagerly; each object stays a ``msgspec.Raw``
view into the received bytes until :class:`~setpoint.cache.cached_object.ObjectDecoder` turns it
into a compact :class:`~setpoint.cache.cached_object.CachedObject` (which copies what it keeps,
so no page buffer outlives its decoding).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

__all__ = [
    "BOOKMARK",
    "ERROR",
    "EVENT_TYPES",
    "ListMeta",
    "ListPage",
    "WatchEvent",
    "WireDecodeError",
    "decode_list_page",
    "decode_status",
    "decode_watch_event",
    "decode_watch_event_fields",
    "object_key_of",
    "resource_version_of",
]

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"
BOOKMARK: Final = "BOOKMARK"
ERROR: Final = "ERROR"
EVENT_TYPES: Final = frozenset({ADDED, MODIFIED, DELETED, BOOKMARK, ERROR})


class WireDecodeError(ValueError):
    """A list page or watch event line is not what the API server protocol says it must be."""


class ListMeta(msgspec.Struct, frozen=True, rename="camel"):
    """``metadata`` of a list: the snapshot's resourceVersion and the continue token."""

    resource_version: str = ""
    # ``continue`` is a Python keyword, hence the explicit wire name.
    continue_: str = msgspec.field(default="", name="continue")


class ListPage(msgspec.Struct, frozen=True):
    """One page of a list response; ``items`` are raw views into the page bytes."""

    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[msgspec.Raw] | None = None
    kind: str = ""


class WatchEvent(msgspec.Struct, frozen=True):
    """One watch event line: ``type`` and the raw ``object``."""

    type: str
    object: msgspec.Raw


class WatchEventFields(msgspec.Struct, frozen=True):
    """One watch event line with its object split into raw top-level fields."""

    type: str
    object: dict[str, msgspec.Raw]


class _ObjectHead(msgspec.Struct, frozen=True):
    """Just enough of an object to read its resourceVersion (bookmarks) and its key."""

    metadata: _HeadMeta | None = None


class _HeadMeta(msgspec.Struct, frozen=True, rename="camel"):
    resource_version: str = ""
    name: str = ""
    namespace: str = ""


_LIST_DECODER: Final = msgspec.json.Decoder(ListPage)
_EVENT_DECODER: Final = msgspec.json.Decoder(WatchEvent)
_EVENT_FIELDS_DECODER: Final = msgspec.json.Decoder(WatchEventFields)
_HEAD_DECODER: Final = msgspec.json.Decoder(_ObjectHead)
_ANY_DECODER: Final = msgspec.json.Decoder()


def decode_list_page(raw: bytes) -> ListPage:
    """Decode a list response body; raises :class:`WireDecodeError` if it is not a list."""
    try:
        page = _LIST_DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        raise WireDecodeError(f"invalid list response: {exc}") from exc
    return page


def decode_watch_event(line: bytes) -> WatchEvent:
    """Decode one watch event line; raises :class:`WireDecodeError` naming the problem."""
    try:
        event = _EVENT_DECODER.decode(line)
    except msgspec.DecodeError as exc:
        raise WireDecodeError(f"invalid watch event: {exc}: {_quote(line)}") from exc
    if event.type not in EVENT_TYPES:
        raise WireDecodeError(f"invalid watch event: unknown type {event.type!r}")
    return event


def decode_watch_event_fields(line: bytes) -> WatchEventFields | None:
    """Decode one watch event line whose object is a JSON object, splitting the object into
    raw fields in the same pass; None for any other line (use :func:`decode_watch_event`)."""
    try:
        return _EVENT_FIELDS_DECODER.decode(line)
    except msgspec.DecodeError:
        return None


def resource_version_of(raw: msgspec.Raw | bytes) -> str:
    """``metadata.resourceVersion`` of a raw object ("" when absent)."""
    head = _HEAD_DECODER.decode(raw)
    return head.metadata.resource_version if head.metadata is not None else ""


def object_key_of(raw: msgspec.Raw | bytes) -> tuple[str, str] | None:
    """``(namespace or "", name)`` of a raw object, or None when even that cannot be read."""
    try:
        head = _HEAD_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    if head.metadata is None or not head.metadata.name:
        return None
    return head.metadata.namespace, head.metadata.name


def decode_status(raw: msgspec.Raw | bytes) -> dict[str, Any]:
    """The ``Status`` object of an ERROR event as a dict (``{}`` if it is not an object)."""
    try:
        decoded = _ANY_DECODER.decode(raw)
    except msgspec.DecodeError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


# Longest piece of a bad line quoted in an error: enough to recognise it, short enough for logs.
_MAX_QUOTED_BYTES: Final = 200


def _quote(line: bytes) -> str:
    text = line[:_MAX_QUOTED_BYTES].decode("utf-8", errors="replace")
    return repr(text + ("..." if len(line) > _MAX_QUOTED_BYTES else ""))
