"""Timestamps as Kubernetes writes them: ``Time`` (seconds) and ``MicroTime`` (microseconds).

Objects carry times as RFC 3339 strings in UTC: ``metav1.Time`` as ``2006-01-02T15:04:05Z``
(e.g. ``creationTimestamp``, condition ``lastTransitionTime``) and ``metav1.MicroTime`` as
``2006-01-02T15:04:05.000000Z`` (e.g. a Lease's ``renewTime``, an Event's ``eventTime``).
Clients send variations (``+00:00``, other offsets, any number of fraction digits, such as
Python's ``isoformat()``), so :func:`parse_time` accepts all of RFC 3339 and the ``normalize_*``
functions rewrite a time into the canonical form.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

__all__ = [
    "format_micro_time",
    "format_time",
    "normalize_micro_time",
    "normalize_time",
    "now_micro_time",
    "now_time",
    "parse_micro_time",
    "parse_time",
]

_MICRO_DIGITS: Final = 6  # MicroTime's wire layout has exactly microseconds


@functools.cache
def _rfc3339() -> re.Pattern[str]:
    """The RFC 3339 pattern, compiled at the first parse rather than at import."""
    return re.compile(
        r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})[Tt ]"
        r"(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})"
        r"(?:\.(?P<fraction>\d+))?"
        r"(?P<zone>[Zz]|[+-]\d{2}:?\d{2})\Z",
        re.ASCII,
    )


def _as_utc(moment: datetime) -> datetime:
    # A naive datetime is taken to be UTC: Kubernetes never uses local time.
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """``2006-01-02T15:04:05Z``: UTC, whole seconds (fractions are dropped, as upstream)."""
    t = _as_utc(moment)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


def format_micro_time(moment: datetime) -> str:
    """``2006-01-02T15:04:05.000000Z``: UTC with exactly six fraction digits."""
    t = _as_utc(moment)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        f".{t.microsecond:06d}Z"
    )


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp into an aware UTC datetime.

    Accepts ``Z`` or a numeric offset (``+00:00``, ``+0000``), a ``T``, ``t`` or space separator,
    and any number of fraction digits (beyond microseconds they are truncated). Raises
    ``ValueError`` naming the input when it is not such a timestamp.
    """
    if not isinstance(text, str):
        raise ValueError(f"invalid time {text!r}: must be an RFC 3339 string")
    match = _rfc3339().match(text.strip())
    if match is None:
        raise ValueError(f"invalid time {text!r}: expected RFC 3339 such as '2006-01-02T15:04:05Z'")
    zone = match["zone"]
    if zone in ("Z", "z"):
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > 23 or minutes > 59:
            raise ValueError(f"invalid time {text!r}: bad UTC offset {zone}")
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    fraction = (match["fraction"] or "")[:6].ljust(6, "0")
    try:
        moment = datetime(
            int(match["year"]),
            int(match["month"]),
            int(match["day"]),
            int(match["hour"]),
            int(match["minute"]),
            int(match["second"]),
            int(fraction),
            tzinfo=tz,
        )
    except ValueError as error:
        raise ValueError(f"invalid time {text!r}: {error}") from None
    return moment.astimezone(UTC)


def parse_micro_time(text: str) -> datetime:
    """Parse a ``MicroTime`` as strictly as kube-apiserver: exactly six fraction digits.

    Upstream parses MicroTime with the layout ``2006-01-02T15:04:05.000000Z07:00``, so e.g.
    ``2006-01-02T15:04:05Z`` is refused. Use :func:`parse_time` to accept any RFC 3339 time.
    """
    match = _rfc3339().match(text.strip()) if isinstance(text, str) else None
    if match is None or match["fraction"] is None or len(match["fraction"]) != _MICRO_DIGITS:
        raise ValueError(
            f"invalid micro time {text!r}: expected RFC 3339 with exactly six fraction digits, "
            "such as '2006-01-02T15:04:05.000000Z'"
        )
    return parse_time(text)


def normalize_time(text: str) -> str:
    """Rewrite an RFC 3339 timestamp as a canonical ``Time`` (UTC, seconds)."""
    return format_time(parse_time(text))


def normalize_micro_time(text: str) -> str:
    """Rewrite an RFC 3339 timestamp as a canonical ``MicroTime`` (UTC, six digits)."""
    return format_micro_time(parse_time(text))


def now_time() -> str:
    """The current time as a ``Time`` string."""
    return format_time(datetime.now(UTC))


def now_micro_time() -> str:
    """The current time as a ``MicroTime`` string."""
    return format_micro_time(datetime.now(UTC))
