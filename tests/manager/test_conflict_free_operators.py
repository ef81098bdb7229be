"""Operators written the naive way, with cache-only reads and the documented helpers, against
the local cluster: no 409 tracebacks, read-your-own-writes under event bursts, typed reads,
create_or_patch that reports "unchanged", and refusing to adopt."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from setpoint import kinds
from setpoint.api.meta import metadata
from setpoint.api.owners import is_controlled_by, set_controller_reference
from setpoint.cache import Cache, CacheOptions, FunctionEventHandler
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.controller.create_or_update import OperationResult
from setpoint.controller.finalizers import FinalizerOutcome, handle_finalizer
from setpoint.controller.reconcile import Request, Result
from setpoint.manager.context import Context, NotControlledError
from setpoint.manager.operator import Operator
from setpoint.testing import BackgroundCluster, FakeClock, install_crds, run_operator, wait_for

#: How long the operator and the controllers may take on the shared machine (never, if longer).
PATIENCE = 60.0


def crd(kind: str, group: str) -> dict[str, Any]:
    """A namespaced CRD with a status subresource; spec and status keep any fields."""
    plural = kind.lower() + "s"
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": loose, "status": loose},
                        }
                    },
                }
            ],
        },
    }


async def quiet(counts: dict[str, int], seconds: float = 0.5) -> dict[str, int] | None:
    """A copy of ``counts`` once it stayed the same for ``seconds``; None if it moved."""
    before = dict(counts)
    await asyncio.sleep(seconds)
    return before if before == counts else None


@pytest.fixture
async def group(client: Client) -> AsyncIterator[str]:
    name = f"g{secrets.token_hex(4)}.example.com"
    yield name


async def test_foo_like_operator_over_100_objects_logs_no_409_tracebacks(
    client: Client,
    kubeconfig: str,
    namespace: str,
    group: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each Foo gets a child ConfigMap and a status written with patch_status and a condition;
    before, the documented update_status on the cached copy got 409s logged with tracebacks."""
    await install_crds(client, crd("Foo", group))
    op = Operator("foos")
    reconciles: dict[str, int] = {}
    writes: list[str] = []

    @op.reconciler(for_=(f"{group}/v1", "Foo"), owns=[kinds.ConfigMap], max_concurrent=4)
    async def reconcile(ctx: Context, request: Request) -> None:
        reconciles[request.name] = reconciles.get(request.name, 0) + 1
        foo = await ctx.get()
        if foo is None:
            return
        outcome, child = await ctx.create_or_patch(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{request.name}-cm"}},
            lambda cm: cm.update(data={"size": str(foo["spec"]["size"])}),
        )
        if outcome != OperationResult.UNCHANGED:
            writes.append(f"{request.name} child {outcome}")
        after = await ctx.patch_status(
            {"configMap": child["metadata"]["name"]},
            conditions=[{"type": "Ready", "status": "True", "reason": "Synced"}],
        )
        if after["metadata"]["resourceVersion"] != foo["metadata"]["resourceVersion"]:
            writes.append(f"{request.name} status")

    caplog.set_level(logging.INFO, logger="setpoint")
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        for i in range(100):
            await client.create(
                {
                    "apiVersion": f"{group}/v1",
                    "kind": "Foo",
                    "metadata": {"name": f"foo{i}", "namespace": namespace},
                    "spec": {"size": i},
                }
            )

        async def all_ready() -> bool:
            foos = await client.list(f"{group}/v1", "Foo", namespace=namespace)
            return len(foos) == 100 and all(
                (foo.get("status") or {}).get("conditions") for foo in foos
            )

        await wait_for(all_ready, timeout=60, what="100 ready Foos")
        settled = await wait_for(lambda: quiet(reconciles), timeout=PATIENCE, what="quiet")
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert tracebacks == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    foo = await client.get(f"{group}/v1", "Foo", "foo7", namespace=namespace)
    (condition,) = foo["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["observedGeneration"]) == (
        "Ready",
        "True",
        1,
    )
    # Own writes wake the reconcile again (the status patch, the child's ADDED event), the
    # queue coalescing them: one extra run, two when the second event came during the first;
    # the extra runs read the cache and write nothing, so nothing wakes them again.
    assert min(settled.values()) >= 2, settled
    assert max(settled.values()) <= 3, settled
    assert len(writes) == 200, sorted(writes)
    assert sorted(set(writes)) == sorted(
        {f"foo{i} child created" for i in range(100)} | {f"foo{i} status" for i in range(100)}
    )


async def test_podset_with_cache_reads_never_exceeds_replicas_under_50_deletions(
    client: Client, local_cluster: BackgroundCluster, kubeconfig: str, namespace: str, group: str
) -> None:
    """PodSet written naively: list owned Pods from the cache, create the missing ones, delete
    the excess. Before read-your-own-writes it created two Pods for one deleted and then
    deleted a healthy one as excess."""
    await install_crds(client, crd("PodSet", group))
    replicas = 10
    op = Operator("podsets")

    @op.reconciler(for_=(f"{group}/v1", "PodSet"), owns=[kinds.Pod], max_concurrent=2)
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        podset = await ctx.get()
        if podset is None:
            return None
        pods = [p for p in await ctx.owned(kinds.Pod) if not metadata(p).get("deletionTimestamp")]
        want = podset["spec"]["replicas"]
        for _ in range(want - len(pods)):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"generateName": f"{request.name}-", "namespace": request.namespace},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            }
            set_controller_reference(podset, pod)
            await ctx.client.create(pod)
        for pod in pods[want:]:
            await ctx.client.delete(pod)
        return None

    # Pods of this test's namespace only: the session cluster may still be emptying the
    # namespaces of earlier tests (their Pods terminate as the kubelet stops them).
    live: set[str] = set()
    most = 0

    def seen(obj: CachedObject, *_: Any) -> None:
        nonlocal most
        if obj.deletion_timestamp:
            live.discard(obj.name)
        else:
            live.add(obj.name)
        most = max(most, len(live))

    def settled(pods: list[dict[str, Any]]) -> bool:
        """``replicas`` Pods, none terminating, every one running on the node."""
        return len(pods) == replicas and all(
            not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") == "Running"
            for p in pods
        )

    watcher = Cache(client, CacheOptions(namespaces=[namespace]))
    informer = await watcher.informer_for("v1", "Pod")
    informer.add_event_handler(
        FunctionEventHandler(
            add=seen, update=lambda old, new: seen(new), delete=lambda o: live.discard(o.name)
        )
    )
    await watcher.start()
    try:
        async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
            await client.create(
                {
                    "apiVersion": f"{group}/v1",
                    "kind": "PodSet",
                    "metadata": {"name": "ps", "namespace": namespace},
                    "spec": {"replicas": replicas},
                }
            )
            await wait_for(lambda: len(live) == replicas, timeout=PATIENCE, what="the pods")
            deleted = 0
            while deleted < 50:  # a burst: delete every live Pod at once, again and again
                pods = await client.list("v1", "Pod", namespace=namespace)
                batch = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
                await asyncio.gather(*(client.delete(p, missing_ok=True) for p in batch))
                deleted += len(batch)
                if not batch:
                    await asyncio.sleep(0.05)  # the operator has not replaced them yet
            # Deleted Pods keep their deletionTimestamp until the kubelet has stopped them.
            await wait_for(
                lambda: client.list("v1", "Pod", namespace=namespace),
                settled,
                timeout=PATIENCE,
                what="the pods again, running",
            )
    finally:
        await watcher.stop()
    assert most <= replicas
    pods = await client.list("v1", "Pod", namespace=namespace)
    assert settled(pods), pods


class FooSpec(BaseModel):
    size: int


class FooModel(BaseModel):
    api_version: ClassVar[str]
    kind: ClassVar[str] = "Foo"
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: FooSpec
    status: dict[str, Any] | None = None


async def test_typed_reads_helpers_on_models_and_create_or_patch_unchanged(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    await install_crds(client, crd("Foo", group))
    model = type("Foo", (FooModel,), {"api_version": f"{group}/v1"})
    op = Operator("typed")
    outcomes: list[tuple[str, Any, Any]] = []

    async def cleanup(foo: Any) -> None:
        pass

    @op.reconciler(for_=model, owns=[kinds.Deployment])
    async def reconcile(ctx: Context, request: Request) -> None:
        foo = await ctx.get()
        if foo is None:
            return
        assert isinstance(foo, model)
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"{request.name}-deploy"},
        }

        def mutate(obj: dict[str, Any]) -> None:
            labels = {"app": request.name}
            obj["spec"] = {  # a whole spec, which the server defaults inside
                "replicas": foo.spec.size,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            }

        first, created = await ctx.create_or_patch(deployment, mutate)
        second, again = await ctx.create_or_patch(deployment, mutate)
        owned = await ctx.owned(kinds.Deployment)
        outcomes.append((first, second, created["metadata"]["resourceVersion"]))
        outcomes.append(("rv", again["metadata"]["resourceVersion"], len(owned)))
        assert is_controlled_by(created, foo)
        finalizer = await handle_finalizer(ctx.client, foo, "example.com/cleanup", cleanup)
        outcomes.append(("finalizer", finalizer.outcome, None))
        ctx.recorder.normal(foo, "Synced", "deployment in place")
        await ctx.patch_status({"seen": foo.spec.size})

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Foo",
                "metadata": {"name": "f", "namespace": namespace},
                "spec": {"size": 2},
            }
        )
        await wait_for(lambda: len(outcomes) >= 3, what="a reconcile")
    first, second, rv = outcomes[0]
    assert (first, second) == (OperationResult.CREATED, OperationResult.UNCHANGED)
    assert outcomes[1] == ("rv", rv, 1)  # no write the second time, and owned at once
    assert outcomes[2] == ("finalizer", FinalizerOutcome.ADDED, None)  # on a model
    foo = await client.get(f"{group}/v1", "Foo", "f", namespace=namespace)
    assert foo["status"] == {"seen": 2}


async def test_adopt_false_refuses_an_object_someone_else_made(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    await install_crds(client, crd("Foo", group))
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "taken", "namespace": namespace},
        }
    )
    op = Operator("adopters")
    errors: list[BaseException] = []

    @op.reconciler(for_=(f"{group}/v1", "Foo"), owns=[kinds.ConfigMap])
    async def reconcile(ctx: Context, request: Request) -> None:
        try:
            await ctx.create_or_update(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "taken"}},
                lambda cm: cm.update(data={"a": "b"}),
                adopt=False,
            )
        except NotControlledError as error:
            errors.append(error)

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Foo",
                "metadata": {"name": "f", "namespace": namespace},
                "spec": {},
            }
        )
        await wait_for(lambda: errors, what="the refusal")
    assert "ConfigMap" in str(errors[0]) and "not controlled by anyone" in str(errors[0])
    assert isinstance(errors[0], NotControlledError)
    assert errors[0].owner["spec"] == {}  # the whole owner, as the cache holds it
    cm = await client.get("v1", "ConfigMap", "taken", namespace=namespace)
    assert "data" not in cm and not cm["metadata"].get("ownerReferences")


async def test_for_predicates_filter_the_primary_kind_only(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    """GenerationChanged on the primary kind alone: a status-only write of the Foo wakes
    nothing, while a change of its child still re-reconciles it (owns keeps working)."""
    from setpoint.controller import GenerationChanged

    await install_crds(client, crd("Foo", group))
    op = Operator("filtered")
    runs: list[str] = []

    @op.reconciler(
        for_=(f"{group}/v1", "Foo"),
        owns=[kinds.ConfigMap],
        for_predicates=[GenerationChanged()],
    )
    async def reconcile(ctx: Context, request: Request) -> None:
        runs.append(request.name)
        if not await ctx.owned(kinds.ConfigMap):
            await ctx.create_or_update(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child"}},
                lambda cm: cm.update(data={"a": "1"}),
            )

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        foo = await client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Foo",
                "metadata": {"name": "f", "namespace": namespace},
                "spec": {"size": 1},
            }
        )
        await wait_for(lambda: client.get("v1", "ConfigMap", "child", namespace=namespace))
        settled = await wait_for(lambda: len(runs) >= 2 and len(runs), what="the child's event")
        await client.patch(foo, {"status": {"note": "x"}}, subresource="status")
        await client.patch(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "child", "namespace": namespace},
            },
            {"data": {"a": "2"}},
        )
        await wait_for(lambda: len(runs) > settled, what="the child's change to wake the Foo")
        # the status write came first; had it woken the Foo there would be one more run
        await client.patch(foo, {"spec": {"size": 2}})
        await wait_for(lambda: len(runs) == settled + 2, what="the spec change")
    assert runs == ["f"] * (settled + 2)


async def test_operator_resync_requeues_every_primary_object_on_its_clock(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock()
    op = Operator("resyncing", resync=600)
    runs: list[str] = []

    @op.reconciler(for_=kinds.ConfigMap)
    async def reconcile(ctx: Context, request: Request) -> None:
        runs.append(f"{request.name}@{ctx.now().isoformat()}")

    await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r", "namespace": namespace}}
    )
    # The namespace also holds the root CA publisher's ConfigMap: a primary object too.
    names = {"r", "kube-root-ca.crt"}
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        await wait_for(lambda: len(runs) == 2, what="the first reconciles")
        start = clock.now()
        await wait_for(lambda: clock.pending() > 0, what="the resync timer")
        clock.advance(600)
        await wait_for(lambda: len(runs) == 4, what="the resync")
    later = start + timedelta(seconds=600)
    assert sorted(runs) == sorted(
        [f"{n}@{start.isoformat()}" for n in names] + [f"{n}@{later.isoformat()}" for n in names]
    )
