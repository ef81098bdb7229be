"""Cron parsing and next-run computation with robfig/cron's standard semantics."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from setpoint.cluster.controllers.cronjob.cron_schedule import CronSyntaxError, parse_schedule
from setpoint.cluster.controllers.cronjob.schedule_times import (
    job_name,
    next_sync_delay,
    unmet_schedule_times,
)


def _next(spec: str, after: datetime, zone: str = "UTC") -> datetime | None:
    return parse_schedule(spec).next_after(after, ZoneInfo(zone))


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("* * * * *", at(2026, 1, 1, 12, 0, 0), at(2026, 1, 1, 12, 1)),
        ("* * * * *", at(2026, 1, 1, 12, 0, 30), at(2026, 1, 1, 12, 1)),
        ("*/15 * * * *", at(2026, 1, 1, 12, 1), at(2026, 1, 1, 12, 15)),
        ("5 4 * * *", at(2026, 1, 1, 5, 0), at(2026, 1, 2, 4, 5)),
        ("0 0 1 1 *", at(2026, 3, 1), at(2027, 1, 1)),
        ("@hourly", at(2026, 1, 1, 12, 30), at(2026, 1, 1, 13, 0)),
        ("@daily", at(2026, 1, 1, 12, 30), at(2026, 1, 2)),
        ("@weekly", at(2026, 1, 1), at(2026, 1, 4)),  # 2026-01-04 is a Sunday
        ("0 9 * * MON-FRI", at(2026, 1, 2, 10), at(2026, 1, 5, 9)),
        ("0 0 * JAN,jun *", at(2026, 2, 1), at(2026, 6, 1)),
        ("1-10/3 * * * *", at(2026, 1, 1, 0, 4), at(2026, 1, 1, 0, 7)),
        # Both day fields restricted: either matches (the 13th, or any Friday).
        ("0 0 13 * 5", at(2026, 1, 1), at(2026, 1, 2)),
        # Day of week starred: both must match.
        ("0 0 13 * *", at(2026, 1, 1), at(2026, 1, 13)),
        ("0 0 ? * 2", at(2026, 1, 1), at(2026, 1, 6)),
    ],
)
def test_next_time(spec: str, after: datetime, expected: datetime) -> None:
    assert _next(spec, after) == expected


def test_impossible_dates_give_no_time() -> None:
    assert _next("0 0 30 2 *", at(2026, 1, 1)) is None


def test_time_zone_fields_are_wall_clock_in_that_zone() -> None:
    result = _next("0 9 * * *", at(2026, 1, 1, 12), "Europe/Berlin")
    assert result is not None
    assert result.astimezone(UTC) == at(2026, 1, 2, 8)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("0 0 0 0 0 0", "expected exactly 5 fields, found 6"),
        ("60 * * * *", "end of range (60) above maximum (59)"),
        ("* * 0 * *", "beginning of range (0) below minimum (1)"),
        ("* * * * 7", "end of range (7) above maximum (6)"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1)"),
        ("x * * * *", "failed to parse int from x"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("", "empty spec string"),
    ],
)
def test_syntax_errors_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(CronSyntaxError) as error:
        parse_schedule(spec)
    assert message in str(error.value)


def _cronjob(created: str, last: str | None = None, deadline: int | None = None) -> dict:  # type: ignore[type-arg]
    cronjob: dict = {"metadata": {"creationTimestamp": created}, "spec": {}, "status": {}}  # type: ignore[type-arg]
    if last:
        cronjob["status"]["lastScheduleTime"] = last
    if deadline is not None:
        cronjob["spec"]["startingDeadlineSeconds"] = deadline
    return cronjob


def test_unmet_times_count_missed_runs_since_the_last_schedule() -> None:
    schedule = parse_schedule("*/5 * * * *")
    cronjob = _cronjob("2026-01-01T12:00:30Z")
    unmet = unmet_schedule_times(cronjob, schedule, UTC, at(2026, 1, 1, 12, 4))
    assert unmet.most_recent is None and unmet.missed == 0
    unmet = unmet_schedule_times(cronjob, schedule, UTC, at(2026, 1, 1, 12, 17))
    assert unmet.most_recent == at(2026, 1, 1, 12, 15)
    assert unmet.missed == 3
    cronjob = _cronjob("2026-01-01T12:00:30Z", last="2026-01-01T12:15:00Z")
    assert unmet_schedule_times(cronjob, schedule, UTC, at(2026, 1, 1, 12, 17)).most_recent is None
    delay = next_sync_delay(cronjob, schedule, UTC, at(2026, 1, 1, 12, 17))
    assert delay == pytest.approx(180.1)


def test_starting_deadline_limits_how_far_back_runs_count() -> None:
    schedule = parse_schedule("* * * * *")
    cronjob = _cronjob("2026-01-01T00:00:00Z", deadline=90)
    unmet = unmet_schedule_times(cronjob, schedule, UTC, at(2026, 1, 1, 12, 0, 10))
    assert unmet.missed == 2
    assert unmet.most_recent == at(2026, 1, 1, 12, 0)


def test_job_name_is_minutes_since_the_epoch() -> None:
    assert job_name("hello", at(2026, 1, 1, 12, 0)) == "hello-29454480"


def test_every_descriptor_is_a_constant_delay() -> None:
    schedule = parse_schedule("@every 1h30m")
    assert schedule.next_after(at(2026, 1, 1, 12, 0, 10)) == at(2026, 1, 1, 13, 30, 10)
    with pytest.raises(CronSyntaxError, match='time: invalid duration "soon"'):
        parse_schedule("@every soon")


def test_error_text_is_robfigs() -> None:
    with pytest.raises(CronSyntaxError) as error:
        parse_schedule("* * * *")
    assert str(error.value) == "expected exactly 5 fields, found 4: [* * * *]"
