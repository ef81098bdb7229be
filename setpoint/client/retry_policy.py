"""When to retry a request, and how long to wait first.

The rules mirror client-go (``rest/request.go``, ``rest/with_retry.go``) with one addition the
issue asks for: plain 5xx answers are retried for idempotent requests too.

* 429, or any 5xx carrying ``Retry-After``: the server asks us to come back; retried for every
  verb (the server has not acted on the request), waiting at least ``Retry-After``.
* 5xx without ``Retry-After``: retried only when the request is idempotent (reads, PUT with a
  resourceVersion, DELETE, apply and merge patches). A POST may already have created something.
* Connection refused / connect failures: the request never reached the server; retried always.
* Connection reset or closed after sending: retried only when idempotent.

Attempts are bounded (``max_retries``); waits grow exponentially with full jitter.
"""

from __future__ import annotations

import datetime
import email.utils
import random
import time
from dataclasses import dataclass

__all__ = ["RetryPolicy", "parse_retry_after"]

# client-go caps retries at 10 for Retry-After; 5 keeps a stuck request from blocking a reconcile
# for minutes (the work queue retries with its own backoff anyway).
DEFAULT_MAX_RETRIES = 5
# First wait: short enough for a blip, long enough not to hammer a restarting server.
DEFAULT_INITIAL_BACKOFF = 0.2
# Longest computed wait between two attempts (Retry-After may ask for more, up to the cap below).
DEFAULT_MAX_BACKOFF = 10.0
# Never wait longer than this on a server's Retry-After (protects against absurd values).
MAX_RETRY_AFTER = 60.0

_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # "-0000": HTTP dates are UTC, never the local zone
            when = when.replace(tzinfo=datetime.UTC)
        seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def is_idempotent_method(method: str) -> bool:
    """Whether repeating a request with this HTTP method cannot do harm by default."""
    return method.upper() in _IDEMPOTENT_METHODS


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter; ``max_retries=0`` disables retries."""

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_backoff: float = DEFAULT_INITIAL_BACKOFF
    max_backoff: float = DEFAULT_MAX_BACKOFF

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries!r}")
        if self.initial_backoff < 0 or self.max_backoff < 0:
            raise ValueError("initial_backoff and max_backoff must be >= 0")

    def backoff(self, retry: int, retry_after: float | None = None) -> float:
        """Wait before retry number ``retry`` (1-based); at least ``retry_after`` if given."""
        ceiling = min(self.max_backoff, self.initial_backoff * (2 ** (retry - 1)))
        # Full jitter spreads the retries of many clients hit by the same outage.
        wait = random.uniform(ceiling / 2, ceiling)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait

    @staticmethod
    def should_retry_status(code: int, *, has_retry_after: bool, idempotent: bool) -> bool:
        """Whether an HTTP answer with this code deserves another attempt."""
        if code == 429:
            return True
        if code >= 500:
            return has_retry_after or idempotent
        return False

    @staticmethod
    def should_retry_connection_error(*, sent: bool, idempotent: bool) -> bool:
        """Whether a transport failure deserves another attempt.

        ``sent`` is False when the connection could not even be opened (nothing reached the
        server), which makes any request safe to repeat.
        """
        return idempotent or not sent
