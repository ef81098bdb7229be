"""Go's ``time.ParseDuration`` syntax: ``90s``, ``1h30m``, ``1.5h``, ``500ms``.

The cluster clock's ``advance`` (API and CLI) and kwok Stages' delays (``durationFrom`` values
that are strings) use it, so a duration reads the same in a Stage file, on the command line and
in a request body. ``days=True`` also accepts ``d`` (24 h), which Go does not know but which
moving a clock by days wants; it is off wherever a Go program would parse the text.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["parse_go_duration"]

_UNIT_SECONDS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DAY_SECONDS: Final = 86400.0
_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)")


def parse_go_duration(text: str, *, days: bool = False) -> float:
    """Seconds in ``text`` (``ValueError`` naming the text when it is not a duration)."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(body):
        match = _PART.match(body, position)
        if match is None or (match.group(2) == "d" and not days):
            break
        unit = _DAY_SECONDS if match.group(2) == "d" else _UNIT_SECONDS[match.group(2)]
        total += float(match.group(1)) * unit
        position = match.end()
    if not body or position != len(body):
        example = "2h, 90s, 1h30m, 3d" if days else "2h, 90s, 1h30m"
        raise ValueError(f"{text!r} is not a duration (e.g. {example})")
    return -total if text.startswith("-") else total
