"""When a CronJob is due (``utils.go`` ``mostRecentScheduleTime``, ``nextScheduleTimeDuration``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from setpoint.api.times import parse_time
from setpoint.cluster.controllers.cronjob.cron_schedule import CronSchedule, EverySchedule

__all__ = [
    "NEXT_SCHEDULE_DELTA",
    "UnmetTimes",
    "job_name",
    "next_sync_delay",
    "unmet_schedule_times",
]

NEXT_SCHEDULE_DELTA = 0.1
"""Seconds past a scheduled time at which the controller wakes up (upstream: 100 ms)."""

_MAX_COUNTED = 1000


@dataclass(frozen=True)
class UnmetTimes:
    """The earliest time considered, the most recent due time (if any) and how many were due."""

    earliest: datetime
    most_recent: datetime | None
    missed: int


def _time(obj: Mapping[str, Any], *path: str) -> datetime | None:
    node: Any = obj
    for part in path:
        node = (node or {}).get(part)
    try:
        return parse_time(node) if isinstance(node, str) and node else None
    except ValueError:
        return None


def unmet_schedule_times(
    cronjob: Mapping[str, Any],
    schedule: CronSchedule | EverySchedule,
    zone: tzinfo,
    now: datetime,
    include_starting_deadline: bool = True,
) -> UnmetTimes:
    """The schedule times in ``(max(lastScheduleTime, creation), now]`` (and the deadline)."""
    earliest = (
        _time(cronjob, "status", "lastScheduleTime")
        or _time(cronjob, "metadata", "creationTimestamp")
        or now
    )
    deadline = (cronjob.get("spec") or {}).get("startingDeadlineSeconds")
    if include_starting_deadline and deadline is not None:
        scheduling_deadline = now - timedelta(seconds=int(deadline))
        earliest = max(earliest, scheduling_deadline)
    most_recent: datetime | None = None
    missed = 0
    moment = schedule.next_after(earliest, zone)
    while moment is not None and moment <= now:
        most_recent, missed = moment, missed + 1
        if missed >= _MAX_COUNTED:
            # Far behind: jump close to now and keep counting only what is left.
            candidate = schedule.next_after(now - timedelta(minutes=1), zone)
            if candidate is not None and candidate <= now:
                most_recent = candidate
            break
        moment = schedule.next_after(moment, zone)
    return UnmetTimes(earliest, most_recent, missed)


def next_sync_delay(
    cronjob: Mapping[str, Any],
    schedule: CronSchedule | EverySchedule,
    zone: tzinfo,
    now: datetime,
    margin: float = NEXT_SCHEDULE_DELTA,
) -> float | None:
    """Seconds until the next scheduled time plus ``margin`` (:data:`NEXT_SCHEDULE_DELTA`)."""
    unmet = unmet_schedule_times(cronjob, schedule, zone, now, include_starting_deadline=False)
    base = unmet.most_recent or unmet.earliest
    following = schedule.next_after(base, zone)
    if following is None:
        return None
    return max(0.0, (following - now).total_seconds()) + margin


def job_name(cronjob_name: str, scheduled: datetime) -> str:
    """``<cronjob>-<scheduled time in minutes since the epoch>``."""
    return f"{cronjob_name}-{int(scheduled.astimezone(UTC).timestamp()) // 60}"
