"""Cron schedules as ``robfig/cron/v3``'s standard parser accepts and rejects them."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver.validation.cron_schedule import schedule_error


@pytest.mark.parametrize(
    "schedule",
    [
        "* * * * *",
        "*/5 * * * *",
        "0 3 * * 1-5",
        "0 0 1,15 * *",
        "30 2 ? JAN-mar sun",
        "5/10 * * * *",
        "@hourly",
        "@every 1h30m",
        "TZ=UTC 0 3 * * *",
    ],
)
def test_valid_schedules(schedule: str) -> None:
    assert schedule_error(schedule) is None


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* 24 * * *", "end of range (24) above maximum (23): 24"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * * 13 *", "end of range (13) above maximum (12): 13"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        (
            "* * * foo *",
            'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax',
        ),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'),
    ],
)
def test_invalid_schedules(schedule: str, error: str) -> None:
    assert schedule_error(schedule) == error
