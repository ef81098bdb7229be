"""Property-based tests of the work queue's invariants against a simple reference model."""

from __future__ import annotations

import asyncio

import hypothesis.strategies as st
import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.workqueue import QueueShutDown, WorkQueue

KEYS = st.sampled_from(["a", "b", "c", "d"])
DELAYS = st.sampled_from([0.0, 0.001, 0.005, 0.01, 0.05, 1.0])


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class WorkQueueMachine(RuleBasedStateMachine):
    """Drives a WorkQueue (synchronous API, fake clock) and a model side by side."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.queue: WorkQueue[str] = WorkQueue(
            rate_limiter=ItemExponentialFailureRateLimiter(0.005, 1000.0), clock=self.clock
        )
        self.fifo: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.delayed: dict[str, tuple[float, int]] = {}
        self.sequence = 0
        self.failures: dict[str, int] = {}
        self.shut = False

    # -- model operations --------------------------------------------------------------------

    def _model_add(self, key: str) -> None:
        if self.shut or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.fifo.append(key)

    def _model_add_after(self, key: str, delay: float) -> None:
        if self.shut:
            return
        if delay <= 0:
            self._model_add(key)
            return
        ready = self.clock.now + delay
        current = self.delayed.get(key)
        if current is not None and current[0] <= ready:
            return
        self.sequence += 1
        self.delayed[key] = (ready, self.sequence)

    # -- rules ---------------------------------------------------------------------------------

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.queue.add(key)
        self._model_add(key)

    @rule()
    def get(self) -> None:
        if not self.fifo:
            expected_error = QueueShutDown if self.shut else asyncio.QueueEmpty
            with pytest.raises(expected_error):
                self.queue.get_nowait()
            return
        expected = self.fifo.pop(0)
        got = self.queue.get_nowait()
        assert got == expected
        assert got not in self.processing, "a key was handed to a second worker"
        self.dirty.discard(got)
        self.processing.add(got)

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self.processing.discard(key)
        if key in self.dirty:
            self.fifo.append(key)

    @rule(key=KEYS)
    def done_of_idle_key_is_ignored(self, key: str) -> None:
        if key not in self.processing:
            self.queue.done(key)

    @rule(key=KEYS, delay=DELAYS)
    def add_after(self, key: str, delay: float) -> None:
        self.queue.add_after(key, delay)
        self._model_add_after(key, delay)

    @rule(key=KEYS)
    def add_rate_limited(self, key: str) -> None:
        self.queue.add_rate_limited(key)
        if self.shut:
            return
        failures = self.failures.get(key, 0)
        self.failures[key] = failures + 1
        self._model_add_after(key, min(0.005 * 2**failures, 1000.0))

    @rule(key=KEYS)
    def forget(self, key: str) -> None:
        self.queue.forget(key)
        self.failures.pop(key, None)

    @rule(seconds=st.sampled_from([0.0, 0.001, 0.004, 0.02, 0.5, 2.0, 5000.0]))
    def advance_clock(self, seconds: float) -> None:
        self.clock.now += seconds
        released = self.queue.release_due()
        due = sorted(
            (ready, seq, key)
            for key, (ready, seq) in self.delayed.items()
            if ready <= self.clock.now
        )
        assert released == len(due)
        for _, _, key in due:
            del self.delayed[key]
            self._model_add(key)

    @rule()
    def shut_down(self) -> None:
        self.queue.shut_down()
        self.shut = True
        self.delayed.clear()

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def same_depth_and_flight(self) -> None:
        assert len(self.queue) == len(self.fifo)
        assert self.queue.in_flight == len(self.processing)
        assert self.queue.delayed == len(self.delayed)

    @invariant()
    def queued_keys_are_unique(self) -> None:
        assert len(set(self.fifo)) == len(self.fifo)

    @invariant()
    def key_states_agree(self) -> None:
        for key in ["a", "b", "c", "d"]:
            assert self.queue.is_processing(key) == (key in self.processing)
            assert self.queue.is_queued(key) == (key in self.dirty)
            assert self.queue.num_requeues(key) == self.failures.get(key, 0)


WorkQueueMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None
)
TestWorkQueueStateMachine = WorkQueueMachine.TestCase
