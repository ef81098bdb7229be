"""Fixtures: every behavioural test runs against both storage backends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.apiserver.storage import MemoryStorage, SqliteStorage, Storage

BACKENDS = ["memory", "sqlite"]

StorageFactory = Callable[..., Storage]


@pytest.fixture(params=BACKENDS)
async def make_storage(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[StorageFactory]:
    """Open a storage of the parametrized backend (extra keyword arguments go to it)."""
    opened: list[Storage] = []

    def make(**kwargs: Any) -> Storage:
        storage: Storage
        if request.param == "memory":
            storage = MemoryStorage(**kwargs)
        else:
            storage = SqliteStorage(tmp_path / f"store-{len(opened)}.db", **kwargs)
        opened.append(storage)
        return storage

    yield make
    for storage in opened:
        await storage.close()


@pytest.fixture
def storage(make_storage: StorageFactory) -> Storage:
    """A fresh, empty storage of the parametrized backend."""
    return make_storage()
