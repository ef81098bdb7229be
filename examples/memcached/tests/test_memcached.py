"""Memcached: the acceptance scenarios of operator-sdk's sample, the fixes, and a Day-2 upgrade.

Everything below the Memcached is done by the local cluster's built-in controllers and its
simulated kubelet: the Deployment controller makes ReplicaSets and reports availability, the
kubelet runs the pods and marks them ready, the garbage collector deletes children.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from memcached_operator.api.v1alpha1 import Memcached, MemcachedProxy
from memcached_operator.controllers.memcached import FINALIZER
from memcached_operator.operator import op

from setpoint import Client, kinds
from setpoint.client import ApiError, WatchEventType
from setpoint.testing import install_crds, run_operator, wait_for, wait_for_event

TIMEOUT = 60  # seconds: an upper bound on a loaded machine, not an expectation


@pytest.fixture
def image(monkeypatch: pytest.MonkeyPatch) -> str:
    """The image the operator deploys (the operator runs in this process)."""
    monkeypatch.setenv("MEMCACHED_IMAGE", "example.com/image:test")
    return "example.com/image:test"


def memcached(namespace: str, name: str = "example", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": 1, "containerPort": 11211, **spec},
    }


def condition(obj: Memcached | None, type: str) -> dict[str, Any] | None:
    if obj is None or obj.status is None:
        return None
    return next((c for c in obj.status.conditions if c.get("type") == type), None)


async def wait_available(
    client: Client, namespace: str, name: str, message: str | None = None
) -> Memcached:
    def available(obj: Memcached) -> bool:
        found = condition(obj, "Available")
        return (
            found is not None
            and found["status"] == "True"
            and (message is None or found["message"] == message)
        )

    result: Memcached = await wait_for(
        lambda: client.get(Memcached, name, namespace=namespace),
        available,
        timeout=TIMEOUT,
        what=f"Memcached {name} Available ({message})",
    )
    return result


async def deployment(client: Client, namespace: str, name: str = "example") -> dict[str, Any]:
    result: dict[str, Any] = await client.get(*kinds.Deployment, name, namespace=namespace)
    return result


async def test_a_memcached_gets_the_reference_deployment_and_scales(
    client: Client, kubeconfig: str, namespace: str, image: str
) -> None:
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(memcached(namespace))
        created = await wait_available(
            client,
            namespace,
            "example",
            "Deployment for custom resource (example) with 1 replicas created successfully",
        )
        assert FINALIZER in (created.metadata.finalizers or [])
        assert created.status is not None
        available = [c for c in created.status.conditions if c["type"] == "Available"]
        assert len(available) == 1 and available[0]["reason"] == "Reconciling"

        made = await deployment(client, namespace)
        spec = made["spec"]
        assert spec["replicas"] == 1
        assert spec["selector"]["matchLabels"] == {
            "app.kubernetes.io/name": "memcached-operator",
            "app.kubernetes.io/instance": "example",
            "app.kubernetes.io/managed-by": "MemcachedController",
        }
        labels = spec["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/version"] == "test"
        pod = spec["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        (container,) = pod["containers"]
        assert container["name"] == "memcached"
        assert container["image"] == image
        assert container["args"] == ["-m=64", "-o", "modern", "-v"]
        assert "command" not in container
        assert container["ports"][0]["containerPort"] == 11211
        assert container["ports"][0]["name"] == "memcached"
        assert container["securityContext"]["runAsUser"] == 1001
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        controller = made["metadata"]["ownerReferences"][0]
        assert (controller["kind"], controller["controller"]) == ("Memcached", True)

        # The backend Service (an addition): ClusterIP, port 11211 to the pods' named port.
        service = await client.get(*kinds.Service, "example", namespace=namespace)
        assert service["spec"]["type"] == "ClusterIP"
        assert service["spec"]["ports"][0]["port"] == 11211
        assert service["spec"]["ports"][0]["targetPort"] == "memcached"
        assert service["spec"]["selector"] == spec["selector"]["matchLabels"]

        # Size 1 -> 3.
        await client.patch(
            "cache.example.com/v1alpha1",
            "Memcached",
            "example",
            {"spec": {"size": 3}},
            namespace=namespace,
        )
        await wait_available(
            client,
            namespace,
            "example",
            "Deployment for custom resource (example) with 3 replicas created successfully",
        )
        assert (await deployment(client, namespace))["status"]["availableReplicas"] == 3

        # A manual scale is reverted.
        await client.scale(*kinds.Deployment, "example", 1, namespace=namespace)
        await wait_for(
            lambda: deployment(client, namespace),
            lambda d: d["spec"]["replicas"] == 3 and d["status"].get("availableReplicas") == 3,
            timeout=TIMEOUT,
            what="the manual scale to be reverted",
        )

        # A deleted Deployment is recreated.
        uid = (await deployment(client, namespace))["metadata"]["uid"]
        await client.delete(*kinds.Deployment, "example", namespace=namespace)
        await wait_for(
            lambda: deployment(client, namespace),
            lambda d: d["metadata"]["uid"] != uid,
            timeout=TIMEOUT,
            what="the deleted Deployment to be recreated",
        )


@pytest.mark.parametrize("size", [0, 4])
async def test_a_size_out_of_1_to_3_is_rejected(client: Client, namespace: str, size: int) -> None:
    await install_crds(client, Memcached, MemcachedProxy)
    with pytest.raises(ApiError) as refused:
        await client.create(memcached(namespace, size=size))
    assert refused.value.code == 422
    assert "spec.size" in str(refused.value)


async def test_without_memcached_image_nothing_is_deployed(
    client: Client, kubeconfig: str, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMCACHED_IMAGE", raising=False)
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(memcached(namespace))
        failed = await wait_for(
            lambda: client.get(Memcached, "example", namespace=namespace),
            lambda obj: (condition(obj, "Available") or {}).get("status") == "False",
            timeout=TIMEOUT,
            what="Available False",
        )
        message = condition(failed, "Available")["message"]  # type: ignore[index]
        assert message.startswith("Failed to create Deployment for the custom resource (example)")
        assert "MEMCACHED_IMAGE" in message
        assert len(await client.list(*kinds.Deployment, namespace=namespace)) == 0


async def test_deleting_a_memcached_runs_its_finalizer(
    client: Client, kubeconfig: str, namespace: str, image: str
) -> None:
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(memcached(namespace))
        created = await wait_available(client, namespace, "example")
        await deployment(client, namespace)

        # The Memcached is gone once its finalizer is removed: watch what it went through.
        listed = await client.list(Memcached, namespace=namespace)
        seen: list[Memcached] = []

        async def follow() -> None:
            async for event in client.watch(
                Memcached, namespace=namespace, resource_version=listed.resource_version
            ):
                seen.append(event.object)
                if event.type is WatchEventType.DELETED:
                    return

        watching = asyncio.ensure_future(follow())
        try:
            await client.delete(Memcached, "example", namespace=namespace)
            async with asyncio.timeout(TIMEOUT):
                await watching
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

        degraded = [condition(obj, "Degraded") for obj in seen]
        assert {"status": "True", "reason": "Finalizing"}.items() <= (degraded[-1] or {}).items()
        assert (degraded[-1] or {})["message"] == (
            "Finalizer operations for custom resource example name were successfully accomplished"
        )
        # DELETED came (the watch ended): the operator removed its finalizer. (The DELETED
        # object is the last stored state, with the finalizer, as kube-apiserver sends it.)
        event = await wait_for_event(client, created, reason="Deleting", type="Warning")
        assert event["note"] == "Custom Resource example is being deleted from the namespace " + (
            namespace
        )
        async with asyncio.timeout(TIMEOUT):  # garbage-collected with its owner
            await client.wait_for(
                *kinds.Deployment, "example", lambda obj: obj is None, namespace=namespace
            )


async def test_two_memcacheds_in_a_namespace_keep_their_own_pods(
    client: Client, kubeconfig: str, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An image without a tag: the original's Split(image, ":")[1] panics here.
    monkeypatch.setenv("MEMCACHED_IMAGE", "memcached")
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(memcached(namespace, "small", size=1))
        await client.create(memcached(namespace, "large", size=3))
        await wait_available(client, namespace, "small")
        await wait_available(client, namespace, "large")
        for name, size in (("small", 1), ("large", 3)):
            pods = await client.list(
                *kinds.Pod,
                namespace=namespace,
                label_selector={"app.kubernetes.io/instance": name},
            )
            assert len(pods) == size
            made = await deployment(client, namespace, name)
            assert made["status"]["availableReplicas"] == size
            assert made["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"] == (
                "latest"
            )


async def test_changing_the_version_rolls_one_pod_at_a_time(
    client: Client, kubeconfig: str, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Day 2: an upgrade keeps at least size-1 pods available at every moment."""
    monkeypatch.setenv("MEMCACHED_IMAGE", "memcached:1.6.26-alpine3.19")
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(memcached(namespace, size=3, version="1.6.26"))
        await wait_available(client, namespace, "example")
        before = await deployment(client, namespace)
        assert before["spec"]["template"]["spec"]["containers"][0]["image"] == "memcached:1.6.26"

        # Every status the Deployment controller writes from here on.
        statuses: list[dict[str, Any]] = []

        async def follow() -> None:
            async for event in client.watch(
                *kinds.Deployment,
                namespace=namespace,
                name="example",
                resource_version=before["metadata"]["resourceVersion"],
            ):
                statuses.append(event.object.get("status") or {})

        watching = asyncio.ensure_future(follow())
        try:
            await client.patch(
                "cache.example.com/v1alpha1",
                "Memcached",
                "example",
                {"spec": {"version": "1.6.29"}},
                namespace=namespace,
            )
            await wait_for(
                lambda: client.get(Memcached, "example", namespace=namespace),
                lambda obj: (condition(obj, "Available") or {}).get("status") == "False",
                timeout=TIMEOUT,
                what="Available False while rolling",
            )
            await wait_available(client, namespace, "example")
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

        pods = await client.list(*kinds.Pod, namespace=namespace)
        assert sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["memcached:1.6.29"] * 3
        available = [s.get("availableReplicas", 0) for s in statuses if "replicas" in s]
        assert available, "no Deployment status was observed during the rollout"
        assert min(available) == 2  # one pod at a time: never fewer than size-1, and it did roll
        assert max(s.get("replicas", 0) for s in statuses) == 3  # maxSurge 0: never more pods
        assert any(0 < s.get("updatedReplicas", 0) < 3 for s in statuses)  # seen mid-rollout
