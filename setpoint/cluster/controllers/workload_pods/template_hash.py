"""The pod-template-hash: a short, stable name suffix for a pod template.

Upstream (``controller.ComputeHash``) feeds a Go struct dump of the template to FNV-1a 32-bit,
adds ``collisionCount`` as four little-endian bytes, formats the sum in decimal and maps each
digit through ``rand.SafeEncodeString``. A Go struct dump cannot be reproduced outside Go, so
this hashes the template's canonical JSON instead: the same template always gives the same
hash, a changed template gives another, and the alphabet and length match upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["SAFE_ALPHABET", "compute_hash", "fnv1a_32", "go_zero_stripped", "safe_encode"]

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""``rand.SafeEncodeString``'s alphabet: no vowels (no words), no 0/1/3 (look like o/l/e)."""

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_ENCODER = msgspec.json.Encoder(order="sorted")


def fnv1a_32(data: bytes, start: int = _FNV_OFFSET) -> int:
    """FNV-1a 32-bit of ``data`` (``start`` continues an earlier hash)."""
    value = start
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """Map each character to the safe alphabet by its code point, as ``SafeEncodeString``."""
    return "".join(SAFE_ALPHABET[ord(char) % len(SAFE_ALPHABET)] for char in text)


def go_zero_stripped(value: Any) -> Any:
    """``value`` without nulls, empty maps and empty lists, recursively.

    Upstream compares and hashes Go structs, where ``creationTimestamp: null``, ``resources:
    {}`` and an absent field are all the same zero value; JSON keeps them apart.
    """
    if isinstance(value, Mapping):
        stripped = {k: go_zero_stripped(v) for k, v in value.items()}
        return {k: v for k, v in stripped.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [go_zero_stripped(item) for item in value]
    return value


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """The pod-template-hash of ``template`` (a PodTemplateSpec dict) and the collision count."""
    value = fnv1a_32(_ENCODER.encode(go_zero_stripped(template)))
    if collision_count is not None:
        value = fnv1a_32((collision_count & 0xFFFFFFFF).to_bytes(4, "little"), value)
    return safe_encode(str(value))
