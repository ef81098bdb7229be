"""Every write acknowledged by ``wait_durable`` survives ``kill -9`` of the writing process.

The writer creates, updates and deletes objects with several writers at once, so the batches
it commits mix the three kinds and often hold more than one write of a key.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from setpoint.cluster.apiserver.storage import SqliteStorage
from tests.cluster.storage.objects import rv

REPO_ROOT = Path(__file__).resolve().parents[3]
# Acknowledged writes to see before the kill; enough for many group commits to have happened.
ACKNOWLEDGED_BEFORE_KILL = 400


# What was last acknowledged for a key: (revision, "create" | "update" | "delete").
Acknowledged = tuple[int, str]


def run_writer_and_kill(path: Path) -> dict[str, Acknowledged]:
    """Start the writer, SIGKILL it mid-stream; return each key's last acknowledged write."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster.storage.crash_writer", str(path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    acknowledged: dict[str, Acknowledged] = {}
    try:
        header = process.stdout.readline()
        assert header.startswith("READY"), header
        while len(acknowledged) < ACKNOWLEDGED_BEFORE_KILL:
            line = process.stdout.readline()
            assert line, "the writer died on its own"
            key, revision, what = line.split()
            acknowledged[key] = (int(revision), what)
        os.kill(process.pid, signal.SIGKILL)
        # Lines already written before the kill were acknowledged too.
        for line in process.stdout:
            parts = line.split()
            if len(parts) == 3:
                acknowledged[parts[0]] = (int(parts[1]), parts[2])
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    return acknowledged


def check_survived(storage: SqliteStorage, acknowledged: dict[str, Acknowledged]) -> None:
    """Each key is as its last acknowledged write left it, or as the write after it did
    (committed, but killed before it was acknowledged: an update after the create, a
    delete after the update of every fourth object)."""
    for key, (revision, what) in acknowledged.items():
        record = storage.get(key)
        if what == "delete":
            assert record is None, f"acknowledged delete of {key} is lost"
            continue
        deletable = int(key.rsplit("o", 1)[1]) % 4 == 0
        if record is None:
            assert what == "update" and deletable, f"acknowledged {what} of {key} is lost"
            continue
        if what == "update":
            assert record.revision == revision, key
        else:
            assert record.revision >= revision, key
        assert rv(record.value) == str(record.revision)


@pytest.mark.slow
async def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    acknowledged = run_writer_and_kill(path)
    assert {what for _, what in acknowledged.values()} == {"create", "update", "delete"}

    storage = SqliteStorage(path)
    try:
        check_survived(storage, acknowledged)
        highest = max(r.revision for r in storage.list("/"))
        newest_acknowledged = max(revision for revision, _ in acknowledged.values())
        assert storage.revision >= highest
        assert storage.revision >= newest_acknowledged
        new = storage.create("/core/configmaps/crash/after", {"metadata": {"name": "after"}})
        assert new.revision > max(highest, newest_acknowledged)
        await storage.wait_durable(new.revision)
    finally:
        await storage.close()

    # A second crash on the same file: revisions keep growing, nothing acknowledged is lost.
    more = run_writer_and_kill(path)
    reopened = SqliteStorage(path)
    try:
        assert min(revision for revision, _ in more.values()) > new.revision
        check_survived(reopened, {**acknowledged, **more})
    finally:
        await reopened.close()
