"""The order ``make test`` hands files to its workers (``tests/conftest.py``): files holding a
``slow`` test first, each file whole and in place; a serial run keeps the collection order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import pytest_collection_modifyitems


@dataclass
class FakeItem:
    """What the hook reads of a collected test: its file and its markers."""

    path: Path
    name: str
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def _collected() -> list[FakeItem]:
    return [
        FakeItem(Path("a.py"), "a1"),
        FakeItem(Path("a.py"), "a2"),
        FakeItem(Path("b.py"), "b1"),
        FakeItem(Path("b.py"), "b2", {"slow"}),
        FakeItem(Path("b.py"), "b3"),
        FakeItem(Path("c.py"), "c1"),
        FakeItem(Path("d.py"), "d1", {"slow"}),
        FakeItem(Path("e.py"), "e1"),
    ]


def test_a_worker_runs_the_files_with_a_slow_test_first_each_whole() -> None:
    items = _collected()
    worker: pytest.Config = SimpleNamespace(workerinput={"workerid": "gw0"})  # type: ignore[assignment]
    pytest_collection_modifyitems(worker, items)  # type: ignore[arg-type]
    assert [item.name for item in items] == ["b1", "b2", "b3", "d1", "a1", "a2", "c1", "e1"]


def test_a_serial_run_keeps_the_collection_order() -> None:
    items = _collected()
    serial: pytest.Config = SimpleNamespace()  # type: ignore[assignment]
    pytest_collection_modifyitems(serial, items)  # type: ignore[arg-type]
    assert [item.name for item in items] == [item.name for item in _collected()]
