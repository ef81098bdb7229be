"""Cron schedules as the CronJob validation parses them (``robfig/cron/v3`` ``ParseStandard``).

Five fields (minute, hour, day of month, month, day of week) or a descriptor (``@hourly``,
``@every 1h30m`` ...); each field a comma list of ``*``, ``?``, ``N``, ``N-M`` with an optional
``/step``; months and weekdays also by their English three-letter names. :func:`schedule_error`
returns the parser's error text, which the API server puts in the field error.
"""

from __future__ import annotations

import re
from typing import Final

_DESCRIPTORS: Final = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_MONTHS: Final = {
    name: index + 1
    for index, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_DAYS: Final = {
    name: index for index, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
}
#: (min, max, names) of minute, hour, day of month, month, day of week.
_BOUNDS: Final[tuple[tuple[int, int, dict[str, int] | None], ...]] = (
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_GO_DURATION: Final = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$")
_GO_INT: Final = re.compile(r"^[+-]?\d+$")


class ScheduleError(ValueError):
    """A schedule the cron parser rejects (the message is the parser's)."""


def _int(expr: str) -> int:
    if not _GO_INT.match(expr):
        raise ScheduleError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    number = int(expr)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _int(expr)


def _range(expr: str, low: int, high: int, names: dict[str, int] | None) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if single:
            end = high  # "N/step" means "N-max/step"
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")


def parse_schedule(spec: str) -> None:
    """Raise :class:`ScheduleError` if ``spec`` is not a valid standard cron schedule."""
    if not spec:
        raise ScheduleError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        # The zone itself is the validation's concern (TZ in a schedule is rejected there).
        space = spec.find(" ")
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return
        if spec.startswith("@every "):
            duration = spec[len("@every ") :]
            if not _GO_DURATION.match(duration) and duration != "0":
                raise ScheduleError(
                    f'failed to parse duration {spec}: time: invalid duration "{duration}"'
                )
            return
        raise ScheduleError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, (low, high, names) in zip(fields, _BOUNDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _range(expr, low, high, names)


def schedule_error(spec: str) -> str | None:
    """The parser's message for an invalid ``spec``, None when it is valid."""
    try:
        parse_schedule(spec)
    except ScheduleError as error:
        return str(error)
    return None
