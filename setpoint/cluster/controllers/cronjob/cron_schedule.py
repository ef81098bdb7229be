"""Cron schedules as ``robfig/cron/v3`` ``ParseStandard`` reads them, and their next times.

Five fields (minute, hour, day of month, month, day of week) with ``*``, ``?``, lists,
ranges, steps and the names ``JAN``..``DEC`` / ``SUN``..``SAT``, or one of ``@yearly``,
``@annually``, ``@monthly``, ``@weekly``, ``@daily``, ``@midnight``, ``@hourly``, or
``@every <Go duration>``. As in
robfig (and Vixie cron), when both day fields are restricted a day matches if either does;
when one is ``*`` (or ``?``) both must match.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from setpoint.api.go_durations import parse_go_duration

__all__ = ["CronSchedule", "CronSyntaxError", "EverySchedule", "parse_schedule"]

_STAR = 1 << 63

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1
    )
}
_DAYS = {
    name: number for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))
}


class CronSyntaxError(ValueError):
    """A schedule that is not valid standard cron syntax (the text says what is wrong)."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_MINUTE = _Bounds(0, 59)
_HOUR = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTH = _Bounds(1, 12, _MONTHS)
_DOW = _Bounds(0, 6, _DAYS)


def _number(text: str, bounds: _Bounds) -> int:
    if bounds.names and text.upper() in bounds.names:
        return bounds.names[text.upper()]
    if not text.isdigit():
        raise CronSyntaxError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    return int(text)


def _range(expr: str, bounds: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, _STAR
    else:
        start = _number(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], bounds)
        else:
            raise CronSyntaxError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], _Bounds(0, 0))
        if single:
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise CronSyntaxError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise CronSyntaxError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronSyntaxError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronSyntaxError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronSyntaxError(f"step of range should be a positive number: {expr}")
    bits = 0
    for value in range(start, end + 1, step):
        bits |= 1 << value
    return bits | extra


def _field(text: str, bounds: _Bounds) -> int:
    bits = 0
    for expr in text.split(","):
        bits |= _range(expr, bounds)
    return bits


@dataclass(frozen=True)
class CronSchedule:
    """A parsed schedule: one bit set per allowed value of each field."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def _day_matches(self, moment: datetime) -> bool:
        dom_match = bool(1 << moment.day & self.dom)
        dow_match = bool(1 << ((moment.weekday() + 1) % 7) & self.dow)
        if self.dom & _STAR or self.dow & _STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next_after(self, moment: datetime, zone: tzinfo = UTC) -> datetime | None:
        """The first matching time strictly after ``moment`` (whole minutes), in ``zone``.

        Wall-clock fields are matched in ``zone``; the result is an aware datetime in that
        zone. None when nothing matches within five years (e.g. ``0 0 30 2 *``).
        """
        local = moment.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
        local += timedelta(minutes=1)
        limit = local.year + 5
        while local.year <= limit:
            if not (1 << local.month & self.month):
                year, month = (
                    (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
                )
                local = datetime(year, month, 1)
                continue
            if not self._day_matches(local):
                local = datetime(local.year, local.month, local.day) + timedelta(days=1)
                continue
            if not (1 << local.hour & self.hour):
                local = local.replace(minute=0) + timedelta(hours=1)
                continue
            if not (1 << local.minute & self.minute):
                local += timedelta(minutes=1)
                continue
            result = local.replace(tzinfo=zone)
            # A wall time skipped by a DST jump does not exist: move on past it.
            if result.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != local:
                local += timedelta(minutes=1)
                continue
            return result
        return None


def _go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` for ``@every`` (``1h30m``, ``90s``), in seconds."""
    try:
        return parse_go_duration(text)
    except ValueError:
        raise CronSyntaxError(
            f'failed to parse duration @every {text}: time: invalid duration "{text}"'
        ) from None


@dataclass(frozen=True)
class EverySchedule:
    """``@every <duration>``: a constant delay, at least one second, in whole seconds."""

    seconds: float

    def next_after(self, moment: datetime, zone: tzinfo = UTC) -> datetime | None:
        """``moment`` plus the delay, dropping ``moment``'s fraction of a second."""
        delay = max(1, int(self.seconds))
        return (moment.replace(microsecond=0) + timedelta(seconds=delay)).astimezone(zone)


def parse_schedule(text: str) -> CronSchedule | EverySchedule:
    """Parse a standard cron schedule; raises :class:`CronSyntaxError` with robfig's wording."""
    spec = text.strip()
    if not spec:
        raise CronSyntaxError("empty spec string")
    if spec.startswith("@"):
        if spec.startswith("@every "):
            return EverySchedule(_go_duration(spec[len("@every ") :].strip()))
        if spec.lower() not in _DESCRIPTORS:
            raise CronSyntaxError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec.lower()]
    fields = spec.split()
    if len(fields) != 5:
        raise CronSyntaxError(
            f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
        )
    return CronSchedule(
        minute=_field(fields[0], _MINUTE),
        hour=_field(fields[1], _HOUR),
        dom=_field(fields[2], _DOM),
        month=_field(fields[3], _MONTH),
        dow=_field(fields[4], _DOW),
    )
