"""Units without I/O: token bucket, retry policy, warning parsing, JSON codec, patch options."""

from __future__ import annotations

import asyncio
import datetime
import time

import pytest

from setpoint.client import json_codec, rate_limit
from setpoint.client.request_options import (
    PatchType,
    Preconditions,
    delete_options_body,
    write_params,
)
from setpoint.client.retry_policy import RetryPolicy, parse_retry_after
from setpoint.client.server_warnings import WarningHandler, parse_warning_headers


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_allows_a_burst_then_spaces_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr("setpoint.client.rate_limit.time.monotonic", clock)
    bucket = rate_limit.TokenBucket(qps=10, burst=3)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)  # queued behind the previous reservation
    clock.now += 10  # a long pause refills up to the burst, not beyond
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() > 0


async def test_a_cancelled_wait_for_a_token_gives_the_token_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr("setpoint.client.rate_limit.time.monotonic", clock)
    bucket = rate_limit.TokenBucket(qps=10, burst=1)
    assert await bucket.acquire() == 0.0
    waiting = asyncio.create_task(bucket.acquire())  # reserves the next token, 0.1 s ahead
    await asyncio.sleep(0)
    waiting.cancel()  # e.g. the request's caller timed out
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # The abandoned reservation must not delay later requests.
    assert bucket.reserve() == pytest.approx(0.1)


def test_token_bucket_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="qps"):
        rate_limit.TokenBucket(qps=0, burst=1)
    with pytest.raises(ValueError, match="burst"):
        rate_limit.TokenBucket(qps=1, burst=0)


def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(max_retries=10, initial_backoff=1.0, max_backoff=4.0)
    assert 0.5 <= policy.backoff(1) <= 1.0
    assert 1.0 <= policy.backoff(2) <= 2.0
    assert 2.0 <= policy.backoff(10) <= 4.0
    assert policy.backoff(1, retry_after=7.0) == 7.0


@pytest.mark.parametrize(
    ("code", "retry_after", "idempotent", "expected"),
    [
        (429, False, False, True),
        (503, True, False, True),
        (500, False, True, True),
        (500, False, False, False),
        (404, False, True, False),
        (409, True, True, False),
    ],
)
def test_which_answers_are_retried(
    code: int, retry_after: bool, idempotent: bool, expected: bool
) -> None:
    assert (
        RetryPolicy.should_retry_status(code, has_retry_after=retry_after, idempotent=idempotent)
        is expected
    )


def test_connection_errors_are_retried_when_safe() -> None:
    assert RetryPolicy.should_retry_connection_error(sent=False, idempotent=False)
    assert RetryPolicy.should_retry_connection_error(sent=True, idempotent=True)
    assert not RetryPolicy.should_retry_connection_error(sent=True, idempotent=False)


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("100000") == 60.0  # capped
    past = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert parse_retry_after(past) == 0.0


def test_retry_after_dates_without_a_zone_are_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # HTTP dates are always UTC; "-0000" parses to a naive datetime, which must not be read
    # in the machine's local zone (here 5 hours off).
    monkeypatch.setenv("TZ", "EST+05")
    time.tzset()
    try:
        soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
        header = soon.strftime("%a, %d %b %Y %H:%M:%S -0000")
        waited = parse_retry_after(header)
        assert waited is not None and 20 < waited <= 30
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_parse_warning_headers() -> None:
    values = [
        '299 - "first warning"',
        '299 - "with \\"quotes\\", and comma", 299 - "second in header" "Wed, 21 Oct 2015"',
        '199 - "not a 299"',
    ]
    assert parse_warning_headers(values) == [
        "first warning",
        'with "quotes", and comma',
        "second in header",
    ]


def test_warning_handler_sink_receives_every_warning() -> None:
    received: list[str] = []
    handler = WarningHandler(sink=received.append)
    handler.handle(['299 - "a"'])
    handler.handle(['299 - "a"'])
    assert received == ["a", "a"]


def test_json_encoding_never_emits_float_integers() -> None:
    encoded = json_codec.encode({"replicas": 3.0, "ratio": 0.5, "items": [1.0, 2], "n": None})
    assert encoded == b'{"replicas":3,"ratio":0.5,"items":[1,2],"n":null}'


def test_json_encoding_formats_datetimes_as_kubernetes_time() -> None:
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, 678, tzinfo=datetime.UTC)
    assert json_codec.encode({"t": when}) == b'{"t":"2024-01-02T03:04:05.000678Z"}'


def test_patch_type_accepts_short_names_and_rejects_others() -> None:
    assert PatchType.parse("merge") is PatchType.MERGE
    assert PatchType.parse("application/json-patch+json") is PatchType.JSON
    with pytest.raises(ValueError, match="patch_type"):
        PatchType.parse("xml")


def test_write_params_and_delete_options() -> None:
    assert write_params(
        dry_run=True, field_manager="me", field_validation="Strict", force=True
    ) == {
        "dryRun": "All",
        "fieldManager": "me",
        "fieldValidation": "Strict",
        "force": "true",
    }
    body = delete_options_body(
        propagation_policy="Foreground",
        grace_period_seconds=0,
        preconditions=Preconditions(uid="u1", resource_version="7"),
        dry_run=True,
    )
    assert body == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u1", "resourceVersion": "7"},
        "dryRun": ["All"],
    }
    with pytest.raises(ValueError, match="grace_period_seconds"):
        delete_options_body(grace_period_seconds=-1)
