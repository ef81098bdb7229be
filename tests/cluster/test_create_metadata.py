"""What a create keeps of the metadata it is sent: the server-owned fields never."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, new_uid
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage.memory import MemoryStorage

SERVER_OWNED = (
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
    "managedFields",
    "resourceVersion",
)
CONFIG_MAPS = ServedResource(
    group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True
)


def _unused(*args: Any) -> Any:
    raise AssertionError("not called by prepare_new")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from([*SERVER_OWNED, "name", "labels", "annotations", "finalizers", "x"]),
        unique=True,
    ),
    st.sampled_from(["", "0", "abc", None, 5]),
)
def test_server_owned_fields_are_dropped_and_the_rest_kept_in_order(
    keys: list[str], revision: Any
) -> None:
    """Whichever server-owned fields a create sends (a non-numeric resourceVersion too, which
    is cleared), none is kept; every other field keeps its value and its place."""
    metadata: dict[str, Any] = {key: f"value-{key}" for key in keys}
    if "resourceVersion" in metadata:
        metadata["resourceVersion"] = revision
    sent = dict(metadata)
    operations = ObjectOperations(MemoryStorage(), _unused, _unused)

    prepared = operations.prepare_new(CONFIG_MAPS, "default", {"metadata": metadata})

    kept = [key for key in sent if key not in SERVER_OWNED]
    assert [key for key in prepared if key in sent] == kept
    assert all(prepared[key] == sent[key] for key in kept)
    assert not set(SERVER_OWNED) & set(prepared)
    assert prepared["namespace"] == "default" and prepared["uid"] and prepared["creationTimestamp"]


def test_uids_are_distinct_version_4_uuids_across_batches() -> None:
    """Several batches' worth: each a version 4, RFC 4122 UUID written as Python writes it."""
    uids = [new_uid() for _ in range(1000)]
    assert len(set(uids)) == len(uids)
    for uid in uids:
        parsed = uuid.UUID(uid)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == uid
