"""The data directory and the database hold every Secret: owner only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from setpoint.cluster.local_cluster import DATA_FILE_NAME, open_storage


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_a_new_data_dir_and_its_files_are_owner_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    old_umask = os.umask(0o022)
    try:
        storage = open_storage(data_dir)
        record = storage.create("/core/secrets/default/s", {"metadata": {"name": "s"}})
        await storage.wait_durable(record.revision)
        assert mode(data_dir) == 0o700
        for name in (DATA_FILE_NAME, DATA_FILE_NAME + "-wal", DATA_FILE_NAME + "-shm"):
            path = data_dir / name
            if path.exists():
                assert mode(path) == 0o600, name
        await storage.close()
    finally:
        os.umask(old_umask)


async def test_an_existing_world_readable_database_is_made_private(tmp_path: Path) -> None:
    storage = open_storage(tmp_path)
    await storage.close()
    database = tmp_path / DATA_FILE_NAME
    database.chmod(0o644)
    reopened = open_storage(tmp_path)
    try:
        assert mode(database) == 0o600
    finally:
        await reopened.close()
