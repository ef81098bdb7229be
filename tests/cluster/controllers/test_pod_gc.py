"""The pod garbage collector on the fake clock: a pod bound to a missing node is failed and
deleted after the quarantine, not before; finished pods beyond the threshold go oldest first
(pods created in order, so creation time then name is creation order)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.controllers.framework.manager import ControllerManager
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


async def settle() -> None:
    """Let the controllers run what is due now (nothing else happens without the clock)."""
    for _ in range(50):
        await asyncio.sleep(0.01)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def api(clock: FakeClock) -> AsyncIterator[RawAPI]:
    async with LocalCluster(clock=clock) as cluster, raw_api(cluster.url, cluster.token) as api:
        yield api


async def test_a_pod_on_a_missing_node_is_failed_then_deleted_after_the_quarantine(
    api: RawAPI, clock: FakeClock
) -> None:
    created = await api.request("POST", PODS, pod("orphan", nodeName="vanished-node"))
    assert created.status == 201, created.body
    await api.request("POST", PODS, pod("kept"))
    rv = created.body["metadata"]["resourceVersion"]
    await settle()
    clock.advance(39)
    await settle()
    assert (await api.request("GET", f"{PODS}/orphan")).status == 200  # still quarantined
    clock.advance(2)

    async def gone() -> bool:
        return (await api.request("GET", f"{PODS}/orphan")).status == 404

    await eventually(gone, "the orphaned pod deleted")
    events = await api.watch(
        f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1&fieldSelector=metadata.name=orphan"
    )
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    last = events[-1]["object"]
    assert last["status"]["phase"] == "Failed"
    (condition,) = [c for c in last["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True",
        "DeletionByPodGC",
        "PodGC: node no longer exists",
    )
    (entry,) = [e for e in last["metadata"]["managedFields"] if e.get("subresource") == "status"]
    assert entry["manager"] == "PodGC"
    kept = await api.request("GET", f"{PODS}/kept")
    assert kept.status == 200 and kept.body["spec"]["nodeName"] == "setpoint-node"


async def test_finished_pods_beyond_the_threshold_are_deleted_oldest_first() -> None:
    clock = FakeClock()
    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        options = ControllerOptions(
            clock=clock, terminated_pod_gc_threshold=2, simulated_run_seconds=1.0
        )
        manager = ControllerManager(cluster.server, options)
        await manager.start()
        try:
            async with raw_api(cluster.url, cluster.token) as api:
                for index in range(4):
                    body = pod(f"done-{index}", restartPolicy="Never")
                    body["spec"]["containers"][0]["command"] = ["true"]
                    assert (await api.request("POST", PODS, body)).status == 201

                async def finished() -> bool:
                    clock.advance(0.5)  # the simulated runs end on the cluster clock
                    items = (await api.request("GET", PODS)).body["items"]
                    return len(items) == 4 and all(
                        i["status"].get("phase") == "Succeeded" for i in items
                    )

                await eventually(finished, "four finished pods")
                clock.advance(20)  # the sweep

                async def left() -> list[str] | None:
                    items = (await api.request("GET", PODS)).body["items"]
                    found = sorted(i["metadata"]["name"] for i in items)
                    return found if len(found) == 2 else None

                # Created in the same second or not: the oldest, then by name, go first.
                assert await eventually(left, "two pods left") == ["done-2", "done-3"]
        finally:
            await manager.stop()
