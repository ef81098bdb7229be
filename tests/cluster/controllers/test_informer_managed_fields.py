"""Informers keep no ``managedFields``: the cut gives the stored object less that field, and
writes made from cached objects keep the stored managers (as a write without them does)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.controllers.framework.informers import (
    _without_managed_fields,
    decode_object,
)
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import raw_api

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-.:/", min_size=1, max_size=12)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=8))
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_names, inner, max_size=4)
    ),
    max_leaves=20,
)
_managed_fields = st.lists(
    st.fixed_dictionaries(
        {
            "manager": _names,
            "operation": st.sampled_from(["Update", "Apply"]),
            "fieldsType": st.just("FieldsV1"),
            "fieldsV1": st.dictionaries(_names, st.just({}), max_size=4),
        }
    ),
    max_size=3,
)
_metadata = st.builds(
    lambda base, managed, where: _with_managed_fields(base, managed, where),
    st.dictionaries(
        st.sampled_from(["name", "namespace", "uid", "labels", "annotations", "generation"]),
        _json,
        max_size=5,
    ),
    st.one_of(st.none(), _managed_fields),
    st.integers(0, 6),
)
_objects = st.builds(
    lambda metadata, rest: {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, **rest},
    _metadata,
    st.dictionaries(st.sampled_from(["spec", "status", "data"]), _json, max_size=3),
)


def _with_managed_fields(
    base: dict[str, Any], managed: list[Any] | None, where: int
) -> dict[str, Any]:
    """``base`` with ``managedFields`` (when given) inserted at position ``where``."""
    if managed is None:
        return base
    items = list(base.items())
    items.insert(min(where, len(items)), ("managedFields", managed))
    return dict(items)


def _slow_path(obj: dict[str, Any]) -> dict[str, Any]:
    """What a cache without the cut would hold, less ``managedFields``."""
    whole = copy.deepcopy(obj)
    whole["metadata"] = {k: v for k, v in whole["metadata"].items() if k != "managedFields"}
    return whole


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_objects)
def test_the_cut_is_the_stored_object_less_managed_fields(obj: dict[str, Any]) -> None:
    stored = msgspec.json.encode(obj)
    expected = _slow_path(decode(stored))
    decoded = decode_object(stored)
    assert decoded == expected
    # Key order as stored: a write made from a cached object sends the same order.
    assert list(decoded["metadata"]) == list(expected["metadata"])

    before = copy.deepcopy(obj)
    observed = _without_managed_fields(obj)
    assert observed == expected
    assert list(observed["metadata"]) == list(expected["metadata"])
    assert obj == before  # the writer's object is left as it was


async def test_cached_pods_hold_no_managed_fields_and_the_kubelet_keeps_them_stored() -> None:
    async with LocalCluster() as cluster:
        assert cluster.controllers is not None
        async with raw_api(cluster.url, cluster.token) as api:
            await api.request(
                "POST",
                "/api/v1/namespaces/default/pods",
                {
                    "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
                },
            )
            pods = cluster.controllers.informers.informer("pods")

            async def running() -> Any:
                cached = pods.get("default", "p")
                if cached is None or (cached.get("status") or {}).get("phase") != "Running":
                    return None
                return cached

            cached = await eventually(running)
            stored = (await api.request("GET", "/api/v1/namespaces/default/pods/p")).body
        assert "managedFields" not in cached["metadata"]
        assert cached["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        assert cached == _slow_path(stored)
        # The kubelet wrote the status from its cached pod: every manager is still stored.
        managers = {
            (e["manager"], e.get("subresource")) for e in stored["metadata"]["managedFields"]
        }
        assert ("kubelet", "status") in managers
        assert len(managers) >= 2
