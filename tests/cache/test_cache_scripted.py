"""Cache facade: informer sharing, options, reads (scripted list/watch bytes, no server)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.api.gvk import GroupVersionKind, ResourceInfo
from setpoint.cache import (
    OWNER_UID_INDEX,
    Backoff,
    Cache,
    CacheNotStarted,
    CacheOptions,
    NamespaceNotCached,
    ObjectOptions,
    ReflectorOptions,
)
from setpoint.client.errors import NoKindMatch

from .objects import configmap, encode, list_body, owner
from .recording import RecordingHandler
from .scripted_client import CONFIGMAPS, ScriptedClient

NAMESPACES = ResourceInfo(
    group="", version="v1", kind="Namespace", resource="namespaces", namespaced=False,
    list_kind="NamespaceList",
)  # fmt: skip
FAST = ReflectorOptions(backoff=lambda: Backoff(initial=0.001, maximum=0.005))


class Mapper:
    def __init__(self, *resources: ResourceInfo) -> None:
        self.by_kind = {(r.api_version, r.kind): r for r in resources}
        self.calls = 0

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        self.calls += 1
        try:
            return self.by_kind[(api_version, kind)]
        except KeyError:
            raise NoKindMatch(api_version, kind) from None


class MappedClient(ScriptedClient):
    def __init__(self) -> None:
        super().__init__()
        self.mapper = Mapper(CONFIGMAPS, NAMESPACES)
        self.bodies: dict[tuple[str, str | None], bytes] = {}

    async def list_raw(self, resource: ResourceInfo, namespace: str | None = None,
                       **kwargs: Any) -> bytes:  # fmt: skip
        self.list_calls.append({"resource": resource.resource, "namespace": namespace, **kwargs})
        return self.bodies[(resource.resource, namespace)]


@pytest.fixture
async def client() -> MappedClient:
    client = MappedClient()
    client.bodies[("configmaps", None)] = list_body(
        [
            configmap("a", "ns1", labels={"app": "web"}, owners=[owner("p1")]),
            configmap("b", "ns1", labels={"app": "db"}),
            configmap("c", "ns2", labels={"app": "web"}),
        ],
        rv="10",
    )
    client.bodies[("configmaps", "ns1")] = list_body(
        [configmap("a", "ns1", labels={"app": "web"}), configmap("b", "ns1")], rv="10"
    )
    client.bodies[("namespaces", None)] = list_body(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "uid": "n1"}}],
        rv="10",
    )
    return client


@pytest.fixture
async def cache(client: MappedClient) -> AsyncIterator[Cache]:
    cache = Cache(client, CacheOptions(reflector=FAST))
    yield cache
    await cache.stop()


async def test_reads_before_start_fail_clearly(cache: Cache) -> None:
    with pytest.raises(CacheNotStarted, match=r"configmaps/v1 .*not started"):
        await cache.get("v1", "ConfigMap", "a", "ns1")


async def test_one_informer_per_kind_however_many_users(cache: Cache, client: MappedClient) -> None:
    first = await cache.informer_for("v1", "ConfigMap")
    second = await cache.informer_for("v1", "ConfigMap")
    metadata = await cache.informer_for("v1", "ConfigMap", metadata_only=True)
    assert first is second
    assert metadata is not first and metadata.metadata_only
    await cache.start()
    await cache.wait_for_sync(timeout=10)
    assert cache.has_synced
    assert len([c for c in client.list_calls if c["resource"] == "configmaps"]) == 2
    for informer in (first, second):
        informer.add_event_handler(RecordingHandler())
    assert len(cache.informers) == 2


async def test_get_and_list_return_fresh_dicts(cache: Cache) -> None:
    await cache.start()
    obj = await cache.get("v1", "ConfigMap", "a", "ns1")
    assert obj is not None and obj["metadata"]["labels"] == {"app": "web"}
    obj["data"]["k"] = "mutated"
    obj["metadata"]["labels"]["app"] = "mutated"
    again = await cache.get("v1", "ConfigMap", "a", "ns1")
    assert again is not None and again["data"] == {"k": "v"}
    assert again["metadata"]["labels"] == {"app": "web"}
    assert await cache.get("v1", "ConfigMap", "missing", "ns1") is None
    listed = await cache.list("v1", "ConfigMap")
    assert sorted(o["metadata"]["name"] for o in listed) == ["a", "b", "c"]
    web = await cache.list("v1", "ConfigMap", label_selector="app=web")
    assert sorted(o["metadata"]["name"] for o in web) == ["a", "c"]
    in_ns = await cache.list("v1", "ConfigMap", "ns2")
    assert [o["metadata"]["name"] for o in in_ns] == ["c"]


async def test_cached_reads_are_zero_copy_and_immutable(cache: Cache) -> None:
    await cache.start()
    obj = await cache.get_cached("v1", "ConfigMap", "a", "ns1")
    same = await cache.get_cached("v1", "ConfigMap", "a", "ns1")
    assert obj is same
    assert obj is not None
    with pytest.raises(TypeError):
        obj.labels["x"] = "y"  # type: ignore[index]


async def test_index_reads(cache: Cache) -> None:
    await cache.start()
    children = await cache.list("v1", "ConfigMap", index=(OWNER_UID_INDEX, "p1"))
    assert [o["metadata"]["name"] for o in children] == ["a"]
    await cache.add_index("v1", "ConfigMap", "app", lambda o: [o.labels.get("app", "")])
    await cache.add_index("v1", "ConfigMap", "app", (await cache.informer_for("v1", "ConfigMap"))
                          .store.index_function("app"))  # type: ignore[arg-type]  # fmt: skip
    web = await cache.list_cached("v1", "ConfigMap", index=("app", "web"))
    assert sorted(o.name for o in web) == ["a", "c"]
    web_ns2 = await cache.list_cached("v1", "ConfigMap", "ns2", index=("app", "web"))
    assert [o.name for o in web_ns2] == ["c"]
    with pytest.raises(ValueError, match="already exists"):
        await cache.add_index("v1", "ConfigMap", "app", lambda o: [])


async def test_namespaced_get_needs_a_namespace(cache: Cache) -> None:
    await cache.start()
    with pytest.raises(ValueError, match="namespace is required to get ConfigMap 'a'"):
        await cache.get("v1", "ConfigMap", "a")


async def test_cluster_scoped_reads_ignore_the_namespace(cache: Cache) -> None:
    await cache.start()
    ns = await cache.get("v1", "Namespace", "ns1", namespace="whatever")
    assert ns is not None and ns["metadata"]["uid"] == "n1"
    assert len(await cache.list("v1", "Namespace", "whatever")) == 1


async def test_unknown_kind_is_the_mappers_error(cache: Cache) -> None:
    await cache.start()
    with pytest.raises(NoKindMatch, match='no matches for kind "Nope"'):
        await cache.get("v1", "Nope", "x", "ns1")


async def test_namespace_restricted_cache(client: MappedClient) -> None:
    cache = Cache(client, CacheOptions(namespaces={"ns1"}, reflector=FAST))
    async with cache:
        listed = await cache.list("v1", "ConfigMap")
        assert sorted(o["metadata"]["name"] for o in listed) == ["a", "b"]
        assert {c["namespace"] for c in client.list_calls if c["resource"] == "configmaps"} == {
            "ns1"
        }
        with pytest.raises(NamespaceNotCached, match="namespace 'ns2' is not cached"):
            await cache.get("v1", "ConfigMap", "c", "ns2")
        # Cluster-scoped kinds are watched cluster-wide whatever the namespaces.
        assert await cache.get("v1", "Namespace", "ns1") is not None


async def test_options_per_kind(client: MappedClient) -> None:
    options = CacheOptions(
        label_selector="tier=x",
        by_object={
            ("v1", "ConfigMap"): ObjectOptions(
                label_selector="app = web", metadata_only=True, strip_managed_fields=False
            )
        },
        reflector=FAST,
    )
    cache = Cache(client, options)
    async with cache:
        cm = await cache.get_cached("v1", "ConfigMap", "a", "ns1")
        assert cm is not None and cm.is_metadata_only
        assert "managedFields" in cm.metadata
        await cache.list("v1", "Namespace")
    selectors = {c["resource"]: c["label_selector"] for c in client.list_calls}
    assert selectors == {"configmaps": "app=web", "namespaces": "tier=x"}


def test_invalid_options_are_rejected_naming_the_field() -> None:
    with pytest.raises(ValueError, match="invalid label_selector 'app in'"):
        CacheOptions(label_selector="app in")
    with pytest.raises(ValueError, match="invalid field_selector"):
        CacheOptions(field_selector="metadata.name")
    with pytest.raises(TypeError, match="namespaces must be a collection"):
        CacheOptions(namespaces="ns1")
    with pytest.raises(ValueError, match="invalid namespace ''"):
        CacheOptions(namespaces={""})
    with pytest.raises(TypeError, match="by_object key"):
        CacheOptions(by_object={"ConfigMap": ObjectOptions()})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="sync_timeout must be > 0"):
        CacheOptions(sync_timeout=0)
    with pytest.raises(ValueError, match="idle_timeout"):
        ReflectorOptions(idle_timeout=0)
    gvk = GroupVersionKind("", "v1", "ConfigMap")
    resolved = CacheOptions(by_object={gvk: ObjectOptions(namespaces=["a"])}).resolve(gvk)
    assert resolved.namespaces == frozenset({"a"})
    assert dataclasses.is_dataclass(resolved)


async def test_a_recorded_write_keeps_the_body_the_server_sent(cache: Cache) -> None:
    await cache.start()
    await cache.get("v1", "ConfigMap", "a", "ns1")  # the informer whose reads the writes join
    answer = configmap("a", "ns1", rv="50", data={"k": "decoded"})
    sent = encode(configmap("a", "ns1", rv="50", data={"k": "as sent"}))
    assert cache.record_write(answer, sent) == (answer["metadata"]["uid"], "50")
    answer["data"]["k"] = "changed by the caller"
    got = await cache.get("v1", "ConfigMap", "a", "ns1")
    assert got is not None and got["data"] == {"k": "as sent"}
    # Without the body, the answer is encoded as it was at the call.
    other = configmap("b", "ns1", rv="51", data={"k": "decoded"})
    cache.record_write(other)
    other["data"]["k"] = "changed by the caller"
    got = await cache.get("v1", "ConfigMap", "b", "ns1")
    assert got is not None and got["data"] == {"k": "decoded"}
    # Identities come back for kinds no informer watches too; None for what is no object.
    assert cache.record_write({"apiVersion": "v1", "kind": "Secret", "metadata": {"uid": "u"}}) == (
        "u",
        "",
    )
    assert cache.record_write({"kind": "Status", "metadata": {}}) == ("", "")
    assert cache.record_write({"kind": "Status", "metadata": None}) is None
