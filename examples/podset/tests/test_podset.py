"""PodSet's acceptance scenarios, against the local cluster (its kubelet runs the Pods)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from podset_operator.api.v1alpha1.podset import PodSet, PodSetSpec
from podset_operator.operator import op

from setpoint.client import Client, Invalid
from setpoint.testing import install_crds, run_operator, wait_for


@pytest.fixture
async def operator(client: Client, kubeconfig: str, namespace: str) -> Any:
    await install_crds(client, PodSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace) as running:
        yield running


async def live_pods(client: Client, namespace: str, name: str = "web") -> list[dict[str, Any]]:
    pods = await client.list("v1", "Pod", namespace=namespace, label_selector={"app": name})
    return [
        pod
        for pod in pods
        if not pod["metadata"].get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") in (None, "Pending", "Running")
    ]


async def converged(client: Client, namespace: str, replicas: int, name: str = "web") -> PodSet:
    """Wait until the PodSet reports ``replicas`` Pods and they are exactly the live ones."""

    async def probe() -> PodSet | None:
        podset = await client.get(PodSet, name, namespace=namespace)
        names = sorted(pod["metadata"]["name"] for pod in await live_pods(client, namespace, name))
        status = podset.status
        if (
            status is not None
            and status.available_replicas == replicas
            and sorted(status.pod_names) == names
            and len(names) == replicas
        ):
            return podset
        return None

    return await wait_for(probe, timeout=30, what=f"PodSet {name} at {replicas} pods")


async def test_replicas_pods_owned_and_named_in_status(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=3))
    )
    podset = await converged(client, namespace, 3)
    for pod in await live_pods(client, namespace):
        assert pod["metadata"]["name"].startswith("web-pod")
        (container,) = pod["spec"]["containers"]
        assert (container["image"], container["command"]) == ("busybox", ["sleep", "3600"])
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "PodSet",
            podset.metadata.uid,
            True,
        )


async def test_scaling_up_and_down_and_replacing_a_deleted_pod(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=3))
    )
    await converged(client, namespace, 3)
    await client.patch(PodSet, "web", {"spec": {"replicas": 5}}, namespace=namespace)
    await converged(client, namespace, 5)
    await client.patch(PodSet, "web", {"spec": {"replicas": 1}}, namespace=namespace)
    podset = await converged(client, namespace, 1)
    (victim,) = podset.status.pod_names if podset.status else []
    victim_uid = (await client.get("v1", "Pod", victim, namespace=namespace))["metadata"]["uid"]
    await client.delete("v1", "Pod", victim, namespace=namespace)

    async def replaced() -> PodSet | None:
        podset = await converged(client, namespace, 1)
        # A new pod, told by its uid: an operator may give the replacement the same name (the
        # composite version names its pods web-pod-0, web-pod-1, ...) once the victim is gone.
        uids = [pod["metadata"]["uid"] for pod in await live_pods(client, namespace)]
        return podset if uids and victim_uid not in uids else None

    podset = await wait_for(replaced, timeout=30, what="a replacement pod")
    assert podset.status is not None and podset.status.available_replicas == 1


async def test_never_more_pods_than_replicas_under_a_burst_of_deletions(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=5))
    )
    await converged(client, namespace, 5)
    most = 0

    async def count() -> None:
        nonlocal most
        while True:
            most = max(most, len(await live_pods(client, namespace)))
            await asyncio.sleep(0.01)

    counting = asyncio.create_task(count())
    try:
        for _ in range(3):
            await asyncio.gather(
                *(
                    client.delete(pod, missing_ok=True)
                    for pod in (await live_pods(client, namespace))[:3]
                )
            )
        await converged(client, namespace, 5)
    finally:
        counting.cancel()
    assert most <= 5


async def test_pods_of_other_namespaces_and_finished_pods_do_not_count(
    client: Client, namespace: str, operator: Any
) -> None:
    # A same-labelled Pod in another namespace (the original counted it) and one here that the
    # PodSet does not own.
    stranger = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stranger", "namespace": namespace, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]},
    }
    await client.create(stranger)
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=2))
    )

    async def owned_names() -> list[str]:
        podset = await client.get(PodSet, "web", namespace=namespace)
        return podset.status.pod_names if podset.status else []

    names = await wait_for(owned_names, lambda n: len(n) == 2, timeout=30, what="2 owned pods")
    assert "stranger" not in names


async def test_deleting_the_podset_collects_its_pods(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=2))
    )
    await converged(client, namespace, 2)
    await client.delete(PodSet, "web", namespace=namespace)

    async def no_pods() -> bool:
        return len(await client.list("v1", "Pod", namespace=namespace)) == 0

    await wait_for(no_pods, timeout=30, what="the pods garbage-collected")


@pytest.mark.parametrize("replicas", [-1, 0, 11])
async def test_replicas_out_of_bounds_are_refused(
    client: Client, namespace: str, replicas: int
) -> None:
    await install_crds(client, PodSet)
    body = {
        "apiVersion": "app.example.com/v1alpha1",
        "kind": "PodSet",
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": {"replicas": replicas},
    }
    with pytest.raises(Invalid, match=r"spec\.replicas"):
        await client.create(body)
