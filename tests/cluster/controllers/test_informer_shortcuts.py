"""The informers' and their handlers' shortcuts give what the general paths give.

- A metadata-only read decodes the metadata straight into a dict: the same dict as decoding
  into a struct of the ObjectMeta fields and converting it (the reference, kept here), for
  stored objects with unknown, null and reordered fields. Its key is :func:`key_of` of that
  dict; it keeps the stored value itself (the storage's own bytes object, no copy).
- The dependency graph skips the owner bookkeeping of objects owned by nothing; the garbage
  collector's handler returns early for objects with no owners and no deletion: over random
  sequences of events both end with the graph and work queue of the general path (a copy of
  it, kept here as the reference).
- The root CA publisher's ConfigMap key mapper equals the general mapper on ConfigMaps.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.api.clock import SYSTEM_CLOCK
from setpoint.cluster.apiserver.registry.object_operations import (
    FINALIZER_FOREGROUND,
    FINALIZER_ORPHAN,
)
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess
from setpoint.cluster.controllers.framework.informer_set import InformerSet
from setpoint.cluster.controllers.framework.informers import (
    ObjectKey,
    _read_metadata,
    _read_whole,
    decode_metadata,
    decode_object,
    key_of,
)
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.garbage_collector.collector import (
    GarbageCollector,
    _deleting,
    _needs_attention,
)
from setpoint.cluster.controllers.garbage_collector.dependency_graph import (
    DependencyGraph,
    Item,
    owner_uids,
)
from setpoint.cluster.controllers.root_ca_publisher.controller import (
    ROOT_CA_CONFIG_MAP,
    _namespace_key,
    _root_ca_config_map_key,
)
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import raw_api

_names = st.sampled_from(["a", "b", "web-1", ROOT_CA_CONFIG_MAP, ""])
_namespaces = st.sampled_from(["default", "kube-system", "ns-1", ""])
_uids = st.sampled_from(["u1", "u2", "u3", "u4"])
_ref = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("ConfigMap"), "name": _names},
    optional={"uid": st.one_of(_uids, st.just("")), "controller": st.booleans()},
)
_metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": _names,
        "namespace": _namespaces,
        "uid": _uids,
        "resourceVersion": st.integers(1, 99).map(str),
        "labels": st.dictionaries(st.sampled_from(["app", "tier"]), st.text(max_size=3)),
        "ownerReferences": st.one_of(st.just([]), st.lists(_ref, max_size=3)),
        "finalizers": st.lists(
            st.sampled_from([FINALIZER_ORPHAN, FINALIZER_FOREGROUND, "example.com/x"]),
            max_size=2,
        ),
        "deletionTimestamp": st.just("2026-11-27T00:00:00Z"),
        "managedFields": st.just([{"manager": "m", "operation": "Update"}]),
    },
)
# Fields stored as null, and fields an informer does not keep; mixed into the metadata.
_odd_fields = st.dictionaries(
    st.sampled_from(["labels", "annotations", "uid", "name", "generation", "finalizers"]),
    st.none(),
    max_size=2,
) | st.dictionaries(
    st.sampled_from(["clusterName", "zz"]),
    st.one_of(st.just("x"), st.just({"k": [1, None]})),
    max_size=2,
)


def _mixed(metadata: dict[str, Any], odd: dict[str, Any], order: list[int]) -> dict[str, Any]:
    items = list({**metadata, **odd}.items())
    return dict(items[i % len(items)] for i in order) if items else {}


_objects = st.builds(
    lambda metadata, data: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, **data},
    st.builds(_mixed, _metadata, _odd_fields, st.permutations(range(12))),
    st.dictionaries(st.just("data"), st.dictionaries(st.just("k"), st.text(max_size=5))),
)


class _ReferenceMeta(msgspec.Struct, rename="camel", omit_defaults=True):
    """The struct metadata-only informers decoded into before (then converted to a dict)."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = None
    finalizers: list[str] | None = None


class _ReferenceView(msgspec.Struct, rename="camel"):
    api_version: str = ""
    kind: str = ""
    metadata: _ReferenceMeta = msgspec.field(default_factory=_ReferenceMeta)


def _reference_metadata(stored: bytes) -> dict[str, Any]:
    view = msgspec.json.decode(stored, type=_ReferenceView)
    return {
        "apiVersion": view.api_version,
        "kind": view.kind,
        "metadata": msgspec.to_builtins(view.metadata),
    }


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_objects)
def test_a_metadata_read_is_the_struct_decoding_and_keys_as_key_of(obj: dict[str, Any]) -> None:
    stored = msgspec.json.encode(obj)
    handed, kept, key = _read_metadata(stored)
    assert handed == _reference_metadata(stored)
    assert handed == decode_metadata(stored)
    assert key == key_of(handed)
    assert kept is stored and decode_metadata(kept) == handed
    whole, kept, whole_key = _read_whole(stored)
    assert whole == kept == decode_object(stored)
    assert whole_key == key_of(whole) == key


async def test_a_metadata_only_informer_shares_the_storage_s_bytes() -> None:
    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        storage = cluster.server.storage
        informers = InformerSet(storage, cluster.server.registry)
        informer = informers.informer("configmaps", metadata_only=True)
        informer.start()
        async with raw_api(cluster.url, cluster.token) as api:
            path = "/api/v1/namespaces/default/configmaps"
            await api.request("POST", path, {"metadata": {"name": "a"}, "data": {"k": "v"}})
            await api.request(
                "PATCH",
                f"{path}/a",
                {"data": {"k": "w"}},
                content_type="application/merge-patch+json",
            )
            record = storage.get(informer.resource.storage_key("default", "a"))
            assert record is not None

            async def caught_up() -> bool:
                cached = informer.get("default", "a")
                rv = (cached or {}).get("metadata", {}).get("resourceVersion")
                return bool(rv == str(record.revision))

            await eventually(caught_up, "the informer to see the patch")
            assert informer._objects[ObjectKey("default", "a")] is record.value
            cached = informer.get("default", "a")
            assert cached is not None and set(cached) == {"apiVersion", "kind", "metadata"}
        await informer.stop()


class _ReferenceGraph(DependencyGraph):
    """The dependency graph's ``observe`` as it was before the shortcut."""

    def observe(self, item: Item, obj: dict[str, Any]) -> None:
        uid = (obj.get("metadata") or {}).get("uid")
        if uid:
            self._by_uid[str(uid)] = item
        new_owners = owner_uids(obj)
        old_owners = self._owners.get(item, [])
        if new_owners == old_owners:
            return
        for owner in old_owners:
            bucket = self._dependents.get(owner)
            if bucket is not None:
                bucket.discard(item)
                if not bucket:
                    del self._dependents[owner]
        for owner in new_owners:
            self._dependents.setdefault(owner, set()).add(item)
        if new_owners:
            self._owners[item] = new_owners
        else:
            self._owners.pop(item, None)


def _reference_handle(collector: GarbageCollector, root: str, new: Any, old: Any) -> None:
    """The garbage collector's informer handler as it was before the early return."""
    obj = new if new is not None else old
    meta = obj.get("metadata") or {}
    item = Item(root, meta.get("namespace") or "", meta.get("name") or "")
    if new is None:
        collector.graph.forget(item, obj)
        for dependent in collector.graph.dependents(str(meta.get("uid", ""))):
            collector.items.add(dependent)
        for owner in collector.graph.items_of(owner_uids(obj)):
            collector.items.add(owner)
        return
    collector.graph.observe(item, new)
    if _needs_attention(new, old):
        collector.items.add(item)
        for owner in collector.graph.items_of(owner_uids(new)):
            if old is not None and _deleting(new):
                collector.items.add(owner)
    if old is not None and _deleting(new) and not _deleting(old):
        for owner in collector.graph.items_of(owner_uids(new)):
            collector.items.add(owner)


def _collector() -> GarbageCollector:
    access = cast(ClusterAccess, SimpleNamespace(clock=SYSTEM_CLOCK))
    return GarbageCollector(access, ControllerOptions())


async def _state(collector: GarbageCollector) -> tuple[Any, ...]:
    """The graph, and the items queued since the last call (taken off the queue)."""
    graph = collector.graph
    queued = []
    while len(collector.items):
        item = await collector.items.get()
        collector.items.done(item)
        queued.append(item)
    return graph._by_uid, graph._owners, graph._dependents, queued


# Events on a few objects: (name, state or None for a deletion); each event's "old" is the
# object's previous state, as an informer hands it.
_events = st.lists(
    st.tuples(st.sampled_from(["x", "y", "z"]), st.one_of(st.none(), _metadata)), max_size=12
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_events)
def test_the_collector_s_handler_and_graph_match_the_general_path(events: list[Any]) -> None:
    async def scenario() -> None:
        fast, slow = _collector(), _collector()
        slow.graph = _ReferenceGraph()
        handle = fast._handler("/core/configmaps/")
        states: dict[str, dict[str, Any]] = {}
        for name, metadata in events:
            old = states.get(name)
            if metadata is None:
                if old is None:
                    continue
                new = None
                del states[name]
            else:
                new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
                metadata.update(name=name, namespace="default")
                states[name] = new
            handle(new, old)
            _reference_handle(slow, "/core/configmaps/", new, old)
            assert await _state(fast) == await _state(slow)

    asyncio.run(scenario())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_metadata, _namespaces.filter(bool))
def test_the_root_ca_config_map_mapper_is_the_general_one_on_config_maps(
    metadata: dict[str, Any], namespace: str
) -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {**metadata, "namespace": namespace},
    }
    assert tuple(_root_ca_config_map_key(obj)) == tuple(_namespace_key(obj))
