"""PodSet keeps its guarantees on day 2: through a ``kubectl drain`` that a PodDisruptionBudget
paces, and through the failure of the node its Pods run on (two nodes; the cluster clock is
a FakeClock the test moves past the node monitor grace period)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from podset_operator.api.v1alpha1.podset import PodSet, PodSetSpec
from podset_operator.operator import op

from setpoint.api.clock import FakeClock
from setpoint.client import Client
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing import install_crds, run_operator, wait_for

NAMESPACE = "default"


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[LocalCluster, FakeClock, Client]]:
    clock = FakeClock()
    async with LocalCluster(nodes=2, clock=clock) as local:
        client = await Client.from_kubeconfig(str(local.kubeconfig_path))
        try:
            await install_crds(client, PodSet)
            yield local, clock, client
        finally:
            await client.close()


async def _live(client: Client) -> list[dict[str, Any]]:
    pods = await client.list("v1", "Pod", namespace=NAMESPACE, label_selector={"app": "web"})
    return [
        pod
        for pod in pods
        if not pod["metadata"].get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") == "Running"
    ]


async def _running_on(client: Client, count: int, avoiding: str | None = None) -> list[str]:
    async def probe() -> list[str] | None:
        nodes = [pod["spec"].get("nodeName", "") for pod in await _live(client)]
        if len(nodes) != count or (avoiding is not None and avoiding in nodes):
            return None
        podset = await client.get(PodSet, "web", namespace=NAMESPACE)
        status = podset.status
        return nodes if status is not None and status.available_replicas == count else None

    return await wait_for(probe, timeout=60, what=f"{count} running pods (not on {avoiding})")


async def _kubectl(local: LocalCluster, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(local.kubeconfig_path),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "KUBECACHEDIR": str(local.kubeconfig_path) + ".cache"},
    )
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode()


async def test_podset_through_a_drain_and_a_node_failure(
    cluster: tuple[LocalCluster, FakeClock, Client],
) -> None:
    local, clock, client = cluster
    async with run_operator(op, kubeconfig=local.kubeconfig_path, namespace=NAMESPACE):
        await client.create(
            PodSet(metadata={"name": "web", "namespace": NAMESPACE}, spec=PodSetSpec(replicas=3))
        )
        nodes = await _running_on(client, 3)
        # A budget: at most one of the three may be away at a time.
        await client.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": NAMESPACE},
                "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
            }
        )
        drained = max(set(nodes), key=nodes.count)
        code, output = await _kubectl(
            local, "drain", drained, "--ignore-daemonsets", "--timeout=90s"
        )
        assert code == 0, output
        assert f"node/{drained} drained" in output
        # The PodSet replaced each evicted pod on the other node.
        survivor = (await _running_on(client, 3, avoiding=drained))[0]
        code, output = await _kubectl(local, "uncordon", drained)
        assert code == 0, output

        # Now the node all three run on fails: its kubelet stops.
        await client.patch(
            "v1",
            "Node",
            survivor,
            {"metadata": {"annotations": {"setpoint.dev/kubelet": "stopped"}}},
        )
        clock.advance(60)  # past the 50 s grace period: Unknown, tainted, pods evicted
        # Pods tolerate unreachable nodes for their tolerationSeconds (300 s by default when
        # the DefaultTolerationSeconds admission gave them one), then go.
        for _ in range(7):
            await asyncio.sleep(1.5)
            if len(await _live(client)) == 3 and all(
                p["spec"].get("nodeName") != survivor for p in await _live(client)
            ):
                break
            clock.advance(60)
        await _running_on(client, 3, avoiding=survivor)
