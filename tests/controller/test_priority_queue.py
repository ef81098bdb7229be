"""The work queue's priorities: a fresh event is not stuck behind an initial-list backlog, and
aging keeps a low-priority backlog from starving (properties checked with hypothesis)."""

from __future__ import annotations

import itertools

import hypothesis.strategies as st
from hypothesis import given, settings

from setpoint.controller.workqueue import PRIORITY_LOW, PRIORITY_NORMAL, WorkQueue


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_new_key_goes_ahead_of_a_10000_key_initial_backlog() -> None:
    queue: WorkQueue[str] = WorkQueue(clock=Ticks())
    for i in range(10_000):
        queue.add(f"listed-{i}", PRIORITY_LOW)
    queue.add("fresh")
    assert queue.get_nowait() == "fresh"
    assert queue.depth_by_priority() == {PRIORITY_LOW: 10_000, PRIORITY_NORMAL: 0}


def test_adding_at_a_higher_priority_moves_a_queued_key_up_once() -> None:
    queue: WorkQueue[str] = WorkQueue(clock=Ticks())
    for key in ("a", "b", "c"):
        queue.add(key, PRIORITY_LOW)
    queue.add("c")  # an event for a key that was listed
    assert len(queue) == 3
    assert [queue.get_nowait() for _ in range(3)] == ["c", "a", "b"]
    assert len(queue) == 0


OPERATIONS = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.sampled_from([PRIORITY_LOW, PRIORITY_NORMAL])),
    max_size=60,
)


@settings(deadline=None)
@given(OPERATIONS)
def test_each_key_is_handed_out_once_highest_priority_first_fifo_within(
    adds: list[tuple[str, int]],
) -> None:
    """With no aging, the order is: by the key's highest priority, then by first add."""
    queue: WorkQueue[str] = WorkQueue(clock=Ticks(), aging=float("inf"))
    best: dict[str, int] = {}
    first: dict[str, int] = {}
    for index, (key, priority) in enumerate(adds):
        queue.add(key, priority)
        best[key] = max(priority, best.get(key, priority))
        first.setdefault(key, index)
    taken = [queue.get_nowait() for _ in range(len(queue))]
    assert len(taken) == len(set(taken)) == len(best)
    # Within one priority, a key moved up goes after the keys already at that priority, so
    # only the split between priorities and FIFO among never-moved keys are checked.
    assert [best[key] for key in taken] == sorted((best[key] for key in taken), reverse=True)
    stayed = [key for key in taken if best[key] == PRIORITY_LOW]
    assert stayed == sorted(stayed, key=first.__getitem__)


@settings(deadline=None)
@given(st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40))
def test_aging_serves_a_waiting_backlog_at_least_every_other_turn(
    backlog: int, events: int
) -> None:
    """Under a continuous stream of normal events, aged low-priority keys still get every other
    turn, and a fresh event waits behind at most one aged key."""
    ticks = Ticks()
    queue: WorkQueue[str] = WorkQueue(clock=ticks, aging=1.0)
    for i in range(backlog):
        queue.add(f"low-{i}", PRIORITY_LOW)
    ticks.now = 5.0  # the backlog has aged
    taken: list[str] = []
    for i in range(events):
        queue.add(f"event-{i}")
        taken.append(queue.get_nowait())
        if len(queue):
            taken.append(queue.get_nowait())
    low_taken = [key for key in taken if key.startswith("low-")]
    assert len(low_taken) >= min(backlog, events - 1)
    # no two normal events in a row while aged keys wait
    for before, after in itertools.pairwise(taken):
        if before.startswith("event-") and after.startswith("event-"):
            assert len(low_taken) == backlog


def test_workqueue_depth_is_exported_per_priority() -> None:
    from prometheus_client import generate_latest

    from setpoint.client.metrics import REGISTRY

    queue: WorkQueue[str] = WorkQueue("priority-depth-queue", controller="priority-depth")
    for key in ("a", "b", "c"):
        queue.add(key, PRIORITY_LOW)
    queue.add("d")
    text = generate_latest(REGISTRY).decode()
    labels = 'controller="priority-depth",name="priority-depth-queue"'
    assert f'workqueue_depth{{{labels},priority="-100"}} 3.0' in text
    assert f'workqueue_depth{{{labels},priority="0"}} 1.0' in text
