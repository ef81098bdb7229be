"""What real clients' own end-to-end suites expect of kube-apiserver 1.32 (Secret data with line
breaks, Service status, resourceVersion on create, JSON's trailing newline, optional serviceName,
the default kubernetes Service, bad tokens, the no-op PUT): each as a user observes it on the wire
or through the official client."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
import yaml
from kubernetes import client

from setpoint.cluster.apiserver import kubernetes_service
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage.memory import MemoryStorage
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.raw_api import RawAPI, raw_api


def _stateful_set(name: str, service_name: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "replicas": 0,
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    }
    if service_name is not None:
        spec["serviceName"] = service_name
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": spec,
    }


async def test_secret_data_wrapped_over_lines_is_decoded_as_go_does(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/secrets"

    created = await api.request(
        "POST", path, {"metadata": {"name": "s"}, "data": {"k": "aGVs\nbG8="}}
    )
    crlf = await api.request(
        "POST", path, {"metadata": {"name": "t"}, "data": {"k": "aGVs\r\nbG8=\r\n"}}
    )
    bad = await api.request("POST", path, {"metadata": {"name": "u"}, "data": {"k": "aGV\nz!"}})
    binary = await api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"metadata": {"name": "b"}, "binaryData": {"k": "aGVs\nbG8="}},
    )

    assert created.status == 201, created.body
    assert created.body["data"] == {"k": "aGVsbG8="}
    assert crlf.status == 201 and crlf.body["data"] == {"k": "aGVsbG8="}
    assert bad.status == 422
    assert binary.status == 201 and binary.body["binaryData"] == {"k": "aGVsbG8="}


async def test_service_status_is_an_empty_load_balancer(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/services"
    body = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}

    created = await api.request("POST", path, body)
    read = await api.request("GET", f"{path}/web")
    patched = await api.request(
        "PATCH",
        f"{path}/web",
        {"metadata": {"labels": {"a": "b"}}},
        content_type="application/merge-patch+json",
    )
    status_put = await api.request("PUT", f"{path}/web/status", {**patched.body, "status": {}})

    assert created.status == 201
    for reply in (created, read, patched, status_put):
        assert reply.body["status"] == {"loadBalancer": {}}, reply.body


async def test_a_non_numeric_resource_version_on_create_is_cleared(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"

    word = await api.request("POST", path, {"metadata": {"name": "a", "resourceVersion": "abc"}})
    zero = await api.request("POST", path, {"metadata": {"name": "b", "resourceVersion": "0"}})
    number = await api.request("POST", path, {"metadata": {"name": "c", "resourceVersion": "12"}})

    assert word.status == 201, word.body
    assert word.body["metadata"]["resourceVersion"] not in ("", "abc")
    assert zero.status == 201
    assert number.status == 400
    assert number.body["message"] == "resourceVersion should not be set on objects to be created"


async def test_json_bodies_end_with_a_newline_as_go_encoder_writes_them(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"

    created = await api.request("POST", path, {"metadata": {"name": "n"}})
    conflict = await api.request("POST", path, {"metadata": {"name": "n"}})
    listed = await api.request("GET", path)
    discovery = await api.request("GET", "/api/v1")

    assert created.raw.endswith(b"}\n") and created.raw.count(b"\n") == 1
    assert conflict.status == 409 and conflict.raw.endswith(b'"code":409}\n')
    assert listed.raw.endswith(b"}\n")
    assert discovery.raw.endswith(b"}\n")


async def test_stateful_set_service_name_is_optional(api: RawAPI, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/statefulsets"

    without = await api.request("POST", path, _stateful_set("plain", None))
    with_name = await api.request("POST", path, _stateful_set("governed", "governed"))

    assert without.status == 201, without.body
    assert "serviceName" not in without.body["spec"]
    assert with_name.status == 201


async def test_the_kubernetes_service_and_its_endpoint_slice_exist(
    api: RawAPI, local_cluster: BackgroundCluster
) -> None:
    service = await api.request("GET", "/api/v1/namespaces/default/services/kubernetes")
    slice_ = await api.request(
        "GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
    )
    endpoints = await api.request("GET", "/api/v1/namespaces/default/endpoints/kubernetes")

    port = int(local_cluster.https_url.rsplit(":", 1)[1])
    assert service.status == 200
    assert service.body["metadata"]["labels"] == {
        "component": "apiserver",
        "provider": "kubernetes",
    }
    spec = service.body["spec"]
    assert (spec["type"], spec["clusterIP"]) == ("ClusterIP", "10.96.0.1")
    assert spec["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]
    assert "selector" not in spec
    assert slice_.status == 200
    assert slice_.body["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert slice_.body["addressType"] == "IPv4"
    assert slice_.body["endpoints"] == [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]
    assert slice_.body["ports"] == [{"name": "https", "port": port, "protocol": "TCP"}]
    assert endpoints.body["subsets"][0]["ports"] == [
        {"name": "https", "port": port, "protocol": "TCP"}
    ]


@pytest.mark.parametrize("path", ["/version", "/healthz", "/readyz", "/api/v1/namespaces"])
async def test_an_invalid_bearer_token_is_401_on_every_path(
    local_cluster: BackgroundCluster, path: str
) -> None:
    async with raw_api(local_cluster.url, "not-a-valid-token") as bad:
        reply = await bad.request("GET", path)
    async with raw_api(local_cluster.url, local_cluster.token) as good:
        admitted = await good.request("GET", path)

    assert reply.status == 401
    assert reply.body["reason"] == "Unauthorized"
    assert admitted.status == 200


async def test_version_without_credentials_is_public(local_cluster: BackgroundCluster) -> None:
    async with aiohttp.ClientSession() as session, session.get(local_cluster.url + "/version") as r:
        assert r.status == 200


def test_a_no_op_replace_from_the_official_client_keeps_the_resource_version(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    core_v1.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="same"), data={"a": "1"})
    )
    read = core_v1.read_namespaced_config_map("same", namespace)

    replaced = core_v1.replace_namespaced_config_map("same", namespace, read)

    assert replaced.metadata.resource_version == read.metadata.resource_version
    assert replaced.metadata.managed_fields[0].time == read.metadata.managed_fields[0].time


async def test_managed_fields_times_with_an_offset_count_as_the_same_time(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = (
        await api.request("POST", path, {"metadata": {"name": "t"}, "data": {"a": "1"}})
    ).body
    sent = yaml.safe_load(yaml.safe_dump(created))
    stamp = sent["metadata"]["managedFields"][0]["time"]
    sent["metadata"]["managedFields"][0]["time"] = stamp.replace("Z", "+00:00")

    replaced = await api.request("PUT", f"{path}/t", sent)

    assert replaced.status == 200
    assert replaced.body["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert replaced.body["metadata"]["managedFields"][0]["time"] == stamp


async def test_the_kubernetes_service_follows_the_port_of_a_restarted_server() -> None:
    server = APIServer(MemoryStorage(), https_port=None)
    await server.start()
    try:
        first = server.port
        await kubernetes_service.reconcile(
            server.registry, server.operations, "127.0.0.1", first + 1
        )
        services = server.registry.get("", "v1", "services")
        slices = server.registry.get("discovery.k8s.io", "v1", "endpointslices")
        assert services is not None and slices is not None
        service = json.loads(await server.operations.get(services, "default", "kubernetes"))
        slice_ = json.loads(await server.operations.get(slices, "default", "kubernetes"))
    finally:
        await server.stop()

    assert service["spec"]["ports"][0]["targetPort"] == first + 1
    assert service["spec"]["clusterIP"] == "10.96.0.1"
    assert slice_["ports"] == [{"name": "https", "port": first + 1, "protocol": "TCP"}]
