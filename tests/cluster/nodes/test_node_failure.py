"""A node fails and comes back (day-2 operations): its kubelet stops, the node lifecycle
controller marks it Unknown and taints it, its pods are evicted and replaced on the other node;
started again, it is Ready and untainted, and its evicted pods are gone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from setpoint.api.clock import FakeClock
from setpoint.cli.main import cli
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

NODES = "/api/v1/nodes"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def two_nodes() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock()
    async with (
        LocalCluster(clock=clock, nodes=2, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        yield clock, api


async def _set_kubelet(api: RawAPI, node: str, value: str | None) -> None:
    reply = await api.request(
        "PATCH",
        f"{NODES}/{node}",
        {"metadata": {"annotations": {"setpoint.dev/kubelet": value}}},
        content_type="application/merge-patch+json",
    )
    assert reply.status == 200, reply.body


def _ready(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "Ready")


async def _pods(api: RawAPI) -> list[dict[str, Any]]:
    return list((await api.request("GET", f"{PODS}?labelSelector=app%3Dweb")).body["items"])


async def test_a_stopped_node_goes_unknown_and_its_pods_move(
    two_nodes: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = two_nodes
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }
    reply = await api.request("POST", "/apis/apps/v1/namespaces/default/deployments", deployment)
    assert reply.status == 201, reply.body

    async def running() -> list[dict[str, Any]] | None:
        pods = await _pods(api)
        ok = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        return pods if len(ok) == 2 and len(pods) == 2 else None

    pods = await eventually(running, "two running pods")
    failing = pods[0]["spec"]["nodeName"]
    on_failing = {p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == failing}
    await _set_kubelet(api, failing, "stopped")
    # Within the grace period (50 s) nothing happens; heartbeats of the other node go on.
    clock.advance(40)
    node = (await api.request("GET", f"{NODES}/{failing}")).body
    assert _ready(node)["status"] == "True"
    clock.advance(20)

    async def unknown() -> dict[str, Any] | None:
        node = (await api.request("GET", f"{NODES}/{failing}")).body
        tainted = {(t["key"], t["effect"]) for t in node["spec"].get("taints") or []}
        if _ready(node)["status"] != "Unknown" or len(tainted) < 2:
            return None
        return node

    node = await eventually(unknown, "the node Unknown and tainted")
    ready = _ready(node)
    assert (ready["reason"], ready["message"]) == (
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    healthy = next(
        n["metadata"]["name"]
        for n in (await api.request("GET", NODES)).body["items"]
        if n["metadata"]["name"] != failing
    )
    assert _ready((await api.request("GET", f"{NODES}/{healthy}")).body)["status"] == "True"

    # Its pods tolerate an unreachable node for 300 s (the DefaultTolerationSeconds admission
    # gave them that), then are evicted (they stay Terminating, as their kubelet is gone), and
    # the ReplicaSet replaces them on the healthy node.
    clock.advance(301)

    async def moved() -> list[dict[str, Any]] | None:
        pods = await _pods(api)
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        running_elsewhere = [
            p
            for p in live
            if p["spec"].get("nodeName") == healthy and p["status"].get("phase") == "Running"
        ]
        return pods if len(running_elsewhere) == 2 else None

    pods = await eventually(moved, "two pods running on the healthy node")
    evicted = [p for p in pods if p["metadata"]["name"] in on_failing]
    assert evicted and all(p["metadata"].get("deletionTimestamp") for p in evicted)
    target = next(c for c in evicted[0]["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["reason"], target["message"]) == (
        "DeletionByTaintManager",
        "Taint manager: deleting due to NoExecute taint",
    )
    assert (
        next(c for c in evicted[0]["status"]["conditions"] if c["type"] == "Ready")["status"]
        == "False"
    )

    # Back again: Ready, untainted, and the evicted pods are finally deleted by its kubelet.
    await _set_kubelet(api, failing, None)

    async def recovered() -> bool:
        node = (await api.request("GET", f"{NODES}/{failing}")).body
        return _ready(node)["status"] == "True" and not node["spec"].get("taints")

    await eventually(recovered, "the node Ready and untainted")
    clock.advance(31)

    async def evicted_gone() -> bool:
        names = {p["metadata"]["name"] for p in await _pods(api)}
        return not (names & on_failing)

    await eventually(evicted_gone, "the evicted pods deleted")


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_setpoint_cluster_node_stop_and_start(tmp_path: Path) -> None:
    cluster = BackgroundCluster(in_memory=True, nodes=2).start()
    try:
        kubeconfig = str(cluster.kubeconfig_path)
        result = _cli("cluster", "node", "stop", "setpoint-node-1", "--kubeconfig", kubeconfig)
        assert result.exit_code == 0, result.output
        assert result.output == "node/setpoint-node-1 kubelet stopped\n"
        result = _cli("cluster", "node", "start", "setpoint-node-1", "--kubeconfig", kubeconfig)
        assert result.output == "node/setpoint-node-1 kubelet started\n"
        missing = _cli("cluster", "node", "stop", "nope", "--kubeconfig", kubeconfig)
        assert missing.exit_code == 1
        assert 'nodes "nope" not found' in missing.output
        added = _cli("cluster", "node", "add", "extra", "--kubeconfig", kubeconfig)
        assert added.output == "node/extra added\n"
        again = _cli("cluster", "node", "add", "extra", "--kubeconfig", kubeconfig)
        assert again.exit_code == 1
        assert 'nodes "extra" already exists' in again.output
        removed = _cli("cluster", "node", "remove", "extra", "--kubeconfig", kubeconfig)
        assert removed.output == "node/extra removed\n"
    finally:
        cluster.stop()


async def test_an_out_of_service_node_lets_its_terminating_pods_go(
    two_nodes: tuple[FakeClock, RawAPI],
) -> None:
    # A node that is down for good: an administrator taints it out-of-service, and the pod
    # garbage collector deletes the pods its dead kubelet would never finish deleting.
    clock, api = two_nodes
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stranded"},
        "spec": {
            "nodeName": "setpoint-node-0",
            "containers": [{"name": "main", "image": "nginx"}],
            "terminationGracePeriodSeconds": 30,
        },
    }
    assert (await api.request("POST", PODS, pod)).status == 201

    async def running() -> bool:
        found = (await api.request("GET", f"{PODS}/stranded")).body
        return bool(found.get("status", {}).get("phase") == "Running")

    await eventually(running, "the pod running")
    await _set_kubelet(api, "setpoint-node-0", "stopped")
    clock.advance(60)

    async def unknown() -> bool:
        node = (await api.request("GET", f"{NODES}/setpoint-node-0")).body
        return _ready(node)["status"] == "Unknown"

    await eventually(unknown, "the node Unknown")
    await api.request("DELETE", f"{PODS}/stranded")
    clock.advance(60)  # past the grace period: its kubelet is gone, so it stays Terminating
    found = (await api.request("GET", f"{PODS}/stranded")).body
    assert found["metadata"].get("deletionTimestamp")
    node = (await api.request("GET", f"{NODES}/setpoint-node-0")).body
    taints = [*(node["spec"].get("taints") or [])]
    taints.append({"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"})
    reply = await api.request(
        "PATCH",
        f"{NODES}/setpoint-node-0",
        {"spec": {"taints": taints}},
        content_type="application/merge-patch+json",
    )
    assert reply.status == 200, reply.body

    async def gone() -> bool:
        return (await api.request("GET", f"{PODS}/stranded")).status == 404

    await eventually(gone, "the terminating pod collected")


async def test_a_node_joins_and_leaves(two_nodes: tuple[FakeClock, RawAPI]) -> None:
    # A Node created with the simulated-node label gets a kubelet of its own; deleting it takes
    # the machine away, and the pod garbage collector collects what was bound there.
    clock, api = two_nodes
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "joined",
            "labels": {"kubernetes.io/hostname": "joined", "setpoint.dev/simulated-node": "true"},
        },
    }
    assert (await api.request("POST", NODES, node)).status == 201

    async def ready() -> bool:
        found = (await api.request("GET", f"{NODES}/joined")).body
        conditions = (found.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    await eventually(ready, "the joined node Ready")
    lease = await api.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/joined"
    )
    assert lease.status == 200
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "there"},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": "joined"},
            "containers": [{"name": "main", "image": "nginx"}],
        },
    }
    assert (await api.request("POST", PODS, pod)).status == 201

    async def running_there() -> bool:
        found = (await api.request("GET", f"{PODS}/there")).body
        return bool(
            found["spec"].get("nodeName") == "joined"
            and found.get("status", {}).get("phase") == "Running"
        )

    await eventually(running_there, "the pod running on the joined node")
    assert (await api.request("DELETE", f"{NODES}/joined")).status == 200
    clock.advance(41)  # the pod garbage collector's quarantine of pods on missing nodes

    async def collected() -> bool:
        return (await api.request("GET", f"{PODS}/there")).status == 404

    await eventually(collected, "the pod of the removed node collected")
