"""Client-side rate limiting: a token bucket of ``qps`` tokens per second holding ``burst``.

Off by default, as in controller-runtime >= 0.21: the API server's Priority and Fairness is the
real protection, and a client-side limit mostly adds latency. Turn it on with
``Client.from_kubeconfig(qps=20, burst=30)`` when talking to servers without APF.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """A token bucket shared by all requests of one client.

    ``acquire()`` waits until a token is available and returns the seconds it waited. Waiters are
    served in arrival order: each takes a token "on credit", so the bucket may go negative and
    later callers wait for the tokens earlier callers already reserved.
    """

    def __init__(self, qps: float, burst: int) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0 to rate limit, got {qps!r}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst!r}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._tokens = float(burst)
        self._updated = time.monotonic()

    def _refill(self, now: float) -> None:
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.qps)
        self._updated = now

    def reserve(self) -> float:
        """Take one token now and return how long the caller must wait before using it."""
        now = time.monotonic()
        self._refill(now)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    async def acquire(self) -> float:
        """Wait for a token; returns the time spent waiting, in seconds."""
        delay = self.reserve()
        if delay > 0:
            try:
                await asyncio.sleep(delay)
            except asyncio.CancelledError:
                # The reservation will never be used: hand it back, or every abandoned wait
                # (a caller's timeout) would delay all later requests by one more token.
                self._tokens = min(float(self.burst), self._tokens + 1.0)
                raise
        return delay
