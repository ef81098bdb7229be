"""Several nodes: each registered and Ready, pods spread over them by the scheduler."""

from __future__ import annotations

from typing import Any

from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import raw_api

PODS = "/api/v1/namespaces/default/pods"


async def test_pods_spread_over_three_nodes() -> None:
    async with LocalCluster(nodes=3) as cluster, raw_api(cluster.url, cluster.token) as api:
        nodes = (await api.request("GET", "/api/v1/nodes")).body["items"]
        names = sorted(n["metadata"]["name"] for n in nodes)
        assert names == ["setpoint-node-0", "setpoint-node-1", "setpoint-node-2"]
        addresses = {n["status"]["addresses"][0]["address"] for n in nodes}
        assert len(addresses) == 3
        for index in range(3):
            body = {"metadata": {"name": f"p{index}"}, "spec": {"containers": [{"name": "a"}]}}
            body["spec"]["containers"][0]["image"] = "x"
            await api.request("POST", PODS, body)

        async def placed() -> list[Any] | None:
            items = (await api.request("GET", PODS)).body["items"]
            running = [p for p in items if (p.get("status") or {}).get("phase") == "Running"]
            return running if len(running) == 3 else None

        running = await eventually(placed, "three pods Running")
        assert sorted(p["spec"]["nodeName"] for p in running) == names
        host_ips = {p["status"]["hostIP"] for p in running}
        assert host_ips == addresses
