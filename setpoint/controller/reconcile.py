"""What a reconciler receives and returns: ``Request``, ``Result``, ``TerminalError``.

A reconcile is level-based: it gets only the key of the primary object (``Request``), reads the
current state from the cache, acts, and says whether to run again. The outcome is one of:

- ``None`` or ``Result()``: done; the key's backoff is forgotten.
- ``Result(requeue_after=T)``: run again after ``T`` (seconds or a ``timedelta``).
- raising any exception: an error; the key is re-queued with per-key exponential backoff.
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
    after that delay, without counting as a failure. ``requeue=True`` (controller-runtime's
    deprecated flag, kept for familiarity) re-queues with the key's rate limiter backoff.
    """

    requeue_after: float | datetime.timedelta | None = None
    requeue: bool = False

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
            if not (0 <= delay < math.inf):  # also rejects NaN
                raise ValueError(
                    f"Result.requeue_after: must be a finite number >= 0 seconds, got {delay!r}"
                )

    @property
    def requeue_after_seconds(self) -> float:
        """The requested delay in seconds (0 when none was requested)."""
        delay = self.requeue_after
        if delay is None:
            return 0.0
        assert not isinstance(delay, datetime.timedelta)  # normalised in __post_init__
        return float(delay)

    @property
    def is_zero(self) -> bool:
        """True when the result asks for nothing: the reconcile is done."""
        return not self.requeue and not self.requeue_after_seconds


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
