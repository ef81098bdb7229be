"""Batches committed by ``SqliteFile.commit`` leave the file exactly as the changes say.

Whatever the batch — one change or hundreds, one key written several times, created and
deleted in the same batch — reopening the file must give each key as its last change left it,
every event newer than the compacted revision in order, and the last revision.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.storage.base import KeyExistsError, KeyNotFoundError, Record
from setpoint.cluster.apiserver.storage.keyspace import Change, Keyspace
from setpoint.cluster.apiserver.storage.sqlite_file import SqliteFile, StoredState

# Few keys, so that a batch often writes one key several times.
KEYS = [f"/core/configmaps/ns/o{i}" for i in range(72)]


@dataclass(frozen=True)
class Write:
    kind: str  # create | update | delete
    key: str
    payload: int


writes = st.builds(
    Write,
    kind=st.sampled_from(["create", "update", "delete"]),
    key=st.sampled_from(KEYS),
    payload=st.integers(0, 3),
)
# The same write to every key, in a random order: a batch of many rows of one kind.
sweeps = st.builds(
    lambda kind, keys, payload: [Write(kind, key, payload) for key in keys],
    kind=st.sampled_from(["create", "update", "delete"]),
    keys=st.permutations(KEYS),
    payload=st.integers(0, 3),
)
sizes = st.sampled_from([1, 2, 16, 129])
mixed = sizes.flatmap(lambda size: st.lists(writes, min_size=size, max_size=size))
batches = st.lists(
    st.lists(st.one_of(mixed, sweeps), min_size=1, max_size=3).map(
        lambda parts: [write for part in parts for write in part]
    ),
    min_size=1,
    max_size=4,
)


def _apply(keyspace: Keyspace, write: Write) -> Change | None:
    obj = {"metadata": {"name": write.key.rsplit("/", 1)[1]}, "data": {"p": "x" * write.payload}}
    try:
        if write.kind == "create":
            return keyspace.create(write.key, obj)
        if write.kind == "update":
            return keyspace.update(write.key, obj, expected_revision=None)
        return keyspace.delete(write.key, expected_revision=None)
    except (KeyExistsError, KeyNotFoundError):
        return None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=batches, compaction_lag=st.integers(0, 40))
def test_reopened_file_holds_what_the_batches_wrote(
    batches: list[list[Write]], compaction_lag: int
) -> None:
    keyspace = Keyspace()
    events = []
    compacted = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.db"
        storage_file = SqliteFile(path)
        try:
            for number, batch in enumerate(batches):
                changes = [c for c in (_apply(keyspace, w) for w in batch) if c is not None]
                if not changes:
                    continue
                compacted = max(compacted, keyspace.revision - compaction_lag)
                storage_file.commit(changes, compacted, float(number))
                events.extend((change.event, float(number)) for change in changes)
        finally:
            storage_file.close()

        state = _reopened_state(path)

    expected_records = keyspace.list("/")
    assert state.records == expected_records
    assert all(isinstance(r, Record) for r in state.records)
    assert state.revision == keyspace.revision
    assert state.events == [(event, at) for event, at in events if event.revision > compacted]


def _reopened_state(path: Path) -> StoredState:
    """What a fresh open of the file at ``path`` loads."""
    reopened = SqliteFile(path)
    try:
        return reopened.load()
    finally:
        reopened.close()


def test_a_failed_statement_leaves_nothing_of_its_batch(tmp_path: Path) -> None:
    keyspace = Keyspace()
    path = tmp_path / "data.db"
    storage_file = SqliteFile(path)
    try:
        kept = [keyspace.create(f"/core/configmaps/ns/k{i}", {"v": i}) for i in range(3)]
        storage_file.commit(kept, 0, 1.0)
        batch = [keyspace.create(f"/core/configmaps/ns/n{i}", {"v": i}) for i in range(100)]
        # The same event revision twice: the events table's primary key refuses the second.
        broken = [*batch, batch[-1]]
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            storage_file.commit(broken, 0, 2.0)
        # The connection is usable again: the failed transaction was rolled back.
        again = [keyspace.create("/core/configmaps/ns/after", {"v": 0})]
        storage_file.commit(again, 0, 3.0)
    finally:
        storage_file.close()

    state = _reopened_state(path)
    assert [r.key for r in state.records] == sorted(
        [c.record.key for c in kept] + ["/core/configmaps/ns/after"]
    )
    assert [event.revision for event, _ in state.events] == [1, 2, 3, 104]
    assert state.revision == 104
