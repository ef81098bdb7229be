"""Controllers against the local cluster over HTTP: convergence, self-healing, conflicts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from setpoint.api.owners import set_controller_reference
from setpoint.client import Client, Conflict, NoKindMatch, NotFound
from setpoint.client.metrics import REGISTRY
from setpoint.controller.builder import Builder
from setpoint.controller.create_or_update import OperationResult, create_or_update
from setpoint.controller.predicates import LabelSelectorPredicate
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request

from .mini_manager import MiniManager
from .waiting import wait_until_async

pytestmark = pytest.mark.slow

SOURCES = 50


def source_config_map(namespace: str, name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"role": "source"}},
        "data": {"value": value},
    }


def copy_controller(manager: MiniManager, name: str, workers: int = 4) -> Any:
    """Each ConfigMap labelled role=source gets a child ConfigMap <name>-copy with its data."""
    client = manager.client

    async def reconcile(request: Request) -> None:
        source = await manager.cache.get("v1", "ConfigMap", request.name, request.namespace)
        if source is None or source["metadata"].get("deletionTimestamp"):
            return
        child: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{request.name}-copy", "namespace": request.namespace},
        }

        def mutate(obj: dict[str, Any]) -> None:
            obj["metadata"].setdefault("labels", {})["role"] = "child"
            obj["data"] = dict(source.get("data") or {})
            set_controller_reference(source, obj)

        await create_or_update(client, child, mutate)

    return (
        Builder(manager)
        .for_(
            "v1",
            "ConfigMap",
            predicates=[LabelSelectorPredicate({"matchLabels": {"role": "source"}})],
        )
        .owns("v1", "ConfigMap")
        .named(name)
        .with_options(
            max_concurrent_reconciles=workers,
            rate_limiter=ItemExponentialFailureRateLimiter(0.005, 0.2),
        )
        .complete(reconcile)
    )


async def children(client: Client, namespace: str) -> dict[str, dict[str, Any]]:
    listed = await client.list("v1", "ConfigMap", namespace=namespace, label_selector="role=child")
    return {item["metadata"]["name"]: item for item in listed}


async def test_controller_converges_many_objects_and_follows_changes(
    client: Client, namespace: str
) -> None:
    manager = MiniManager(client)
    copy_controller(manager, "it-converge")
    for i in range(SOURCES // 2):  # some exist before the controller starts...
        await client.create(source_config_map(namespace, f"src-{i}", str(i)))
    async with manager:
        for i in range(SOURCES // 2, SOURCES):  # ...and some appear while it runs
            await client.create(source_config_map(namespace, f"src-{i}", str(i)))

        async def all_copied() -> bool:
            found = await children(client, namespace)
            return len(found) == SOURCES and all(
                found[f"src-{i}-copy"]["data"] == {"value": str(i)} for i in range(SOURCES)
            )

        await wait_until_async(all_copied, within=60)
        await client.patch(
            "v1", "ConfigMap", "src-7", {"data": {"value": "changed"}}, namespace=namespace
        )

        async def change_followed() -> bool:
            found = await children(client, namespace)
            return bool(found["src-7-copy"]["data"] == {"value": "changed"})

        await wait_until_async(change_followed)
    child = (await children(client, namespace))["src-3-copy"]
    owner = child["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("ConfigMap", "src-3", True)


async def test_child_deleted_by_hand_is_recreated(client: Client, namespace: str) -> None:
    manager = MiniManager(client)
    copy_controller(manager, "it-recreate", workers=1)
    await client.create(source_config_map(namespace, "solo", "v"))
    async with manager:

        async def copied() -> bool:
            return "solo-copy" in await children(client, namespace)

        await wait_until_async(copied)
        first_uid = (await children(client, namespace))["solo-copy"]["metadata"]["uid"]
        await client.delete("v1", "ConfigMap", "solo-copy", namespace=namespace)

        async def recreated() -> bool:
            found = await children(client, namespace)
            return "solo-copy" in found and found["solo-copy"]["metadata"]["uid"] != first_uid

        await wait_until_async(recreated)


async def test_stale_cache_write_gets_conflict_and_is_retried(
    client: Client, namespace: str
) -> None:
    manager = MiniManager(client)
    attempts: list[str] = []

    async def reconcile(request: Request) -> None:
        cached = await manager.cache.get("v1", "ConfigMap", request.name, request.namespace)
        if cached is None or (cached.get("data") or {}).get("reconciled") == "yes":
            return
        if not attempts:
            # Someone else writes between our cache read and our write: our copy is now stale.
            await client.patch(
                "v1", "ConfigMap", request.name, {"data": {"other": "writer"}},
                namespace=request.namespace,
            )  # fmt: skip
        try:
            cached.setdefault("data", {})["reconciled"] = "yes"
            await client.update(cached)  # carries the cached resourceVersion
        except Conflict:
            attempts.append("conflict")
            raise
        attempts.append("written")

    (
        Builder(manager)
        .for_(
            "v1",
            "ConfigMap",
            predicates=[LabelSelectorPredicate({"matchLabels": {"role": "source"}})],
        )
        .named("it-conflict")
        .with_options(rate_limiter=ItemExponentialFailureRateLimiter(0.01, 0.2))
        .complete(reconcile)
    )
    await client.create(source_config_map(namespace, "contended", "v"))
    async with manager:

        async def reconciled() -> bool:
            obj = await client.get("v1", "ConfigMap", "contended", namespace=namespace)
            return bool(obj["data"].get("reconciled") == "yes")

        await wait_until_async(reconciled)
    obj = await client.get("v1", "ConfigMap", "contended", namespace=namespace)
    assert obj["data"] == {"value": "v", "other": "writer", "reconciled": "yes"}
    # The first write was stale; a retry wrote. (Later runs may still meet a stale cache.)
    assert attempts[0] == "conflict" and "written" in attempts
    errors = REGISTRY.get_sample_value(
        "controller_runtime_reconcile_errors_total", {"controller": "it-conflict"}
    )
    assert errors is not None and errors >= 1


async def test_create_or_update_skips_no_op_writes(client: Client, namespace: str) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cou", "namespace": namespace},
    }

    def mutate(o: dict[str, Any]) -> None:
        o["data"] = {"a": "1"}

    result, created = await create_or_update(client, obj, mutate)
    assert result is OperationResult.CREATED and obj is not created and obj == created
    rv = created["metadata"]["resourceVersion"]
    result, same = await create_or_update(client, obj, mutate)
    assert result is OperationResult.UNCHANGED
    assert same["metadata"]["resourceVersion"] == rv

    async def mutate_async(o: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        o["data"]["b"] = "2"

    result, updated = await create_or_update(client, obj, mutate_async)
    assert result is OperationResult.UPDATED
    assert updated["data"] == {"a": "1", "b": "2"}
    with pytest.raises(ValueError, match="name or namespace"):
        await create_or_update(client, obj, lambda o: o["metadata"].update(name="other"))
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "other", namespace=namespace)


async def test_controller_for_an_unserved_kind_fails_to_start_naming_it(client: Client) -> None:
    manager = MiniManager(client)
    Builder(manager).for_("nothere.example.com/v1", "Ghost").complete(lambda request: None)
    with pytest.raises(NoKindMatch, match="Ghost"):
        async with manager:
            pass


async def test_cluster_scoped_primary_with_namespaced_children(
    client: Client, namespace: str
) -> None:
    """Namespaces labelled for it get a 'welcome' ConfigMap; deleting it brings it back."""
    manager = MiniManager(client)

    async def reconcile(request: Request) -> None:
        assert request.namespace is None
        ns = await manager.cache.get("v1", "Namespace", request.name)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        welcome: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "welcome", "namespace": request.name},
        }

        def own(obj: dict[str, Any]) -> None:
            set_controller_reference(ns, obj)

        await create_or_update(client, welcome, own)

    (
        Builder(manager)
        .for_(
            "v1",
            "Namespace",
            predicates=[LabelSelectorPredicate({"matchLabels": {"welcome": "yes"}})],
        )
        .owns("v1", "ConfigMap")
        .named("it-namespaces")
        .complete(reconcile)
    )
    await client.patch("v1", "Namespace", namespace, {"metadata": {"labels": {"welcome": "yes"}}})
    async with manager:

        async def welcomed() -> bool:
            try:
                await client.get("v1", "ConfigMap", "welcome", namespace=namespace)
            except NotFound:
                return False
            return True

        await wait_until_async(welcomed)
        await client.delete("v1", "ConfigMap", "welcome", namespace=namespace)
        await wait_until_async(welcomed)  # the owner handler mapped the child to its Namespace
