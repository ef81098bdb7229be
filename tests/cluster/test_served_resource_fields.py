"""A served resource's derived attributes, worked out once from its fields."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_PARTS = st.sampled_from(["", "apps", "x.example.com", "v1", "core", "configmaps"])


@settings(max_examples=100, deadline=None)
@given(
    group=_PARTS,
    version=st.sampled_from(["v1", "v2beta1"]),
    plural=st.sampled_from(["configmaps", "widgets"]),
    subresources=st.lists(st.sampled_from(["status", "scale", "log"]), unique=True),
    storage_group=st.none() | _PARTS,
    storage_resource=st.none() | _PARTS,
    changed_subresources=st.lists(st.sampled_from(["status", "scale"]), unique=True),
)
def test_derived_attributes_are_worked_out_from_the_fields(
    group: str,
    version: str,
    plural: str,
    subresources: list[str],
    storage_group: str | None,
    storage_resource: str | None,
    changed_subresources: list[str],
) -> None:
    """``api_version``, ``storage_root`` and ``has_status``, set once when a resource is made
    (and again when ``dataclasses.replace`` makes another), are what they say."""
    resource = ServedResource(
        group=group,
        version=version,
        plural=plural,
        kind="Widget",
        namespaced=True,
        subresources=tuple(subresources),
        storage_group=storage_group,
        storage_resource=storage_resource,
    )
    for served in (
        resource,
        dataclasses.replace(resource, subresources=tuple(changed_subresources)),
    ):
        assert served.api_version == (f"{group}/{version}" if group else version)
        stored_group = storage_group if storage_group is not None else group
        assert served.storage_root == f"/{stored_group or 'core'}/{storage_resource or plural}/"
        assert served.has_status == ("status" in served.subresources)
        assert served == dataclasses.replace(served)
        assert "api_version" not in repr(served)
