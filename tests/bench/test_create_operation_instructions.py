"""The object operation's instruction count: its child's steps (the count itself takes minutes)."""

from __future__ import annotations

import asyncio

import pytest

from bench import create_operation_instructions


def test_the_child_counts_only_the_creates_with_the_collector_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[tuple[str, ...], bool]] = []

    def control(*options: str) -> None:
        import gc

        calls.append((options, gc.isenabled()))

    monkeypatch.setattr(create_operation_instructions, "_callgrind_control", control)
    monkeypatch.setattr(create_operation_instructions, "WARM_UP_CREATES", 3)

    asyncio.run(create_operation_instructions._child(5))

    assert calls == [(("-i", "on"), False), (("-i", "off"), False)]
