"""Random sequences of writes on both backends behave like a plain dict with a counter."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.storage import (
    KeyExistsError,
    KeyNotFoundError,
    MemoryStorage,
    RevisionConflictError,
    SqliteStorage,
    Storage,
    StorageError,
)
from tests.cluster.storage.objects import decoded
from tests.cluster.storage.test_watch import take

KEYS = [f"/core/configmaps/{ns}/{name}" for ns in ("a", "b") for name in ("x", "y", "z")]


@dataclass(frozen=True)
class Op:
    kind: str  # create | update | delete
    key: str
    # None: unconditional; otherwise an offset from the current revision (0 = the right one).
    revision_offset: int | None
    payload: int


ops = st.lists(
    st.builds(
        Op,
        kind=st.sampled_from(["create", "update", "delete"]),
        key=st.sampled_from(KEYS),
        revision_offset=st.one_of(st.none(), st.sampled_from([0, 0, 0, -1, 1])),
        payload=st.integers(0, 3),
    ),
    max_size=40,
)


class Model:
    """The reference: a dict of key -> (revision, object) and a revision counter."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[int, dict[str, Any]]] = {}
        self.revision = 0
        self.events: list[tuple[str, str, int]] = []

    def apply(self, op: Op) -> type[StorageError] | None:
        current = self.objects.get(op.key)
        if op.kind == "create":
            if current is not None:
                return KeyExistsError
        else:
            if current is None:
                return KeyNotFoundError
            if op.revision_offset not in (None, 0):
                return RevisionConflictError
        self.revision += 1
        if op.kind == "delete":
            del self.objects[op.key]
            self.events.append(("DELETED", op.key, self.revision))
        else:
            self.objects[op.key] = (self.revision, body(op))
            self.events.append(
                ("ADDED" if op.kind == "create" else "MODIFIED", op.key, self.revision)
            )
        return None


def body(op: Op) -> dict[str, Any]:
    return {"metadata": {"name": op.key.rsplit("/", 1)[1]}, "spec": {"n": op.payload}}


async def run(storage: Storage, sequence: list[Op], *, wait_each: bool) -> None:
    model = Model()
    for op in sequence:
        current = storage.get(op.key)
        expected = None
        if op.revision_offset is not None:
            expected = (current.revision if current else 1) + op.revision_offset
        want = model.apply(op)
        try:
            if op.kind == "create":
                record = storage.create(op.key, body(op))
            elif op.kind == "update":
                record = storage.update(op.key, body(op), expected_revision=expected)
            else:
                record = storage.delete(op.key, expected_revision=expected)
        except StorageError as exc:
            assert type(exc) is want, (op, exc)
            continue
        assert want is None, (op, "should have failed")
        assert record.revision == model.revision
        if wait_each:
            await storage.wait_durable(record.revision)

    # Without waiting after each write, the SQLite backend commits them in groups.
    await storage.wait_durable(storage.revision)
    assert storage.revision == model.revision
    listed = storage.list("/")
    assert [r.key for r in listed] == sorted(model.objects)
    for record in listed:
        revision, obj = model.objects[record.key]
        assert record.revision == revision
        value = decoded(record.value)
        assert value["metadata"] == {**obj["metadata"], "resourceVersion": str(revision)}
        assert value["spec"] == obj["spec"]
    for prefix in ("/core/configmaps/a/", "/core/configmaps/b/"):
        assert storage.count(prefix) == sum(1 for k in model.objects if k.startswith(prefix))

    watch = storage.watch("/", 0)
    events = await take(watch, len(model.events)) if model.events else []
    watch.close()
    assert [(e.type, e.key, e.revision) for e in events] == model.events


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=ops, wait_each=st.booleans())
def test_random_writes_match_a_dict_model(
    backend: str, sequence: list[Op], wait_each: bool
) -> None:
    async def scenario() -> None:
        with tempfile.TemporaryDirectory() as directory:
            storage: Storage
            if backend == "memory":
                storage = MemoryStorage()
            else:
                storage = SqliteStorage(Path(directory) / "model.db")
            try:
                await run(storage, sequence, wait_each=wait_each)
            finally:
                await storage.close()
            if backend == "sqlite":
                # Reopened, the file holds exactly what the model holds.
                reopened = SqliteStorage(Path(directory) / "model.db")
                try:
                    assert reopened.revision == sum(1 for _ in _successes(sequence))
                finally:
                    await reopened.close()

    asyncio.run(scenario())


def _successes(sequence: list[Op]) -> list[Op]:
    model = Model()
    return [op for op in sequence if model.apply(op) is None]
