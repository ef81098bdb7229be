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

__all__ = ["decode", "encode"]

_encoder = msgspec.json.Encoder()


def _normalise(value: Any) -> Any:
    # Walk only containers; scalars other than integral floats pass through untouched.
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        return value
    if isinstance(value, Mapping):
        return {key: _normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    if isinstance(value, datetime.datetime):
        return _format_time(value)
    return value


def _format_time(value: datetime.datetime) -> str:
    # Kubernetes Time is RFC 3339 with a "Z" suffix and second precision.
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat() + "Z"


def encode(value: Any) -> bytes:
    """Encode a JSON-compatible value; integral floats become integers, datetimes RFC 3339."""
    return _encoder.encode(_normalise(value))


def decode(data: bytes | str) -> Any:
    """Decode JSON bytes into plain Python values (dicts, lists, str, int, float, bool, None)."""
    return msgspec.json.decode(data)
