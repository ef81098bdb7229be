"""Cooperative time slicing: long CPU work that gives the event loop a turn every few ms.

Decoding and diffing a 10,000-object list takes a few hundred milliseconds of pure CPU. Done in
one go it would freeze every other task (lease renewals, probes, other watches). A
:class:`LoopSlicer` is shared by all the phases of one such job (decode, diff, commit), so the
budget carries over from one phase to the next instead of restarting at each.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final

__all__ = ["LoopSlicer"]

# Work items between clock reads: a clock read per item would cost more than the work.
ITEMS_PER_CLOCK_CHECK: Final = 32


class LoopSlicer:
    """Counts work items and yields to the event loop once ``slice_seconds`` have passed."""

    __slots__ = ("_count", "_slice", "_started", "yields")

    def __init__(self, slice_seconds: float) -> None:
        self._slice = slice_seconds
        self._started = time.perf_counter()
        self._count = 0
        #: How many times the loop was given a turn.
        self.yields = 0

    def due(self) -> bool:
        """Count one work item; True when it is time to yield (then ``await yield_now()``)."""
        self._count += 1
        if self._count % ITEMS_PER_CLOCK_CHECK:
            return False
        return time.perf_counter() - self._started > self._slice

    async def yield_now(self) -> None:
        """Give the event loop a turn and start a new slice."""
        await asyncio.sleep(0)
        self.yields += 1
        self._started = time.perf_counter()
