"""Shared pytest configuration. Area fixtures live in each area's conftest.py."""

from __future__ import annotations

import pytest

pytest_plugins = ["setpoint.testing.plugin"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test``), files that hold a ``slow`` test go first.

    ``--dist loadfile`` hands out whole files in the order the workers collected them; a
    two-minute file handed out last keeps one worker busy while the other has nothing left.
    Longest first is the usual cure, and ``slow`` is how a test says it is long. The sort is
    stable, so each file stays whole and in place within its group, and every worker collects
    the same order (xdist checks that). A serial run keeps the plain collection order.
    """
    if not hasattr(config, "workerinput"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
