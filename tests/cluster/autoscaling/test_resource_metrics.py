"""The resource metrics API (``metrics.k8s.io/v1beta1``): what ``kubectl top`` and the HPA read,
from simulated pods' declared usage and from ``--run-pods`` processes' real usage."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI, raw_api

#: A Python a pod can run: --run-pods sandboxes see /usr, not this virtualenv.
POD_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

METRICS = "/apis/metrics.k8s.io/v1beta1"


def _pod(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": name},
            "annotations": {
                "setpoint.dev/simulated-cpu": cpu,
                "setpoint.dev/simulated-memory": memory,
            },
        },
        "spec": {
            "containers": [
                {"name": "a", "image": "busybox"},
                {"name": "b", "image": "busybox"},
            ]
        },
    }


@pytest.fixture
async def api(local_cluster: BackgroundCluster) -> AsyncIterator[RawAPI]:
    async with raw_api(local_cluster.url, local_cluster.token) as client_:
        yield client_


async def _running(api: RawAPI, namespace: str, name: str) -> None:
    async def running() -> bool:
        pod = await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
        return bool((pod.body.get("status") or {}).get("phase") == "Running")

    await eventually(running, f"pod {name} running")


async def test_pod_and_node_metrics_of_simulated_pods(api: RawAPI, namespace: str) -> None:
    discovery = await api.request("GET", f"{METRICS}")
    assert {r["name"]: r["verbs"] for r in discovery.body["resources"]} == {
        "nodes": ["get", "list"],
        "pods": ["get", "list"],
    }
    pods = f"/api/v1/namespaces/{namespace}/pods"
    assert (await api.request("POST", pods, _pod("busy", "250m", "64Mi"))).status == 201
    await _running(api, namespace, "busy")
    reply = await api.request("GET", f"{METRICS}/namespaces/{namespace}/pods/busy")
    assert reply.status == 200, reply.body
    metrics = reply.body
    assert (metrics["kind"], metrics["apiVersion"]) == ("PodMetrics", "metrics.k8s.io/v1beta1")
    assert metrics["metadata"]["labels"] == {"app": "busy"}
    assert metrics["window"] == "15s"
    assert metrics["containers"] == [
        {"name": "a", "usage": {"cpu": "250000000n", "memory": "65536Ki"}},
        {"name": "b", "usage": {"cpu": "250000000n", "memory": "65536Ki"}},
    ]
    listed = await api.request(
        "GET", f"{METRICS}/namespaces/{namespace}/pods?labelSelector=app%3Dbusy"
    )
    assert [item["metadata"]["name"] for item in listed.body["items"]] == ["busy"]
    assert listed.body["kind"] == "PodMetricsList"
    none = await api.request("GET", f"{METRICS}/namespaces/{namespace}/pods?labelSelector=app%3Dno")
    assert none.body["items"] == []
    missing = await api.request("GET", f"{METRICS}/namespaces/{namespace}/pods/nothing")
    assert (missing.status, missing.body["message"]) == (
        404,
        'podmetrics.metrics.k8s.io "nothing" not found',
    )
    nodes = await api.request("GET", f"{METRICS}/nodes")
    (node,) = nodes.body["items"]
    assert node["kind"] == "NodeMetrics"
    assert int(node["usage"]["cpu"].removesuffix("n")) >= 500_000_000
    refused = await api.request("DELETE", f"{METRICS}/nodes/{node['metadata']['name']}")
    assert refused.status == 405


def test_kubectl_top(local_cluster: BackgroundCluster, namespace: str, tmp_path: Path) -> None:
    kubectl = Kubectl(local_cluster.kubeconfig_path, tmp_path / "cache")
    kubectl.run(
        "run",
        "topped",
        "-n",
        namespace,
        "--image=busybox",
        "--annotations=setpoint.dev/simulated-cpu=300m",
        "--annotations=setpoint.dev/simulated-memory=32Mi",
    )
    kubectl.run("wait", "-n", namespace, "pod/topped", "--for=condition=Ready", "--timeout=30s")
    top = kubectl.run("top", "pod", "topped", "-n", namespace).stdout.splitlines()
    assert top[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert top[1].split() == ["topped", "300m", "32Mi"]
    nodes = kubectl.run("top", "node").stdout
    assert "setpoint-node" in nodes
    # kubectl get of the metrics kinds shows metrics-server's Table.
    got = kubectl.run("get", "pods.metrics.k8s.io", "topped", "-n", namespace).stdout
    header, row = got.splitlines()
    assert header.split() == ["NAME", "CPU", "MEMORY", "WINDOW"]
    assert row.split()[:3] == ["topped", "300m", "32Mi"]


async def test_run_pods_report_their_processes_real_usage(tmp_path: Path) -> None:
    # One process burns a CPU and holds ~30 MB; its usage comes from /proc.
    burn = "x = bytearray(30_000_000)\nwhile True:\n    pass\n"
    body = {
        "metadata": {"name": "burner"},
        "spec": {
            "containers": [{"name": "burn", "image": "python", "command": [POD_PYTHON, "-c", burn]}]
        },
    }
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await cluster.create_namespace("burn")
        assert (await api.request("POST", "/api/v1/namespaces/burn/pods", body)).status == 201
        await _running(api, "burn", "burner")

        async def busy() -> dict[str, Any] | None:
            reply = await api.request("GET", f"{METRICS}/namespaces/burn/pods/burner")
            if reply.status != 200:
                return None
            usage = reply.body["containers"][0]["usage"]
            cpu = int(usage["cpu"].removesuffix("n"))
            memory = int(usage["memory"].removesuffix("Ki")) * 1024
            return usage if cpu > 300_000_000 and memory > 30_000_000 else None

        await eventually(busy, "the burner's CPU and memory in the metrics API")
        await api.request("DELETE", "/api/v1/namespaces/burn/pods/burner?gracePeriodSeconds=0")


async def test_a_stopped_nodes_pods_and_node_have_no_metrics() -> None:
    # metrics-server cannot scrape a kubelet that is down: the node and its pods go unreported.
    async with (
        LocalCluster(nodes=2, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        pod = _pod("pinned", "100m", "10Mi")
        pod["spec"]["nodeName"] = "setpoint-node-1"
        assert (await api.request("POST", "/api/v1/namespaces/default/pods", pod)).status == 201
        await _running(api, "default", "pinned")
        path = f"{METRICS}/namespaces/default/pods/pinned"
        assert (await api.request("GET", path)).status == 200
        stop = {"metadata": {"annotations": {"setpoint.dev/kubelet": "stopped"}}}
        stopped = await api.request(
            "PATCH",
            "/api/v1/nodes/setpoint-node-1",
            stop,
            content_type="application/merge-patch+json",
        )
        assert stopped.status == 200

        async def gone() -> bool:
            return (await api.request("GET", path)).status == 404

        await eventually(gone, "the pod's metrics gone")
        nodes = (await api.request("GET", f"{METRICS}/nodes")).body["items"]
        assert [n["metadata"]["name"] for n in nodes] == ["setpoint-node-0"]
        missing = await api.request("GET", f"{METRICS}/nodes/setpoint-node-1")
        assert missing.status == 404
        listed = (await api.request("GET", f"{METRICS}/namespaces/default/pods")).body["items"]
        assert listed == []
