"""``metadata.resourceVersion``: opaque to clients, a decimal counter inside the server.

Clients must treat resource versions as opaque strings and only compare them for equality. The
local API server, like etcd-backed kube-apiserver, uses one global increasing integer; these
functions convert between that integer and its wire form. ``""`` and ``"0"`` both mean "any
version" in list and watch requests and parse as ``0``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["format_resource_version", "parse_resource_version"]

_UINT64_MAX: Final = 2**64 - 1  # upstream parses resource versions as uint64
_DIGITS_RE: Final = re.compile(r"[0-9]+\Z", re.ASCII)


def parse_resource_version(text: str) -> int:
    """The integer in a resource version string; ``""`` and ``"0"`` give 0.

    Raises ``ValueError`` (``invalid resource version: "x": ...``) for anything that is not a
    non-negative decimal integer that fits in 64 bits.
    """
    if not isinstance(text, str):
        raise ValueError(f"invalid resource version: {text!r}: must be a string")
    if text == "":
        return 0
    if not _DIGITS_RE.match(text):
        raise ValueError(
            f'invalid resource version: "{text}": must be a non-negative decimal integer'
        )
    value = int(text)
    if value > _UINT64_MAX:
        raise ValueError(f'invalid resource version: "{text}": value out of range')
    return value


def format_resource_version(value: int) -> str:
    """The wire form of a resource version integer (``0`` is ``"0"``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"invalid resource version: {value!r}: must be a non-negative integer")
    if value > _UINT64_MAX:
        raise ValueError(f"invalid resource version: {value}: value out of range")
    return str(value)
