"""The finalizer helpers against the local cluster: add, clean up on deletion, remove."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from setpoint.client import Client, Conflict, NotFound
from setpoint.controller.builder import Builder
from setpoint.controller.finalizers import (
    FinalizerOutcome,
    Finalizers,
    ensure_finalizer,
    handle_finalizer,
    remove_finalizer,
)
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request

from .mini_manager import MiniManager
from .waiting import wait_until_async

FINALIZER = "example.com/cleanup"


def config_map(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
    }


async def exists(client: Client, namespace: str, name: str) -> bool:
    try:
        await client.get("v1", "ConfigMap", name, namespace=namespace)
    except NotFound:
        return False
    return True


async def test_controller_adds_finalizer_cleans_up_and_lets_the_object_go(
    client: Client, namespace: str
) -> None:
    manager = MiniManager(client)
    cleaned: list[str] = []
    fail_first_cleanup = True

    async def cleanup(obj: dict[str, Any]) -> None:
        nonlocal fail_first_cleanup
        if fail_first_cleanup:
            fail_first_cleanup = False
            raise RuntimeError("external API down")
        cleaned.append(obj["metadata"]["name"])

    async def reconcile(request: Request) -> None:
        obj = await manager.cache.get_cached("v1", "ConfigMap", request.name, request.namespace)
        if obj is None:
            return
        await handle_finalizer(client, obj, FINALIZER, cleanup)

    (
        Builder(manager)
        .for_("v1", "ConfigMap")
        .named("it-finalizer")
        .with_options(rate_limiter=ItemExponentialFailureRateLimiter(0.01, 0.1))
        .complete(reconcile)
    )
    await client.create(config_map(namespace, "guarded"))
    async with manager:

        async def finalizer_added() -> bool:
            obj = await client.get("v1", "ConfigMap", "guarded", namespace=namespace)
            return FINALIZER in (obj["metadata"].get("finalizers") or [])

        await wait_until_async(finalizer_added)
        await client.delete("v1", "ConfigMap", "guarded", namespace=namespace)

        async def gone() -> bool:
            return not await exists(client, namespace, "guarded")

        await wait_until_async(gone)
    assert cleaned == ["guarded"]  # the failed cleanup kept the object until a retry succeeded


async def test_finalizer_helpers_are_idempotent_and_optimistic(
    client: Client, namespace: str
) -> None:
    obj = await client.create(config_map(namespace, "direct"))
    added = await ensure_finalizer(client, obj, FINALIZER)
    assert added is not None and added["metadata"]["finalizers"] == [FINALIZER]
    assert await ensure_finalizer(client, added, FINALIZER) is None  # already there: no write
    with pytest.raises(Conflict):  # stale copy: the write must not clobber
        await ensure_finalizer(client, obj, "example.com/other")
    removed = await remove_finalizer(client, added, FINALIZER)
    assert removed is not None and not removed["metadata"].get("finalizers")
    assert await remove_finalizer(client, removed, FINALIZER) is None
    with pytest.raises(ValueError, match="finalizer name"):
        await ensure_finalizer(client, removed, "has space")


async def test_handle_finalizer_outcomes(client: Client, namespace: str) -> None:
    obj = await client.create(config_map(namespace, "flow"))
    calls: list[str] = []
    threads: list[int] = []

    def cleanup(o: dict[str, Any]) -> None:  # sync cleanups run in a worker thread
        calls.append(o["metadata"]["name"])
        threads.append(threading.get_ident())

    first = await handle_finalizer(client, obj, FINALIZER, cleanup)
    assert first.outcome is FinalizerOutcome.ADDED and not first.deleting
    assert first.object is not None
    second = await handle_finalizer(client, first.object, FINALIZER, cleanup)
    assert second.outcome is FinalizerOutcome.PRESENT
    await client.delete("v1", "ConfigMap", "flow", namespace=namespace)
    deleting = await client.get("v1", "ConfigMap", "flow", namespace=namespace)
    assert deleting["metadata"].get("deletionTimestamp")
    third = await handle_finalizer(client, deleting, FINALIZER, cleanup)
    assert third.outcome is FinalizerOutcome.FINALIZED and third.deleting
    assert calls == ["flow"]
    assert threads != [threading.get_ident()]
    assert not await exists(client, namespace, "flow")


async def test_finalizers_registry_removes_only_what_succeeded(
    client: Client, namespace: str
) -> None:
    registry = Finalizers()
    ran: list[str] = []

    async def ok(o: dict[str, Any]) -> None:
        ran.append("ok")

    async def broken(o: dict[str, Any]) -> None:
        ran.append("broken")
        raise RuntimeError("not yet")

    registry.register("example.com/ok", ok)
    registry.register("example.com/broken", broken)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("example.com/ok", ok)
    obj = await client.create(config_map(namespace, "multi"))
    result = await registry.reconcile(client, obj)
    assert result.outcome is FinalizerOutcome.ADDED and result.object is not None
    assert result.object["metadata"]["finalizers"] == ["example.com/ok", "example.com/broken"]
    await client.delete("v1", "ConfigMap", "multi", namespace=namespace)
    deleting = await client.get("v1", "ConfigMap", "multi", namespace=namespace)
    with pytest.raises(RuntimeError, match="not yet"):
        await registry.reconcile(client, deleting)
    remaining = await client.get("v1", "ConfigMap", "multi", namespace=namespace)
    assert remaining["metadata"]["finalizers"] == ["example.com/broken"]
    assert ran == ["ok", "broken"]


async def test_a_cleanup_that_writes_the_object_runs_once_and_the_object_goes(
    client: Client, namespace: str
) -> None:
    """The cleanup's own write moves the object on; removing the finalizer with the old
    resourceVersion conflicts, and must re-read rather than run the cleanup again (which would
    write and conflict again, for ever)."""
    ran: list[str] = []

    async def cleanup(o: dict[str, Any]) -> None:
        ran.append(o["metadata"]["name"])
        await client.patch(
            config_map(namespace, "noisy"), {"metadata": {"annotations": {"phase": "Deleting"}}}
        )

    obj = await client.create(config_map(namespace, "noisy"))
    added = await handle_finalizer(client, obj, FINALIZER, cleanup)
    assert added.object is not None
    await client.delete("v1", "ConfigMap", "noisy", namespace=namespace)
    deleting = await client.get("v1", "ConfigMap", "noisy", namespace=namespace)
    result = await handle_finalizer(client, deleting, FINALIZER, cleanup)
    assert result.outcome is FinalizerOutcome.FINALIZED
    assert ran == ["noisy"]
    assert not await exists(client, namespace, "noisy")

    registry = Finalizers()
    registry.register(FINALIZER, cleanup)
    obj = await client.create(config_map(namespace, "noisy"))
    await registry.reconcile(client, obj)
    await client.delete("v1", "ConfigMap", "noisy", namespace=namespace)
    deleting = await client.get("v1", "ConfigMap", "noisy", namespace=namespace)
    await registry.reconcile(client, deleting)
    assert ran == ["noisy", "noisy"]
    assert not await exists(client, namespace, "noisy")
