"""gc.freeze() requests: coalesced to one freeze per loop iteration."""

from __future__ import annotations

import asyncio
import gc

import pytest

from setpoint.cache import gc_freeze


async def test_requests_in_one_iteration_freeze_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(None))
    for _ in range(5):
        gc_freeze.request_gc_freeze()
    assert calls == []  # deferred to the end of the iteration, not per request
    await asyncio.sleep(0)
    assert len(calls) == 1
    gc_freeze.request_gc_freeze()
    await asyncio.sleep(0)
    assert len(calls) == 2


def test_without_a_loop_the_freeze_is_immediate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(None))
    gc_freeze.request_gc_freeze()
    assert len(calls) == 1
