"""Rate limiters for the work queue: how long a failing key waits before its next try.

A rate limiter answers ``when(key)`` (seconds to wait before the key is added again; calling it
counts one more failure), ``forget(key)`` (the key succeeded: reset its history) and
``num_requeues(key)``. The defaults follow controller-runtime:

- :class:`ItemExponentialFailureRateLimiter`: per key, 5 ms doubling up to 1000 s. Since
  controller-runtime 0.23 (priority queue by default) this alone is the default.
- :class:`BucketRateLimiter`: one token bucket for all keys (client-go's 10 qps / burst 100).
- :class:`MaxOfRateLimiter`: the longest wait of several limiters (client-go's historical default
  is exponential max'd with the bucket: :func:`client_go_default_rate_limiter`).

Any object with the three methods of :class:`RateLimiter` can be plugged into a queue.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_BASE_DELAY",
    "DEFAULT_BUCKET_BURST",
    "DEFAULT_BUCKET_QPS",
    "DEFAULT_MAX_DELAY",
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "client_go_default_rate_limiter",
    "default_controller_rate_limiter",
]

# controller-runtime's per-item backoff (workqueue.DefaultTypedItemBasedRateLimiter): the first
# retry comes almost at once (a conflict usually clears on re-read), a persistently failing key
# settles at one try per ~17 minutes so it cannot hog the API server.
DEFAULT_BASE_DELAY = 0.005
DEFAULT_MAX_DELAY = 1000.0
# client-go's overall bucket (DefaultTypedControllerRateLimiter): bounds retries of all keys
# together when many fail at once.
DEFAULT_BUCKET_QPS = 10.0
DEFAULT_BUCKET_BURST = 100


@runtime_checkable
class RateLimiter(Protocol):
    """What a work queue needs from a rate limiter (controller-runtime's ``TypedRateLimiter``)."""

    def when(self, item: Hashable) -> float:
        """Seconds to wait before re-adding ``item``; records one more failure of it."""
        ...

    def forget(self, item: Hashable) -> None:
        """Clear ``item``'s failure history (it succeeded or was given up)."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """How many failures of ``item`` are on record."""
        ...


class ItemExponentialFailureRateLimiter:
    """Per-key exponential backoff: ``base * 2**failures``, capped at ``max_delay``."""

    __slots__ = ("_failures", "base_delay", "max_delay")

    def __init__(
        self, base_delay: float = DEFAULT_BASE_DELAY, max_delay: float = DEFAULT_MAX_DELAY
    ) -> None:
        if not base_delay > 0:
            raise ValueError(f"base_delay: must be > 0 seconds, got {base_delay!r}")
        if not max_delay >= base_delay:
            raise ValueError(
                f"max_delay: must be >= base_delay ({base_delay!r}), got {max_delay!r}"
            )
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        # Compare exponents first: 2**failures overflows a float long before it matters.
        if failures >= math.log2(self.max_delay / self.base_delay):
            return self.max_delay
        return min(self.base_delay * 2.0**failures, self.max_delay)

    def forget(self, item: Hashable) -> None:
        if self._failures:  # hashing a key is a Python call; most forgets find nothing
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """``fast_delay`` for the first ``max_fast_attempts`` failures of a key, then ``slow_delay``."""

    __slots__ = ("_failures", "fast_delay", "max_fast_attempts", "slow_delay")

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        if fast_delay < 0 or slow_delay < 0:
            raise ValueError("fast_delay and slow_delay: must be >= 0 seconds")
        if max_fast_attempts < 0:
            raise ValueError(f"max_fast_attempts: must be >= 0, got {max_fast_attempts!r}")
        self.fast_delay = float(fast_delay)
        self.slow_delay = float(slow_delay)
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        return self.fast_delay if failures <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """One token bucket shared by all keys: ``qps`` tokens per second, at most ``burst`` saved.

    Each ``when`` reserves a token; when the bucket is empty the wait is the time until that
    reservation's token is refilled (reservations queue up, as with Go's ``rate.Limiter``).
    """

    __slots__ = ("_clock", "_last", "_tokens", "burst", "qps")

    def __init__(
        self,
        qps: float = DEFAULT_BUCKET_QPS,
        burst: int = DEFAULT_BUCKET_BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not qps > 0:
            raise ValueError(f"qps: must be > 0, got {qps!r}")
        if burst < 1:
            raise ValueError(f"burst: must be >= 1, got {burst!r}")
        self.qps = float(qps)
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def when(self, item: Hashable) -> float:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        """The bucket keeps no per-key history."""

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """Combines limiters: waits as long as the strictest one says; forgets in all of them."""

    __slots__ = ("limiters",)

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter: needs at least one rate limiter")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        # Every limiter must record the failure, so no short-circuit.
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter() -> RateLimiter:
    """The controller default: per-key exponential, 5 ms to 1000 s (controller-runtime 0.23+)."""
    return ItemExponentialFailureRateLimiter()


def client_go_default_rate_limiter() -> RateLimiter:
    """client-go's ``DefaultTypedControllerRateLimiter``: exponential max'd with 10 qps/100."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(), BucketRateLimiter())
