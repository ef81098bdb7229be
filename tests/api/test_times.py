"""Time and MicroTime formatting and parsing."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from setpoint.api import (
    format_micro_time,
    format_time,
    normalize_micro_time,
    normalize_time,
    now_micro_time,
    now_time,
    parse_micro_time,
    parse_time,
)

MOMENT = datetime(2006, 1, 2, 15, 4, 5, 123456, tzinfo=UTC)


def test_format() -> None:
    assert format_time(MOMENT) == "2006-01-02T15:04:05Z"
    assert format_micro_time(MOMENT) == "2006-01-02T15:04:05.123456Z"
    assert format_micro_time(MOMENT.replace(microsecond=0)) == "2006-01-02T15:04:05.000000Z"


def test_format_converts_to_utc_and_treats_naive_as_utc() -> None:
    plus_two = MOMENT.astimezone(timezone(timedelta(hours=2)))
    assert format_time(plus_two) == "2006-01-02T15:04:05Z"
    assert format_time(MOMENT.replace(tzinfo=None)) == "2006-01-02T15:04:05Z"
    assert format_time(datetime(5, 1, 1, tzinfo=UTC)) == "0005-01-01T00:00:00Z"


@pytest.mark.parametrize(
    "text",
    [
        "2006-01-02T15:04:05.123456Z",
        "2006-01-02T15:04:05.123456+00:00",
        "2006-01-02T17:04:05.123456+02:00",
        "2006-01-02T15:04:05.123456789Z",
        "2006-01-02t15:04:05.123456z",
        "2006-01-02T10:04:05.123456-05:00",
    ],
)
def test_parse_accepts_client_variants(text: str) -> None:
    assert parse_time(text) == MOMENT
    assert parse_time(text).tzinfo == UTC


def test_parse_round_trips_kopf_isoformat() -> None:
    assert parse_time(MOMENT.isoformat()) == MOMENT
    assert parse_time("2006-01-02T15:04:05Z") == MOMENT.replace(microsecond=0)
    assert parse_time("2006-01-02T15:04:05.5Z").microsecond == 500000


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2006-01-02",
        "2006-01-02T15:04:05",
        "2006-13-02T15:04:05Z",
        "yesterday",
        "2006-01-02T15:04:05+25:00",
    ],
)
def test_parse_rejects_non_rfc3339_naming_the_input(text: str) -> None:
    with pytest.raises(ValueError, match="invalid time"):
        parse_time(text)


def test_normalize() -> None:
    assert normalize_time("2006-01-02T17:04:05.9+02:00") == "2006-01-02T15:04:05Z"
    assert normalize_micro_time("2006-01-02T15:04:05Z") == "2006-01-02T15:04:05.000000Z"
    assert normalize_micro_time("2006-01-02T15:04:05.1234567Z") == "2006-01-02T15:04:05.123456Z"


def test_now_has_the_canonical_shapes() -> None:
    assert normalize_time(now_time()) == now_time() or len(now_time()) == 20
    assert len(now_time()) == len("2006-01-02T15:04:05Z")
    assert len(now_micro_time()) == len("2006-01-02T15:04:05.000000Z")
    assert normalize_micro_time(now_micro_time()).endswith("Z")


def test_parse_micro_time_is_strict_like_upstream() -> None:
    assert parse_micro_time("2006-01-02T15:04:05.123456Z") == MOMENT
    assert parse_micro_time("2006-01-02T17:04:05.123456+02:00") == MOMENT
    for text in (
        "2006-01-02T15:04:05Z",
        "2006-01-02T15:04:05.123Z",
        "2006-01-02T15:04:05.1234567Z",
    ):
        with pytest.raises(ValueError, match="six fraction digits"):
            parse_micro_time(text)
