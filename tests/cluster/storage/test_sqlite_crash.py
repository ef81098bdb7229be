"""Every write acknowledged by ``wait_durable`` survives ``kill -9`` of the writing process."""

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


def run_writer_and_kill(path: Path) -> dict[str, int]:
    """Start the writer, SIGKILL it mid-stream; return every acknowledged key -> revision."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster.storage.crash_writer", str(path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    acknowledged: dict[str, int] = {}
    try:
        header = process.stdout.readline()
        assert header.startswith("READY"), header
        while len(acknowledged) < ACKNOWLEDGED_BEFORE_KILL:
            line = process.stdout.readline()
            assert line, "the writer died on its own"
            key, revision = line.split()
            acknowledged[key] = int(revision)
        os.kill(process.pid, signal.SIGKILL)
        # Lines already written before the kill were acknowledged too.
        for line in process.stdout:
            parts = line.split()
            if len(parts) == 2:
                acknowledged[parts[0]] = int(parts[1])
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    return acknowledged


@pytest.mark.slow
async def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    acknowledged = run_writer_and_kill(path)

    storage = SqliteStorage(path)
    try:
        for key, revision in acknowledged.items():
            record = storage.get(key)
            assert record is not None, f"acknowledged {key} is lost"
            assert record.revision == revision
            assert rv(record.value) == str(revision)
        stored = storage.list("/")
        highest = max(r.revision for r in stored)
        assert storage.revision >= highest >= max(acknowledged.values())
        new = storage.create("/core/configmaps/crash/after", {"metadata": {"name": "after"}})
        assert new.revision > highest
        await storage.wait_durable(new.revision)
    finally:
        await storage.close()

    # A second crash on the same file: revisions keep growing, nothing acknowledged is lost.
    more = run_writer_and_kill(path)
    reopened = SqliteStorage(path)
    try:
        assert min(more.values()) > new.revision
        for key, revision in {**acknowledged, **more}.items():
            record = reopened.get(key)
            assert record is not None and record.revision == revision, key
    finally:
        await reopened.close()
