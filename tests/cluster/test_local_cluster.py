"""``LocalCluster`` (in-process) and the pytest plugin's fixtures."""

from __future__ import annotations

import aiohttp
import pytest
import yaml

from setpoint.cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster


async def test_local_cluster_serves_until_exit(tmp_path) -> None:
    async with LocalCluster(in_memory=True) as cluster:
        assert cluster.url.startswith("http://127.0.0.1:")
        headers = {"Authorization": f"Bearer {cluster.token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as session,
            session.get(cluster.url + "/api/v1/namespaces") as response,
        ):
            names = [i["metadata"]["name"] for i in (await response.json())["items"]]
        assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
        kubeconfig = cluster.kubeconfig_path
        assert kubeconfig.exists()
        url = cluster.url
    assert not kubeconfig.exists()  # a temporary kubeconfig goes with the cluster
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(url + "/healthz")


async def test_local_cluster_with_data_dir_keeps_objects(tmp_path) -> None:
    async with LocalCluster(in_memory=False, data_dir=tmp_path) as cluster:
        headers = {"Authorization": f"Bearer {cluster.token}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            body = {"metadata": {"name": "kept"}, "data": {"a": "1"}}
            async with session.post(
                cluster.url + "/api/v1/namespaces/default/configmaps", json=body
            ) as response:
                rv = (await response.json())["metadata"]["resourceVersion"]
    async with LocalCluster(in_memory=False, data_dir=tmp_path) as cluster:
        headers = {"Authorization": f"Bearer {cluster.token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as session,
            session.get(cluster.url + "/api/v1/namespaces/default/configmaps/kept") as response,
        ):
            assert (await response.json())["metadata"]["resourceVersion"] == rv


def test_plugin_cluster_and_kubeconfig(local_cluster: BackgroundCluster) -> None:
    config = yaml.safe_load(local_cluster.kubeconfig_path.read_text())
    assert config["current-context"] == "setpoint"
    assert [c["name"] for c in config["clusters"]] == ["setpoint"]
    assert config["users"][0] == {"name": "setpoint", "user": {"token": local_cluster.token}}
    assert config["contexts"][0]["context"] == {"cluster": "setpoint", "user": "setpoint"}
    assert local_cluster.url.startswith("http://127.0.0.1:")


async def test_plugin_namespace_exists_and_is_active(
    local_cluster: BackgroundCluster, namespace: str
) -> None:
    headers = {"Authorization": f"Bearer {local_cluster.token}"}
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.get(f"{local_cluster.url}/api/v1/namespaces/{namespace}") as response,
    ):
        body = await response.json()
    assert body["status"]["phase"] == "Active"
