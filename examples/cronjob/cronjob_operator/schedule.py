"""Which run of a CronJob is due now, and when the next one is (the tutorial's getNextSchedule).

The schedule is parsed by the cron parser of setpoint's own CronJob controller (robfig/cron's
``ParseStandard``, as the tutorial uses: five fields, ``@hourly``-style descriptors and
``@every <duration>``), so a schedule this operator accepts is one Kubernetes' CronJob accepts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from setpoint.cluster.controllers.cronjob.cron_schedule import CronSyntaxError, parse_schedule

__all__ = ["CronSyntaxError", "TooManyMissedRuns", "next_schedule", "schedule_error"]

#: The tutorial's bound on missed runs to look back over (as kube-controller-manager's).
MAX_MISSED_RUNS = 100


class TooManyMissedRuns(ValueError):
    """More than 100 runs were missed: the clock jumped, or the deadline is too long."""


def schedule_error(schedule: str) -> str | None:
    """The cron parser's message for an invalid ``schedule``, None when it parses."""
    try:
        parse_schedule(schedule)
    except CronSyntaxError as error:
        return str(error)
    return None


def next_schedule(
    schedule: str,
    *,
    earliest: datetime,
    now: datetime,
    starting_deadline_seconds: int | None = None,
) -> tuple[datetime | None, datetime | None]:
    """``(missed, next)``: the latest run due in ``(earliest, now]`` (None when none is), and
    the first run after ``now`` (None when the schedule never fires again).

    ``earliest`` is the last schedule time, or the CronJob's creation time. A starting
    deadline moves ``earliest`` up to ``now - deadline``: runs older than that are not started.
    Raises :class:`CronSyntaxError` for a bad schedule and :class:`TooManyMissedRuns`.
    """
    parsed = parse_schedule(schedule)
    if starting_deadline_seconds is not None:
        deadline = now - timedelta(seconds=starting_deadline_seconds)
        earliest = max(earliest, deadline)
    following = parsed.next_after(now, UTC)
    if earliest > now:
        return None, following
    missed: datetime | None = None
    starts = 0
    moment = parsed.next_after(earliest, UTC)
    while moment is not None and moment <= now:
        missed = moment
        starts += 1
        if starts > MAX_MISSED_RUNS:
            raise TooManyMissedRuns(
                "Too many missed start times (> 100). Set or decrease "
                ".spec.startingDeadlineSeconds or check clock skew."
            )
        moment = parsed.next_after(moment, UTC)
    return missed, following
