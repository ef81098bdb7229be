"""A bounded ring of numbered records that readers page through and wait on.

Both debug feeds use it: the operator's reconcile trace (:mod:`setpoint.controller.trace`) and
the local API server's audit feed. Each appended record gets the next sequence number (1, 2,
...); the ring keeps the newest ``capacity`` of them. A reader asks for what came after the
last number it saw (:meth:`RecordRing.since`), which also tells it whether records it never
saw were evicted meanwhile, and waits for more with :meth:`RecordRing.wait_after`.

Appending costs a deque append and, only when a reader waits, waking it: writers never wait
for readers. A ring belongs to one event loop: append, read and wait on its thread (code on
other threads hands its records over with ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["RecordRing"]

R = TypeVar("R")


class RecordRing(Generic[R]):
    """The newest ``capacity`` records, numbered from 1 in the order they were appended."""

    __slots__ = ("_items", "_wakeup", "capacity", "last_seq")

    def __init__(self, capacity: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity: must be an integer >= 1, got {capacity!r}")
        self.capacity = capacity
        #: The number of the newest record (0 before the first).
        self.last_seq = 0
        # The records only: their numbers are contiguous, so the first one's is last_seq - len + 1.
        self._items: deque[R] = deque(maxlen=capacity)
        self._wakeup: asyncio.Event | None = None

    def __len__(self) -> int:
        return len(self._items)

    def append(self, record: R) -> int:
        """Keep ``record`` (evicting the oldest when full); its sequence number."""
        self._items.append(record)
        seq = self.last_seq = self.last_seq + 1
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            wakeup.set()
        return seq

    def wake(self) -> None:
        """Wake every waiting reader now (e.g. to let it see that it must stop)."""
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            wakeup.set()

    def since(
        self, seq: int, match: Callable[[R], bool] | None = None, limit: int | None = None
    ) -> tuple[list[tuple[int, R]], bool]:
        """The records numbered after ``seq`` (oldest first, those ``match`` accepts, at most
        ``limit``), and whether some records after ``seq`` were already evicted."""
        items = self._items
        last = self.last_seq
        first = last - len(items) + 1
        dropped = seq < first - 1 and last > seq
        start = max(0, seq - first + 1)
        taken = (
            list(zip(itertools.count(first + start), itertools.islice(items, start, None)))
            if start < len(items)
            else []
        )
        if match is not None:
            taken = [item for item in taken if match(item[1])]
        if limit is not None and len(taken) > limit:
            taken = taken[:limit]
        return taken, dropped

    async def wait_after(self, seq: int, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait until a record numbered after ``seq`` exists, :meth:`wake` is called or
        ``timeout`` passes; whether such a record exists."""
        if self.last_seq > seq:
            return True
        wakeup = self._wakeup
        if wakeup is None:
            wakeup = self._wakeup = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await wakeup.wait()
        return self.last_seq > seq
