"""Informers and the cache against the real local cluster, over HTTP with the real client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.api.gvk import ResourceInfo
from setpoint.cache import (
    Backoff,
    Cache,
    CacheOptions,
    ObjectOptions,
    ReflectorOptions,
    SharedInformer,
)
from setpoint.client.client import Client
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage.memory import MemoryStorage
from setpoint.cluster.kubeconfig_file import write_kubeconfig
from setpoint.testing.background_cluster import BackgroundCluster

from .recording import RecordingHandler, until

LABELS = {"suite": "cache"}
SELECTOR = "suite=cache"
FAST = ReflectorOptions(backoff=lambda: Backoff(initial=0.05, maximum=0.2))


def configmap(name: str, namespace: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(LABELS)},
        "data": data or {"k": "v"},
    }


@pytest.fixture
async def client(local_cluster: BackgroundCluster) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(str(local_cluster.kubeconfig_path))
    async with client:
        yield client


@pytest.fixture
async def configmaps(client: Client) -> ResourceInfo:
    return await client.mapper.resource_for("v1", "ConfigMap")


@pytest.fixture
async def informers() -> AsyncIterator[list[SharedInformer]]:
    started: list[SharedInformer] = []
    yield started
    for informer in started:
        await informer.stop()


async def synced_informer(
    client: Client,
    configmaps: ResourceInfo,
    namespace: str,
    informers: list[SharedInformer],
    options: ReflectorOptions = FAST,
) -> tuple[SharedInformer, RecordingHandler]:
    """A started, synced informer of the suite's ConfigMaps in ``namespace``, recording events."""
    informer = SharedInformer(
        client, configmaps, namespaces=[namespace], label_selector=SELECTOR, options=options
    )
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    informer.start()
    informers.append(informer)
    await informer.wait_for_sync(timeout=30)
    return informer, handler


async def test_initial_sync_then_add_update_delete_events(
    client: Client,
    configmaps: ResourceInfo,
    namespace: str,
    informers: list[SharedInformer],
) -> None:
    for name in ("a", "b", "c"):
        await client.create(configmap(name, namespace))
    informer, handler = await synced_informer(client, configmaps, namespace, informers)
    assert sorted((e[0], e[1], e[3]) for e in handler.events) == [
        ("add", "a", True),
        ("add", "b", True),
        ("add", "c", True),
    ]
    assert "managedFields" not in informer.store.get_by_name("a", namespace).metadata  # type: ignore[union-attr]

    handler.events.clear()
    await client.create(configmap("d", namespace))
    await client.patch("v1", "ConfigMap", "a", {"data": {"k": "changed"}}, namespace=namespace)
    await client.delete("v1", "ConfigMap", "b", namespace=namespace)
    await until(lambda: len(handler.events) == 3, "three watch events")
    assert [(e[0], e[1]) for e in handler.events] == [
        ("add", "d"),
        ("update", "a"),
        ("delete", "b"),
    ]
    assert handler.events[0][3] is False
    stored_a = informer.store.get_by_name("a", namespace)
    assert stored_a is not None and stored_a.get("data") == {"k": "changed"}
    assert sorted(o.name for o in informer.store.list()) == ["a", "c", "d"]
    assert informer.reflectors[0].lists == 1


async def test_watch_cut_by_the_server_resumes_without_loss_or_duplicates(
    client: Client,
    configmaps: ResourceInfo,
    namespace: str,
    informers: list[SharedInformer],
) -> None:
    # The server ends each watch after 1 s (timeoutSeconds=1): writes span several streams.
    options = ReflectorOptions(watch_timeout_range=(1, 1), backoff=FAST.backoff)
    informer, handler = await synced_informer(client, configmaps, namespace, informers, options)
    reflector = informer.reflectors[0]
    count = 8
    for i in range(count):
        await client.create(configmap(f"cm-{i}", namespace))
        await asyncio.sleep(0.35)
    await until(lambda: len(handler.events) == count, f"{count} adds")
    await until(lambda: reflector.watches >= 3, "the server to cut the watch twice")
    await asyncio.sleep(1.2)  # one more cut: nothing must be replayed
    assert handler.events == [("add", f"cm-{i}", handler.events[i][2], False) for i in range(count)]
    assert reflector.lists == 1  # resumed from the last resourceVersion: no relist


async def test_relist_after_410_delivers_what_the_gap_hid(tmp_path: Path) -> None:
    # A server of our own whose history keeps only a few events, so an old version expires.
    server = APIServer(MemoryStorage(history_max_events=5))
    await server.start()
    try:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url, server.token)
        async with await Client.from_kubeconfig(str(kubeconfig)) as client:
            await gap_scenario(client)
    finally:
        await server.stop()


async def gap_scenario(client: Client) -> None:
    ns = "gap"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name in ("keep", "change", "vanish"):
        await client.create(configmap(name, ns))
    configmaps = await client.mapper.resource_for("v1", "ConfigMap")
    informer = SharedInformer(client, configmaps, label_selector=SELECTOR, options=FAST)
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    informer.start()
    try:
        await informer.wait_for_sync(timeout=30)
        await informer.stop()  # the gap: changes happen while nobody watches
        handler.events.clear()
        await client.patch("v1", "ConfigMap", "change", {"data": {"k": "2"}}, namespace=ns)
        await client.delete("v1", "ConfigMap", "vanish", namespace=ns)
        await client.create(configmap("new", ns))
        for i in range(10):  # push the informer's version out of the server's history
            unselected = configmap(f"other-{i}", ns)
            del unselected["metadata"]["labels"]
            await client.create(unselected)
        informer.start()
        await until(lambda: informer.reflectors[0].lists == 2, "the relist after 410")
        await until(lambda: len(handler.events) >= 3, "the relist's deltas")
        assert sorted((e[0], e[1]) for e in handler.events) == [
            ("add", "new"),
            ("delete", "vanish"),
            ("update", "change"),
        ]
        assert [e[3] for e in handler.events if e[0] == "add"] == [False]  # not an initial list
        assert sorted(o.name for o in informer.store.list()) == ["change", "keep", "new"]
    finally:
        await informer.stop()


async def test_cache_reads_share_one_informer(
    client: Client, namespace: str, local_cluster: BackgroundCluster
) -> None:
    await client.create(configmap("x", namespace, {"big": "payload"}))
    options = CacheOptions(
        namespaces={namespace},
        label_selector=SELECTOR,
        by_object={("v1", "Secret"): ObjectOptions(metadata_only=True)},
        reflector=FAST,
    )
    async with Cache(client, options) as cache:
        await cache.wait_for_sync(timeout=30)
        got = await cache.get("v1", "ConfigMap", "x", namespace)
        assert got is not None and got["data"] == {"big": "payload"}
        listed = await cache.list("v1", "ConfigMap", namespace, label_selector="suite=cache")
        assert [o["metadata"]["name"] for o in listed] == ["x"]
        meta = await cache.get_cached("v1", "ConfigMap", "x", namespace, metadata_only=True)
        assert meta is not None and meta.is_metadata_only and meta.get("data") is None
        await client.create(configmap("y", namespace))
        informer = await cache.informer_for("v1", "ConfigMap")
        await until(lambda: informer.store.get_by_name("y", namespace) is not None, "y cached")
        assert len(cache.informers) == 2


async def test_namespace_restricted_cache_sees_only_its_namespaces(
    client: Client, namespace: str, local_cluster: BackgroundCluster
) -> None:
    second = f"{namespace}-b"
    outside = f"{namespace}-c"
    for ns in (second, outside):
        local_cluster.create_namespace(ns)
    try:
        for ns in (namespace, second, outside):
            await client.create(configmap(f"in-{ns}", ns))
        options = CacheOptions(namespaces={namespace, second}, label_selector=SELECTOR)
        async with Cache(client, options) as cache:
            listed = await cache.list_cached("v1", "ConfigMap")
            assert sorted(o.name for o in listed) == sorted([f"in-{namespace}", f"in-{second}"])
            informer = await cache.informer_for("v1", "ConfigMap")
            assert len(informer.reflectors) == 2
            await client.create(configmap("late", second))
            await client.create(configmap("late", outside))
            await until(lambda: informer.store.get_by_name("late", second) is not None, "late")
            assert informer.store.get_by_name("late", outside) is None
    finally:
        for ns in (second, outside):
            local_cluster.delete_namespace(ns)


async def test_objects_leaving_and_entering_the_selector(
    client: Client,
    configmaps: ResourceInfo,
    namespace: str,
    informers: list[SharedInformer],
) -> None:
    await client.create(configmap("moving", namespace))
    informer, handler = await synced_informer(client, configmaps, namespace, informers)
    leave = {"metadata": {"labels": {"suite": None}}}
    await client.patch("v1", "ConfigMap", "moving", leave, namespace=namespace)
    await until(lambda: len(handler.events) == 2, "the object leaving the selector")
    assert handler.events[1][:2] == ("delete", "moving")
    assert informer.store.get_by_name("moving", namespace) is None
    enter = {"metadata": {"labels": dict(LABELS)}}
    await client.patch("v1", "ConfigMap", "moving", enter, namespace=namespace)
    await until(lambda: len(handler.events) == 3, "the object entering the selector")
    assert handler.events[2][:2] == ("add", "moving")
    assert informer.store.get_by_name("moving", namespace) is not None
