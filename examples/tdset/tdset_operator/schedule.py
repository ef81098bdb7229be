"""Which replica count an hour of the day asks for, and when that can next change.

Pure functions of the spec and a time: the controller calls them with ``ctx.now()``, tests
with any time they like. Hours are read in the TDSet's time zone (UTC by default), so a range
follows local wall time across daylight-saving changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tdset_operator.api.v1.tdset import SchedulingRange

#: How far ahead to look for the next boundary: a day, plus a DST change, plus margin.
_LOOKAHEAD_HOURS = 50


class InvalidTimeZone(ValueError):
    """``spec.timeZone`` names no time zone known to this machine's tz database."""


def time_zone(name: str | None) -> tzinfo:
    """The zone of ``spec.timeZone`` (UTC when unset)."""
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidTimeZone(f'spec.timeZone "{name}" is not an IANA time zone') from None


def covers(entry: SchedulingRange, hour: int) -> bool:
    """Whether ``hour`` is in the range; an end at or before the start crosses midnight."""
    start, end = entry.start_time, entry.end_time
    if start < end:
        return start <= hour < end
    return hour >= start or hour < end


def matching_range(ranges: Sequence[SchedulingRange], hour: int) -> int | None:
    """The index of the first range covering ``hour`` (the original's "first wins")."""
    for index, entry in enumerate(ranges):
        if covers(entry, hour):
            return index
    return None


def desired_replicas(ranges: Sequence[SchedulingRange], default: int, hour: int) -> int:
    """The replica count for ``hour``: the first matching range's, else ``default``."""
    index = matching_range(ranges, hour)
    return default if index is None else ranges[index].replica


def next_boundary(
    ranges: Sequence[SchedulingRange], now: datetime, zone: tzinfo
) -> datetime | None:
    """The first start of a local hour after ``now`` at which a range starts or ends.

    ``None`` when there are no ranges (the default holds forever). The result is aware (UTC).
    """
    hours = {entry.start_time for entry in ranges} | {entry.end_time for entry in ranges}
    if not hours:
        return None
    local = now.astimezone(zone)
    top = local.replace(minute=0, second=0, microsecond=0, tzinfo=None)
    for step in range(1, _LOOKAHEAD_HOURS):
        wall = top + timedelta(hours=step)
        if wall.hour not in hours:
            continue
        # A wall time skipped by a DST change still maps to an instant (just after the gap).
        moment = wall.replace(tzinfo=zone).astimezone(UTC)
        if moment > now:
            return moment
    return None
