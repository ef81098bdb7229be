"""A durable cluster restarted: the kubelet adopts its running pods, the namespace controller
resumes a namespace that was terminating."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"


async def running_pod(api: RawAPI, name: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        reply = await api.request("GET", f"{PODS}/{name}")
        body: dict[str, Any] = reply.body
        return body if (body.get("status") or {}).get("phase") == "Running" else None

    return await eventually(check, f"pod {name} Running")


async def test_a_restarted_cluster_keeps_its_pods_and_finishes_namespaces(tmp_path: Path) -> None:
    async with (
        LocalCluster(data_dir=tmp_path) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        body = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "a", "image": "x"}]}}
        await api.request("POST", PODS, body)
        before = await running_pod(api, "web")
        await api.request("POST", "/api/v1/namespaces", {"metadata": {"name": "held"}})
        held = {"metadata": {"name": "h", "finalizers": ["example.com/hold"]}}
        await api.request("POST", "/api/v1/namespaces/held/configmaps", held)
        await api.request("DELETE", "/api/v1/namespaces/held")

    async with (
        LocalCluster(data_dir=tmp_path) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        after = await running_pod(api, "web")
        assert after["status"]["podIP"] == before["status"]["podIP"]
        assert after["status"]["startTime"] == before["status"]["startTime"]

        await api.request(
            "PATCH",
            "/api/v1/namespaces/held/configmaps/h",
            {"metadata": {"finalizers": None}},
            content_type="application/merge-patch+json",
        )

        async def namespace_gone() -> bool:
            return (await api.request("GET", "/api/v1/namespaces/held")).status == 404

        await eventually(namespace_gone, "the terminating namespace finalized after a restart")
        await api.request("DELETE", f"{PODS}/web")

        async def pod_gone() -> bool:
            return (await api.request("GET", f"{PODS}/web")).status == 404

        await eventually(pod_gone, "the adopted pod removed by the kubelet")
