"""`Expectations`: ReplicaSet-style bookkeeping of creations and deletions not yet observed.

A controller that creates many children in one reconcile (a ReplicaSet's Pods) must not act
again on a cache that has not seen them all. Read-your-own-writes covers writes made through the
reconcile's context; ``Expectations`` covers the rest (writes made elsewhere, or several
processes' views), as kube-controller-manager's ``ControllerExpectations`` does::

    expectations = setpoint.Expectations()

    async def reconcile(ctx, request):
        if not expectations.satisfied(request):
            return None        # the events of our last writes are still coming
        missing = want - len(pods)
        expectations.expect(request, creations=missing)
        for _ in range(missing):
            await ctx.client.create(pod())

and in the child events (e.g. a ``watches`` map function), ``observe_creation(owner_key)`` /
``observe_deletion(owner_key)``. Expectations expire after ``ttl`` (5 minutes, as upstream), so a
lost event delays the controller but never blocks it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from setpoint.api.clock import SYSTEM_CLOCK, Clock

__all__ = ["EXPECTATIONS_TTL", "Expectations"]

#: kube-controller-manager's ExpectationsTimeout.
EXPECTATIONS_TTL = 300.0


@dataclass(slots=True)
class _Pending:
    creations: int
    deletions: int
    since: float


class Expectations:
    """Counts of creations/deletions each key still expects to observe."""

    def __init__(self, ttl: float = EXPECTATIONS_TTL, clock: Clock = SYSTEM_CLOCK) -> None:
        self.ttl = ttl
        self.clock = clock
        self._pending: dict[Hashable, _Pending] = {}

    def expect(self, key: Hashable, *, creations: int = 0, deletions: int = 0) -> None:
        """Record that ``key``'s reconcile made these writes (replaces earlier expectations)."""
        if creations < 0 or deletions < 0:
            raise ValueError("Expectations.expect: counts must be >= 0")
        self._pending[key] = _Pending(creations, deletions, self.clock.monotonic())

    def observe_creation(self, key: Hashable) -> None:
        """One expected creation of ``key`` was seen."""
        pending = self._pending.get(key)
        if pending is not None and pending.creations > 0:
            pending.creations -= 1

    def observe_deletion(self, key: Hashable) -> None:
        """One expected deletion of ``key`` was seen."""
        pending = self._pending.get(key)
        if pending is not None and pending.deletions > 0:
            pending.deletions -= 1

    def satisfied(self, key: Hashable) -> bool:
        """True when nothing is pending for ``key`` (or its expectations expired)."""
        pending = self._pending.get(key)
        if pending is None:
            return True
        if (pending.creations <= 0 and pending.deletions <= 0) or (
            self.clock.monotonic() - pending.since > self.ttl
        ):
            del self._pending[key]
            return True
        return False

    def forget(self, key: Hashable) -> None:
        """Drop ``key``'s expectations (e.g. when the owner is deleted)."""
        self._pending.pop(key, None)
