"""Create, update, delete, conflicts and revisions: the same rules on both backends."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver.storage import (
    InvalidValueError,
    KeyExistsError,
    KeyNotFoundError,
    RevisionConflictError,
    Storage,
    StorageClosedError,
)
from tests.cluster.storage.objects import configmap, decoded, key_of, rv


async def test_empty_store_is_at_revision_zero(storage: Storage) -> None:
    assert storage.revision == 0
    assert storage.get(key_of("a")) is None
    assert storage.list("/") == []
    assert storage.count("/") == 0


async def test_create_stamps_resource_version_and_keeps_key_order(storage: Storage) -> None:
    obj = configmap("a", x="1")
    record = storage.create(key_of("a"), obj)
    await storage.wait_durable(record.revision)

    assert record.revision == 1 == storage.revision
    assert rv(record.value) == "1"
    assert list(decoded(record.value)) == ["apiVersion", "kind", "metadata", "data"]
    assert list(decoded(record.value)["metadata"]) == ["name", "namespace", "resourceVersion"]
    assert "resourceVersion" not in obj["metadata"], "the caller's dict must not be changed"
    assert storage.get(key_of("a")) == record


async def test_create_existing_key_fails_and_changes_nothing(storage: Storage) -> None:
    first = storage.create(key_of("a"), configmap("a", v="1"))
    with pytest.raises(KeyExistsError) as caught:
        storage.create(key_of("a"), configmap("a", v="2"))
    assert caught.value.key == key_of("a")
    assert storage.get(key_of("a")) == first
    assert storage.revision == 1


async def test_update_replaces_value_and_bumps_revision(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a", v="1"))
    storage.create(key_of("b"), configmap("b"))
    updated = storage.update(key_of("a"), configmap("a", v="2"), expected_revision=1)
    await storage.wait_durable(updated.revision)

    assert updated.revision == 3
    assert decoded(updated.value)["data"] == {"v": "2"}
    assert rv(updated.value) == "3"
    assert storage.get(key_of("a")) == updated


async def test_update_without_expected_revision_is_unconditional(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a"))
    storage.update(key_of("a"), configmap("a", v="1"))
    record = storage.update(key_of("a"), configmap("a", v="2"))
    assert record.revision == 3
    assert decoded(record.value)["data"] == {"v": "2"}


async def test_update_with_stale_revision_conflicts(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a", v="1"))
    current = storage.update(key_of("a"), configmap("a", v="2"))
    with pytest.raises(RevisionConflictError) as caught:
        storage.update(key_of("a"), configmap("a", v="3"), expected_revision=1)
    assert (caught.value.key, caught.value.expected, caught.value.actual) == (key_of("a"), 1, 2)
    assert storage.get(key_of("a")) == current
    assert storage.revision == 2


async def test_update_or_delete_of_missing_key_is_not_found(storage: Storage) -> None:
    with pytest.raises(KeyNotFoundError):
        storage.update(key_of("nope"), configmap("nope"))
    with pytest.raises(KeyNotFoundError) as caught:
        storage.delete(key_of("nope"))
    assert caught.value.key == key_of("nope")
    assert storage.revision == 0


async def test_delete_returns_last_state_at_the_deletions_revision(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a", v="1"))
    deleted = storage.delete(key_of("a"), expected_revision=1)
    await storage.wait_durable(deleted.revision)

    assert deleted.revision == 2 == storage.revision
    assert rv(deleted.value) == "2"
    assert decoded(deleted.value)["data"] == {"v": "1"}
    assert storage.get(key_of("a")) is None
    with pytest.raises(KeyNotFoundError):
        storage.delete(key_of("a"))


async def test_delete_with_stale_revision_conflicts(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a"))
    storage.update(key_of("a"), configmap("a", v="1"))
    with pytest.raises(RevisionConflictError):
        storage.delete(key_of("a"), expected_revision=1)
    assert storage.get(key_of("a")) is not None


async def test_recreate_after_delete_gets_a_new_revision(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a"))
    storage.delete(key_of("a"))
    again = storage.create(key_of("a"), configmap("a"))
    assert again.revision == 3
    assert rv(again.value) == "3"


async def test_revision_is_strictly_increasing_across_keys(storage: Storage) -> None:
    revisions = [storage.create(key_of(f"o{i}"), configmap(f"o{i}")).revision for i in range(5)]
    revisions.append(storage.update(key_of("o1"), configmap("o1", v="x")).revision)
    revisions.append(storage.delete(key_of("o2")).revision)
    assert revisions == list(range(1, 8))


async def test_failed_writes_do_not_consume_revisions(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a"))
    with pytest.raises(KeyExistsError):
        storage.create(key_of("a"), configmap("a"))
    with pytest.raises(RevisionConflictError):
        storage.update(key_of("a"), configmap("a"), expected_revision=7)
    with pytest.raises(KeyNotFoundError):
        storage.delete(key_of("zz"))
    assert storage.create(key_of("b"), configmap("b")).revision == 2


async def test_integral_floats_are_written_as_integers(storage: Storage) -> None:
    obj = {"metadata": {"name": "f"}, "spec": {"replicas": 3.0, "ratio": 0.5, "big": 1e16}}
    record = storage.create("/example.com/widgets/default/f", obj)
    assert b'"replicas":3,' in record.value
    assert b'"ratio":0.5' in record.value
    assert b'"big":10000000000000000' in record.value


async def test_strings_that_look_like_floats_are_kept(storage: Storage) -> None:
    obj = {"metadata": {"name": "s"}, "data": {"ip": "10.0.0.1", "v": "1.0,", "e": "2e5"}}
    record = storage.create("/core/configmaps/default/s", obj)
    assert decoded(record.value)["data"] == obj["data"]


@pytest.mark.parametrize(
    ("key", "obj", "field"),
    [
        ("no-slash", {"metadata": {}}, "key"),
        ("/core/configmaps/", {"metadata": {}}, "key"),
        ("/core/configmaps//x", {"metadata": {}}, "key: must not contain an empty segment"),
        ("/core/configmaps/default/x", ["not", "a", "dict"], "JSON object"),
        ("/core/configmaps/default/x", {"metadata": "nope"}, "metadata"),
        ("/core/configmaps/default/x", {"metadata": {}, "spec": object()}, "JSON"),
    ],
)
async def test_malformed_input_is_rejected_with_a_clear_error(
    storage: Storage, key: str, obj: object, field: str
) -> None:
    with pytest.raises(InvalidValueError, match=field):
        storage.create(key, obj)  # type: ignore[arg-type]
    assert storage.revision == 0
    assert storage.count("/") == 0


async def test_calls_after_close_are_errors(storage: Storage) -> None:
    storage.create(key_of("a"), configmap("a"))
    await storage.close()
    with pytest.raises(StorageClosedError):
        storage.get(key_of("a"))
    with pytest.raises(StorageClosedError):
        storage.create(key_of("b"), configmap("b"))
    await storage.close()  # closing twice is harmless


async def test_waiting_for_a_revision_not_yet_written_is_an_error(storage: Storage) -> None:
    record = storage.create(key_of("a"), configmap("a"))
    await storage.wait_durable(record.revision)
    await storage.wait_durable(0)
    with pytest.raises(InvalidValueError, match="revision: 2 has not been written yet"):
        await storage.wait_durable(record.revision + 1)


async def test_identical_update_is_still_a_write(storage: Storage) -> None:
    # Skipping no-op writes is the API server's decision; the storage records every write.
    first = storage.create(key_of("a"), configmap("a", v="1"))
    second = storage.update(key_of("a"), configmap("a", v="1"))
    assert second.revision == first.revision + 1
    assert rv(second.value) == "2"
