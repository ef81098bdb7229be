"""Backoff: exponential growth, cap, jitter bounds and reset after a healthy period."""

from __future__ import annotations

import pytest

from setpoint.cache import Backoff


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_delays_double_up_to_the_cap_without_jitter() -> None:
    clock = FakeClock()
    backoff = Backoff(jitter=0.0, clock=clock)
    delays = [backoff.next_delay() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]


def test_jitter_stays_within_bounds() -> None:
    low = Backoff(clock=FakeClock(), rng=lambda: 0.0)
    high = Backoff(clock=FakeClock(), rng=lambda: 0.999999)
    assert low.next_delay() == pytest.approx(0.8)
    assert high.next_delay() == pytest.approx(1.2, rel=1e-5)


def test_a_failure_after_a_healthy_period_starts_from_the_initial_delay() -> None:
    clock = FakeClock()
    backoff = Backoff(jitter=0.0, clock=clock)
    for _ in range(5):
        backoff.next_delay()
    clock.now += 119.0
    assert backoff.next_delay() == 25.6  # not healthy long enough: keeps growing
    clock.now += 121.0
    assert backoff.next_delay() == 0.8
    backoff.next_delay()
    backoff.reset()
    assert backoff.failures == 0
    assert backoff.next_delay() == 0.8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"initial": 0}, "0 < initial <= maximum"),
        ({"initial": 5, "maximum": 1}, "0 < initial <= maximum"),
        ({"factor": 0.5}, "factor must be >= 1"),
        ({"jitter": -1}, "jitter must be >= 0"),
    ],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Backoff(**kwargs)  # type: ignore[arg-type]


def test_delay_stays_at_the_cap_however_long_failures_last() -> None:
    # A list forbidden by RBAC fails every 30 s for hours; the reflector must keep retrying
    # (2.0 ** 1024 overflows a float: the delay must not be computed that way).
    backoff = Backoff(jitter=0.0, clock=FakeClock())
    delays = [backoff.next_delay() for _ in range(2000)]
    assert delays[-1] == 30.0
    assert backoff.failures == 2000
