"""Exponential backoff with jitter for the reflector's reconnects.

The defaults are kube-rs' ``DefaultBackoff`` for watchers: start at 800 ms, double up to 30 s,
add jitter so that many informers failing together (an API server restart) do not reconnect in
lockstep, and start over from 800 ms once the watch has been healthy for 120 s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Final

__all__ = ["Backoff"]

INITIAL_DELAY_S: Final = 0.8  # kube-rs DefaultBackoff: quick first retry, a blip costs < 1 s
MAX_DELAY_S: Final = 30.0  # kube-rs DefaultBackoff: never wait longer than this between tries
FACTOR: Final = 2.0  # doubling: 800 ms reaches the 30 s cap after 6 failures
# client-go's wait.Jitter(d, 0.5): each delay is d .. 1.5 d, spreading synchronized failures.
JITTER: Final = 0.5
RESET_AFTER_S: Final = 120.0  # kube-rs: a failure after 120 s without one starts from scratch


class Backoff:
    """Delays between retries: exponential, capped, jittered, reset after a healthy period."""

    def __init__(
        self,
        *,
        initial: float = INITIAL_DELAY_S,
        maximum: float = MAX_DELAY_S,
        factor: float = FACTOR,
        jitter: float = JITTER,
        reset_after: float = RESET_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(
                f"backoff needs 0 < initial <= maximum; got initial={initial}, maximum={maximum}"
            )
        if factor < 1:
            raise ValueError(f"backoff factor must be >= 1; got {factor}")
        if jitter < 0:
            raise ValueError(f"backoff jitter must be >= 0; got {jitter}")
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._clock = clock
        self._rng = rng
        self._failures = 0
        self._last_failure: float | None = None

    @property
    def failures(self) -> int:
        """Consecutive failures counted since the last reset."""
        return self._failures

    def next_delay(self) -> float:
        """Record a failure and return how long to wait before the next try (seconds)."""
        now = self._clock()
        if self._last_failure is not None and now - self._last_failure >= self.reset_after:
            self._failures = 0
        self._last_failure = now
        try:
            base = min(self.maximum, self.initial * self.factor**self._failures)
        except OverflowError:  # after ~1000 failures in a row (hours of a forbidden list)
            base = self.maximum
        self._failures += 1
        return base * (1.0 + self.jitter * self._rng())

    def reset(self) -> None:
        """Forget past failures (the next delay is the initial one again)."""
        self._failures = 0
        self._last_failure = None
