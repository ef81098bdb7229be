"""What a reconciler receives and returns: ``Request``, ``Result``, ``TerminalError``.

A reconcile is level-based: it gets only the key of the primary object (``Request``), reads the
current state from the cache, acts, and says whether to run again. The outcome is one of:

- ``None`` or ``Result()``: done; the key's backoff is forgotten.
- ``Result(requeue_after=T)``: run again after ``T`` (seconds or a ``timedelta``); a negative
  ``T`` means "now" (a deadline computed as ``schedule - now`` may already have passed).
- ``Result(requeue_at=when)``: run again at the (timezone-aware) time ``when`` of the operator's
  clock; a past time means "now".
- raising :class:`RetryLater`: an expected retry (a precondition not met yet): one log line, no
  traceback, retried after ``after`` seconds or with the key's backoff.
- raising any other exception: an error; the key is re-queued with per-key exponential backoff.
- raising :class:`TerminalError`: an error that retrying cannot fix; logged, counted, not retried.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from setpoint.api.gvk import ObjectKey

__all__ = [
    "AsyncReconcileFunction",
    "ReconcileFunction",
    "Reconciler",
    "ReconcilerLike",
    "Request",
    "Result",
    "RetryLater",
    "SyncReconcileFunction",
    "TerminalError",
]

#: The key of the object to reconcile: ``Request(namespace, name)``; namespace ``None`` for
#: cluster-scoped objects. It is the same type as the cache's ``ObjectKey`` so a request can be
#: used directly for cache lookups (``informer.store.get(request)``).
Request: TypeAlias = ObjectKey


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of a successful reconcile.

    ``Result()`` means done. ``requeue_after`` (seconds or ``timedelta``) asks for another run
    after that delay, without counting as a failure; a negative delay is clamped to 0 ("now").
    ``requeue_at`` (a timezone-aware ``datetime``) asks for a run at that time of the
    operator's clock (a past time means now); give one of the two. ``requeue=True``
    (controller-runtime's deprecated flag, kept for familiarity) re-queues with the key's rate
    limiter backoff.
    """

    requeue_after: float | datetime.timedelta | None = None
    requeue: bool = False
    requeue_at: datetime.datetime | None = None

    def __post_init__(self) -> None:
        delay = self.requeue_after
        if isinstance(delay, datetime.timedelta):
            delay = delay.total_seconds()
            object.__setattr__(self, "requeue_after", delay)
        if delay is not None:
            if isinstance(delay, bool) or not isinstance(delay, int | float):
                raise TypeError(
                    f"Result.requeue_after: expected seconds (int/float) or a timedelta, "
                    f"got {type(delay).__name__}"
                )
            if not (delay < math.inf) or delay != delay:  # rejects NaN and +inf
                raise ValueError(
                    f"Result.requeue_after: must be a finite number of seconds, got {delay!r}"
                )
            if delay < 0:
                # schedule - now computed at the boundary: already due, not an error.
                object.__setattr__(self, "requeue_after", 0.0)
        when = self.requeue_at
        if when is not None:
            if not isinstance(when, datetime.datetime):
                raise TypeError(
                    f"Result.requeue_at: expected a datetime, got {type(when).__name__}"
                )
            if when.tzinfo is None:
                raise ValueError(
                    "Result.requeue_at: the datetime must be timezone-aware "
                    "(e.g. datetime.now(UTC) + timedelta(minutes=5))"
                )
            if self.requeue_after is not None:
                raise ValueError("Result: give requeue_after or requeue_at, not both")

    @property
    def requeue_after_seconds(self) -> float:
        """The requested delay in seconds (0 when none was requested; see :meth:`delay`)."""
        delay = self.requeue_after
        if delay is None:
            return 0.0
        assert not isinstance(delay, datetime.timedelta)  # normalised in __post_init__
        return float(delay)

    def delay(self, now: datetime.datetime) -> float | None:
        """Seconds until the requested run at wall time ``now`` (>= 0), or None for none."""
        if self.requeue_at is not None:
            return max(0.0, (self.requeue_at - now).total_seconds())
        if self.requeue_after is not None:
            return self.requeue_after_seconds
        return None

    @property
    def is_zero(self) -> bool:
        """True when the result asks for nothing: the reconcile is done."""
        return not self.requeue and self.requeue_after is None and self.requeue_at is None


class RetryLater(Exception):
    """An expected retry: the world is not ready yet (a dependency missing, a name taken).

    ``raise setpoint.RetryLater("secret db-creds does not exist yet", after=10)`` logs one line
    (no traceback), counts as an ``error`` in the metrics, and runs the key again after
    ``after`` seconds, or with the key's exponential backoff when ``after`` is None.
    """

    def __init__(self, message: str, after: float | datetime.timedelta | None = None) -> None:
        super().__init__(message)
        if isinstance(after, datetime.timedelta):
            after = after.total_seconds()
        if after is not None and (after != after or after == math.inf):
            raise ValueError(f"RetryLater: after must be a finite number of seconds, got {after!r}")
        self.after: float | None = None if after is None else max(0.0, float(after))


class TerminalError(Exception):
    """A reconcile error that retrying will not fix: logged and counted, never re-queued.

    Wrap the cause: ``raise TerminalError("spec.replicas must be positive") from err``. The key is
    reconciled again only when a new event for it arrives.
    """


@runtime_checkable
class Reconciler(Protocol):
    """An object whose ``reconcile`` method handles one request (async or sync)."""

    def reconcile(self, request: Request) -> Awaitable[Result | None] | Result | None:
        """Drive the world toward the desired state of the object named by ``request``."""
        ...


AsyncReconcileFunction: TypeAlias = Callable[[Request], Awaitable[Result | None]]
SyncReconcileFunction: TypeAlias = Callable[[Request], Result | None]
ReconcileFunction: TypeAlias = AsyncReconcileFunction | SyncReconcileFunction
#: Anything the controller accepts as a reconciler: an object with ``reconcile`` or a function.
ReconcilerLike: TypeAlias = Reconciler | ReconcileFunction
