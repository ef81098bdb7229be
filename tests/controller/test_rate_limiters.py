"""Rate limiter arithmetic: exponential backoff, token bucket, max-of."""

from __future__ import annotations

import itertools

import hypothesis.strategies as st
import pytest
from hypothesis import given

from setpoint.controller.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    client_go_default_rate_limiter,
    default_controller_rate_limiter,
)


def test_exponential_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("k") for _ in range(25)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert delays[17] == pytest.approx(655.36)
    assert delays[18:] == [1000.0] * 7
    assert limiter.num_requeues("k") == 25


def test_exponential_never_overflows() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    for _ in range(5000):
        delay = limiter.when("k")
    assert delay == 1000.0


def test_exponential_is_per_key_and_forget_resets() -> None:
    limiter = ItemExponentialFailureRateLimiter(1.0, 100.0)
    limiter.when("a")
    limiter.when("a")
    assert limiter.when("b") == 1.0
    assert limiter.when("a") == 4.0
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0


@pytest.mark.parametrize(("base", "cap"), [(0, 1.0), (-1.0, 1.0), (1.0, 0.5)])
def test_exponential_rejects_bad_bounds(base: float, cap: float) -> None:
    with pytest.raises(ValueError, match="delay"):
        ItemExponentialFailureRateLimiter(base, cap)


def test_fast_slow() -> None:
    limiter = ItemFastSlowRateLimiter(0.1, 10.0, 2)
    assert [limiter.when("k") for _ in range(4)] == [0.1, 0.1, 10.0, 10.0]
    limiter.forget("k")
    assert limiter.when("k") == 0.1


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_burst_then_spaces_by_qps() -> None:
    clock = Clock()
    limiter = BucketRateLimiter(qps=10.0, burst=3, clock=clock)
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)  # reservations queue up
    clock.now += 10.0  # refills, but never beyond the burst
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.when("z") > 0
    assert limiter.num_requeues("x") == 0


def test_bucket_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="qps"):
        BucketRateLimiter(qps=0)
    with pytest.raises(ValueError, match="burst"):
        BucketRateLimiter(burst=0)


def test_max_of_takes_the_longest_wait_and_forgets_everywhere() -> None:
    clock = Clock()
    exponential = ItemExponentialFailureRateLimiter(0.001, 10.0)
    bucket = BucketRateLimiter(qps=1.0, burst=1, clock=clock)
    limiter = MaxOfRateLimiter(exponential, bucket)
    assert limiter.when("k") == 0.001  # bucket has a token; exponential says 1 ms
    assert limiter.when("k") == pytest.approx(1.0)  # bucket empty
    assert limiter.num_requeues("k") == 2
    limiter.forget("k")
    assert exponential.num_requeues("k") == 0
    with pytest.raises(ValueError, match="at least one"):
        MaxOfRateLimiter()


def test_defaults_and_custom_limiters_satisfy_the_protocol() -> None:
    assert isinstance(default_controller_rate_limiter(), ItemExponentialFailureRateLimiter)
    assert isinstance(client_go_default_rate_limiter(), MaxOfRateLimiter)

    class Fixed:
        def when(self, item: object) -> float:
            return 2.0

        def forget(self, item: object) -> None:
            pass

        def num_requeues(self, item: object) -> int:
            return 0

    assert isinstance(Fixed(), RateLimiter)


@given(
    base=st.floats(min_value=1e-4, max_value=10.0),
    factor=st.floats(min_value=1.0, max_value=1e7),
    failures=st.integers(min_value=1, max_value=200),
)
def test_exponential_delays_double_until_the_cap(base: float, factor: float, failures: int) -> None:
    cap = base * factor
    limiter = ItemExponentialFailureRateLimiter(base, cap)
    delays = [limiter.when("k") for _ in range(failures)]
    assert delays[0] == pytest.approx(min(base, cap))
    for previous, current in itertools.pairwise(delays):
        assert current == pytest.approx(min(previous * 2, cap))
    assert all(d <= cap for d in delays)
