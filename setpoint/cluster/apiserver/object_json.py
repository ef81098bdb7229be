"""JSON of objects answered without a storage round trip (dry runs, scale), in Go's style.

Stored objects are encoded by the storage codec, which writes an integral float as an integer
(``2.0`` → ``2``, as Go's encoding/json and so kube-apiserver do). Answers built from a decoded
object that is not stored (a dry run, a Scale) must look exactly the same, so they go through
:func:`encode_object_json`, which applies the same rule.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

_ENCODER: Final = msgspec.json.Encoder()
# msgspec writes an integral float as "2.0"; only then is the (rarely needed) exact walk run.
# A string that merely looks like such a number only costs the walk, never changes the output.
_MAYBE_INTEGRAL_FLOAT: Final = re.compile(rb"[0-9]\.0[,\]}]")
# Go switches to exponent notation from 1e21 on; below it an integral float prints as an integer.
_GO_EXPONENT_THRESHOLD: Final = 1e21


def encode_object_json(obj: Any) -> bytes:
    """``obj`` as JSON, with integral floats below 1e21 written as integers."""
    data = _ENCODER.encode(obj)
    if b".0" in data and _MAYBE_INTEGRAL_FLOAT.search(data) is not None:
        data = _ENCODER.encode(_integral_floats_as_ints(obj))
    return data


def _integral_floats_as_ints(node: Any) -> Any:
    if isinstance(node, float):
        if node.is_integer() and abs(node) < _GO_EXPONENT_THRESHOLD:
            return int(node)
        return node
    if isinstance(node, dict):
        return {key: _integral_floats_as_ints(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [_integral_floats_as_ints(value) for value in node]
    return node
