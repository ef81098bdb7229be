"""The user-facing API against the local cluster: decorators, Context, class reconcilers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any, Protocol

import aiohttp
import pytest

from setpoint.api.owners import set_controller_reference
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.controller.builder import Builder
from setpoint.controller.handlers import EnqueueRequestForObject
from setpoint.controller.reconcile import Request, Result
from setpoint.controller.source import ChannelSource
from setpoint.manager.context import Context
from setpoint.manager.manager import Manager, ManagerError, RunnableFailed
from setpoint.manager.operator import Operator
from tests.manager.waiting import eventually


class Cluster(Protocol):
    kubeconfig_path: str


@pytest.fixture
async def client(local_cluster: Cluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        yield client


def config_map(namespace: str, name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "data": {"size": "2"},
    }


async def test_context_reconciler_creates_children_and_sees_them_owned(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    """A ConfigMap "parent" gets a Secret child; deleting the child by hand recreates it."""
    op = Operator("parents", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])
    owned_counts: list[int] = []

    @op.reconciler(for_=("v1", "ConfigMap"), owns=[("v1", "Secret")], max_concurrent=2)
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        parent = await ctx.get()
        if parent is None:
            return None
        children = await ctx.owned("v1", "Secret")
        owned_counts.append(len(children))
        if not children:
            child = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{request.name}-child", "namespace": request.namespace},
                "stringData": {"size": parent["data"]["size"]},
            }
            set_controller_reference(parent, child)
            await ctx.client.create(child)
            # Read-your-own-writes: the child is owned at once, before its watch event.
            owned_counts.append(len(await ctx.owned("v1", "Secret")))
            ctx.recorder.normal(parent, "Created", f"created secret {request.name}-child")
        return None

    async with op:
        await client.create(config_map(namespace, "p1"))
        await eventually(lambda: 1 in owned_counts, 15, "the child to be seen as owned")
        secret = await client.get("v1", "Secret", "p1-child", namespace=namespace)
        (reference,) = secret["metadata"]["ownerReferences"]
        assert (reference["kind"], reference["name"], reference["controller"]) == (
            "ConfigMap",
            "p1",
            True,
        )
        await client.delete("v1", "Secret", "p1-child", namespace=namespace)

        async def recreated() -> bool:
            try:
                again = await client.get("v1", "Secret", "p1-child", namespace=namespace)
            except Exception:
                return False
            return bool(again["metadata"]["uid"] != secret["metadata"]["uid"])

        for _ in range(200):
            if await recreated():
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the deleted child was not recreated")
        await op.get_event_recorder("parents/configmap").flush()
    events = await client.list("events.k8s.io/v1", "Event", namespace=namespace)
    assert any(event.get("reason") == "Created" for event in events)


async def test_request_only_sync_and_class_reconcilers(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    op = Operator("forms", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])
    calls: dict[str, set[str]] = {"plain": set(), "sync": set(), "class": set(), "method": set()}
    threads: set[str] = set()

    @op.reconciler(for_=("v1", "ConfigMap"), name="plain")
    async def plain(request: Request) -> None:
        calls["plain"].add(request.name)

    @op.reconciler(for_=("v1", "ConfigMap"), name="sync")
    def blocking(ctx: Context, request: Request) -> None:
        threads.add(threading.current_thread().name)
        obj = ctx.run(ctx.get())  # an async call from the worker thread
        assert obj is not None
        calls["sync"].add(obj["metadata"]["name"])

    @op.reconciler(for_=("v1", "ConfigMap"), name="class")
    class Decorated:
        async def reconcile(self, ctx: Context, request: Request) -> Result:
            calls["class"].add(request.name)
            return Result()

    class WithState:
        def __init__(self, label: str) -> None:
            self.label = label

        async def reconcile(self, request: Request) -> None:
            calls[self.label].add(request.name)

    op.add_reconciler(WithState("method"), for_=("v1", "ConfigMap"), name="method")

    async with op:
        await client.create(config_map(namespace, "c1"))
        await eventually(lambda: all("c1" in names for names in calls.values()), 15)
    assert threading.main_thread().name not in threads


async def test_builder_with_a_manager_and_probes_reflect_cache_sync(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    manager_client = await Client.from_kubeconfig(local_cluster.kubeconfig_path)
    manager = Manager(
        manager_client,
        namespaces=[namespace],
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
    )
    seen: list[str] = []

    async def reconcile(request: Request) -> None:
        seen.append(request.name)

    Builder(manager).for_("v1", "ConfigMap").named("builder-test").complete(reconcile)
    try:
        async with manager:
            await client.create(config_map(namespace, "b1"))
            await eventually(lambda: "b1" in seen, 15)
            assert manager.probe_endpoint is not None and manager.metrics_endpoint is not None
            async with aiohttp.ClientSession() as session:
                async with session.get(manager.probe_endpoint.url + "/readyz?verbose") as ready:
                    assert ready.status == 200
                    assert "[+]cache-sync ok" in await ready.text()
                async with session.get(manager.metrics_endpoint.url + "/metrics") as metrics:
                    body = await metrics.text()
            assert 'controller_runtime_reconcile_total{controller="builder-test"' in body
            assert 'workqueue_adds_total{controller="builder-test"' in body
            assert "rest_client_requests_total" in body
    finally:
        await manager_client.close()


def test_registration_errors_are_named() -> None:
    op = Operator("errors")

    @op.reconciler(for_=("v1", "ConfigMap"))
    async def first(request: Request) -> None: ...

    with pytest.raises(ManagerError, match="already registered"):
        op.add_reconciler(first, for_=("v1", "ConfigMap"))
    with pytest.raises(TypeError, match=r"for_: expected \(api_version, kind\)"):
        op.add_reconciler(first, for_="v1/ConfigMap", name="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes 3 positional arguments"):

        async def three(a: Any, b: Any, c: Any) -> None: ...

        op.add_reconciler(three, for_=("v1", "Secret"))
    with pytest.raises(TypeError, match="without arguments"):

        @op.reconciler(for_=("v1", "Pod"))
        class NeedsArguments:
            def __init__(self, client: Client) -> None: ...

            async def reconcile(self, request: Request) -> None: ...

    with pytest.raises(ManagerError, match="not a valid name"):
        Operator("Not A Name")


async def test_apply_owned_makes_a_controlled_child_with_the_operator_as_manager(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    op = Operator("appliers", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])
    applied: list[dict[str, Any]] = []
    ns = await client.get("v1", "Namespace", namespace)
    # Another, existing owner: the garbage collector drops references to missing ones.
    other_owner = {
        "apiVersion": "v1", "kind": "Namespace", "name": namespace, "uid": ns["metadata"]["uid"]
    }  # fmt: skip
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "a1-child", "labels": {"app": "a"}, "ownerReferences": [other_owner]},
        "stringData": {"key": "value"},
    }
    as_given = json.loads(json.dumps(desired))

    @op.reconciler(for_=("v1", "ConfigMap"), owns=[("v1", "Secret")])
    async def reconcile(ctx: Context, request: Request) -> None:
        if request.name != "a1":
            return
        applied.append(await ctx.apply_owned(desired))

    async with op:
        await client.create(config_map(namespace, "a1"))
        await eventually(lambda: bool(applied), 15, "the child to be applied")
    child = await client.get("v1", "Secret", "a1-child", namespace=namespace)
    other, reference = child["metadata"]["ownerReferences"]
    assert (reference["name"], reference["controller"]) == ("a1", True)
    assert other["uid"] == ns["metadata"]["uid"]
    assert child["data"] == {"key": "dmFsdWU="}
    # The caller's object is not changed (no namespace, no owner reference added to it).
    assert desired == as_given
    assert "appliers" in {entry["manager"] for entry in child["metadata"]["managedFields"]}


async def test_watches_map_other_kinds_to_requests(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    op = Operator("watchers", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])
    reconciled: list[str] = []

    def secret_to_config_map(secret: Any) -> list[Request]:
        return [Request(secret.namespace, secret.name.removesuffix("-settings"))]

    @op.reconciler(for_=("v1", "ConfigMap"), watches=[(("v1", "Secret"), secret_to_config_map)])
    async def reconcile(request: Request) -> None:
        reconciled.append(request.name)

    async with op:
        await client.create(config_map(namespace, "w1"))
        await eventually(lambda: reconciled.count("w1") == 1, 15, "the first reconcile")
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "w1-settings", "namespace": namespace},
        }
        await client.create(secret)
        await eventually(lambda: reconciled.count("w1") == 2, 15, "the secret's reconcile")


def test_model_classes_name_their_kind() -> None:
    from pydantic import BaseModel, Field

    class Widget(BaseModel):
        api_version: str = Field(default="example.com/v1", alias="apiVersion")
        kind: str = "Widget"

    class Untyped(BaseModel):
        spec: dict[str, Any] = {}

    op = Operator("models")
    op.add_reconciler(lambda request: None, for_=Widget, owns=[("v1", "ConfigMap")])
    with pytest.raises(TypeError, match="for_: model Untyped must give apiVersion and kind"):
        op.add_reconciler(lambda request: None, for_=Untyped, name="untyped")


async def test_custom_sources_feed_the_reconciler(local_cluster: Cluster, namespace: str) -> None:
    channel: asyncio.Queue[CachedObject] = asyncio.Queue()
    op = Operator("channels", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])
    reconciled: list[Request] = []

    @op.reconciler(
        for_=("v1", "ConfigMap"),
        sources=[ChannelSource(channel, EnqueueRequestForObject())],
    )
    async def reconcile(request: Request) -> None:
        reconciled.append(request)

    async with op:
        external = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "from-outside", "namespace": namespace},
        }
        await channel.put(CachedObject.from_json(json.dumps(external).encode()))
        await eventually(lambda: Request(namespace, "from-outside") in reconciled, 15)


async def test_an_unknown_kind_fails_the_run_with_a_clear_error(
    local_cluster: Cluster, namespace: str
) -> None:
    op = Operator("unknown", kubeconfig=local_cluster.kubeconfig_path, namespaces=[namespace])

    @op.reconciler(for_=("example.com/v1", "Gadget"))
    async def reconcile(request: Request) -> None: ...

    with pytest.raises(RunnableFailed, match="gadget failed") as failure:
        await asyncio.wait_for(op.run(handle_signals=False), 30)
    assert "Gadget" in str(failure.value.error)
