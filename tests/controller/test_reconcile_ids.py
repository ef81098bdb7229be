"""Reconcile ids: UUID-shaped as controller-runtime's, never repeated, not even after a fork."""

from __future__ import annotations

import os
import uuid

from setpoint.controller.log_context import new_reconcile_id, reconcile_context


def test_reconcile_ids_are_distinct_version_4_uuids() -> None:
    ids = [new_reconcile_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    for text in ids[:3] + ids[-3:]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_reconcile_context_gives_a_fresh_id_unless_one_is_given() -> None:
    with reconcile_context("c", "ns/a") as first, reconcile_context("c", "ns/a") as second:
        assert first != second
    with reconcile_context("c", "ns/a", "given") as given:
        assert given == "given"


def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next ids, then leave without running pytest's exit
        os.close(read)
        os.write(write, " ".join(new_reconcile_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child_ids = pipe.read().decode().split()
    os.waitpid(pid, 0)
    parent_ids = [new_reconcile_id() for _ in range(3)]
    assert len(child_ids) == 3
    assert not set(child_ids) & set(parent_ids)
    assert child_ids[0][:24] != parent_ids[0][:24]  # a new random prefix
