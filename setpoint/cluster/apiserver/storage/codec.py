"""JSON bytes of stored objects: msgspec, key order kept, integral numbers never written as ``1.0``.

The stored value is the object exactly as the API returns it, with ``metadata.resourceVersion``
set to the revision of the write. Encoding never mutates the caller's dict.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import msgspec

from setpoint.cluster.apiserver.storage.base import InvalidValueError

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
# ``Encoder.encode`` returns bytes with its growth slack still allocated (about +50 % here);
# encoding into a reused buffer and copying out gives exactly-sized bytes, which matters when
# every stored object is kept as bytes. One buffer per thread keeps encoding thread-safe.
_BUFFERS = threading.local()

# msgspec writes a float that holds an integer as "1.0"; Go's encoding/json (and so
# kube-apiserver) writes "1", and clients that decode into integer fields reject "1.0". Fast
# substring tests, then a regex, decide whether the exact fix (a walk) runs; a string that
# merely looks like a number only costs the walk, it never changes the output. Integral floats
# of 1e16 and more (written "1e16", with no ".0") are left alone: JSON input never makes them
# in practice, and finding them would mean scanning every object with a regex.
_MAYBE_INTEGRAL_FLOAT = re.compile(rb"[0-9]\.0[,\]}]")
# Go switches to exponent notation from 1e21 on; below it an integral float prints as an integer.
_GO_EXPONENT_THRESHOLD = 1e21


def encode_object(key: str, obj: dict[str, Any], revision: int) -> bytes:
    """The JSON of ``obj`` with ``metadata.resourceVersion`` set to ``revision``."""
    if not isinstance(obj, dict):
        raise InvalidValueError(f"value for {key}: must be a JSON object, got {type(obj).__name__}")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise InvalidValueError(
            f"value for {key}: metadata: must be an object, got {type(metadata).__name__}"
        )
    stamped = {**obj, "metadata": {**metadata, "resourceVersion": str(revision)}}
    try:
        return encode_json(stamped)
    except (TypeError, msgspec.EncodeError) as exc:
        raise InvalidValueError(f"value for {key}: cannot be encoded as JSON: {exc}") from exc


def encode_json(obj: Any) -> bytes:
    """``obj`` as compact JSON in Go's style: integral floats below 1e21 written as integers.

    Answers built from an object that is not stored (a dry run, a Scale) use this too, so they
    look exactly like stored ones. Raises ``TypeError``/``msgspec.EncodeError`` for values JSON
    cannot hold.
    """
    data = _encode_exact(obj)
    if b".0" in data and _MAYBE_INTEGRAL_FLOAT.search(data) is not None:
        data = _encode_exact(_integral_floats_as_ints(obj))
    return data


def _encode_exact(obj: Any) -> bytes:
    buffer: bytearray | None = getattr(_BUFFERS, "buffer", None)
    if buffer is None:
        buffer = _BUFFERS.buffer = bytearray()
    _ENCODER.encode_into(obj, buffer)
    return bytes(buffer)


def restamp(key: str, value: bytes, revision: int) -> bytes:
    """Stored JSON ``value`` with its ``metadata.resourceVersion`` replaced by ``revision``."""
    obj = decode_object(value)
    return encode_object(key, obj, revision)


def decode_object(value: bytes) -> dict[str, Any]:
    """Decode stored JSON into a fresh dict (key order kept)."""
    obj = _DECODER.decode(value)
    if not isinstance(obj, dict):
        raise InvalidValueError(f"stored value is not a JSON object: {value[:80]!r}")
    return obj


def _integral_floats_as_ints(node: Any) -> Any:
    if isinstance(node, float):
        if node.is_integer() and abs(node) < _GO_EXPONENT_THRESHOLD:
            return int(node)
        return node
    if isinstance(node, dict):
        return {k: _integral_floats_as_ints(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_integral_floats_as_ints(v) for v in node]
    return node
