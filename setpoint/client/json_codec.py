"""JSON encoding and decoding for the wire, with msgspec.

msgspec is several times faster than the stdlib on Kubernetes objects (see
``shared/reference/python-clients.md``). Encoding normalises integral floats (``3.0``) to
integers: Kubernetes decodes integer fields strictly, so ``replicas: 3.0`` would be rejected,
and ``kubectl wait`` reads ``generation`` as an int64.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import msgspec

from setpoint.api.times import format_micro_time
from setpoint.client.errors import InvalidResponse

__all__ = ["decode", "encode"]

_encoder = msgspec.json.Encoder()


def _normalise(value: Any) -> Any:
    # Walk only containers; scalars other than integral floats pass through untouched. The
    # exact-type checks first: bodies are mostly plain dicts, lists and strings, and the ABC
    # checks below cost several times more.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    # String values, the most common leaves, are kept without a call.
    if kind is dict:
        return {key: item if type(item) is str else _normalise(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) is str else _normalise(item) for item in value]
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        return value
    if isinstance(value, Mapping):
        return {key: _normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    if isinstance(value, datetime.datetime):
        # Six fraction digits suit both kinds of timestamp fields: Time accepts any RFC 3339
        # fraction, while MicroTime (Lease renewTime, Event eventTime) demands exactly six.
        return format_micro_time(value)
    return value


def _plain(container: Any) -> bool:
    """Whether a dict or a list holds only dicts, lists, strings, ints, bools and None, which
    encode as they are. Most bodies are such, and copying them through :func:`_normalise`
    costs several times their encoding."""
    for item in container.values() if type(container) is dict else container:
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or kind is list:
            if not _plain(item):
                return False
        elif not (kind is int or kind is bool or item is None):
            return False
    return True


def encode(value: Any) -> bytes:
    """Encode a JSON-compatible value; integral floats become integers, datetimes RFC 3339
    with microseconds (naive datetimes are taken as UTC)."""
    kind = type(value)
    if (kind is dict or kind is list) and _plain(value):
        return _encoder.encode(value)
    return _encoder.encode(_normalise(value))


# How much of an undecodable body to quote in the error.
MAX_QUOTED_CHARS = 200


def decode(data: bytes | str) -> Any:
    """Decode JSON bytes into plain Python values (dicts, lists, str, int, float, bool, None).

    Raises :class:`~setpoint.client.errors.InvalidResponse` quoting the start of the data.
    """
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        quoted = text[:MAX_QUOTED_CHARS] + ("..." if len(text) > MAX_QUOTED_CHARS else "")
        raise InvalidResponse(f"invalid JSON from the server ({exc}): {quoted!r}") from exc
