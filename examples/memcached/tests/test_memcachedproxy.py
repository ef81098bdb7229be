"""MemcachedProxy: mcrouter configured from the backend pods, through the built-in controllers.

The Memcached operator makes the pods and the Service; the Endpoints controller lists the ready
pods; the proxy reconcile renders a content-addressed ConfigMap and points its Deployment at it;
the Deployment controller rolls the proxy to a new ReplicaSet and deletes the old one, and the
garbage collector deletes the old ConfigMap with it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from memcached_operator.api.v1alpha1 import Memcached, MemcachedProxy
from memcached_operator.controllers import mcrouter
from memcached_operator.controllers.memcachedproxy import PROXY_LABEL
from memcached_operator.operator import op

from setpoint import Client, kinds
from setpoint.client import Invalid
from setpoint.testing import install_crds, run_operator, wait_for

TIMEOUT = 60  # seconds: an upper bound on a loaded machine, not an expectation
API_VERSION = "cache.example.com/v1alpha1"


def proxy(namespace: str, port: int | str = 11211, type: str = "sharded") -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "MemcachedProxy",
        "metadata": {"name": "proxy", "namespace": namespace},
        "spec": {"rules": {"type": type, "service": {"name": "cache", "port": port}}},
    }


def ready(obj: MemcachedProxy) -> bool:
    return (
        obj.status is not None
        and obj.metadata.generation == obj.status.observed_generation
        and any(c["type"] == "Ready" and c["status"] == "True" for c in obj.status.conditions)
    )


async def wait_ready(client: Client, namespace: str, servers: int) -> MemcachedProxy:
    result: MemcachedProxy = await wait_for(
        lambda: client.get(MemcachedProxy, "proxy", namespace=namespace),
        lambda obj: ready(obj) and len(obj.status.servers) == servers,
        timeout=TIMEOUT,
        what=f"the proxy Ready with {servers} servers",
    )
    return result


async def scale_memcached(client: Client, namespace: str, size: int) -> None:
    await client.patch(
        API_VERSION, "Memcached", "cache", {"spec": {"size": size}}, namespace=namespace
    )


async def config_maps(client: Client, namespace: str) -> dict[str, dict[str, Any]]:
    listed = await client.list(
        *kinds.ConfigMap, namespace=namespace, label_selector={PROXY_LABEL: "proxy"}
    )
    return {cm["metadata"]["name"]: cm for cm in listed}


async def replica_set_of(client: Client, namespace: str, config_map: str) -> dict[str, Any]:
    """The proxy Deployment's ReplicaSet whose pods mount `config_map`."""
    for rs in await client.list(*kinds.ReplicaSet, namespace=namespace):
        volumes = rs["spec"]["template"]["spec"].get("volumes") or []
        if any((v.get("configMap") or {}).get("name") == config_map for v in volumes):
            return dict(rs)
    raise AssertionError(f"no ReplicaSet mounts {config_map}")


async def memcached_pod_ips(client: Client, namespace: str) -> list[str]:
    pods = await client.list(
        *kinds.Pod, namespace=namespace, label_selector={"app.kubernetes.io/instance": "cache"}
    )
    return [pod["status"]["podIP"] for pod in pods if "deletionTimestamp" not in pod["metadata"]]


async def test_the_proxy_follows_the_pool(
    client: Client, kubeconfig: str, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCACHED_IMAGE", "memcached:1.6.26-alpine3.19")
    await install_crds(client, Memcached, MemcachedProxy)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(
            {
                "apiVersion": API_VERSION,
                "kind": "Memcached",
                "metadata": {"name": "cache", "namespace": namespace},
                "spec": {"size": 2, "containerPort": 11211},
            }
        )
        await client.create(proxy(namespace))

        # Two backend pods: a ConfigMap with a pool of their podIP:port, mounted by the proxy.
        first = await wait_ready(client, namespace, servers=2)
        assert first.status is not None and first.status.config_map is not None
        name_of_two = first.status.config_map
        assert (
            name_of_two.startswith("proxy-config-") and len(name_of_two) == len("proxy-config-") + 5
        )
        config = json.loads(
            (await config_maps(client, namespace))[name_of_two]["data"]["config.json"]
        )
        ips = sorted(await memcached_pod_ips(client, namespace))
        pool = f"{namespace}-cache-memcached"
        assert sorted(config["pools"][pool]["servers"]) == sorted(f"{ip}:11211" for ip in ips)
        assert config["route"] == f"PoolRoute|{pool}"
        deployment = await client.get(*kinds.Deployment, "proxy-mcrouter", namespace=namespace)
        template = deployment["spec"]["template"]["spec"]
        assert template["volumes"][0]["configMap"]["name"] == name_of_two
        assert template["containers"][0]["args"][0] == "--config-file=/etc/mcrouter/config.json"
        # The ConfigMap now belongs to the ReplicaSet that mounts it.
        rs_of_two = await replica_set_of(client, namespace, name_of_two)
        await wait_for(
            lambda: config_maps(client, namespace),
            lambda found: (
                [ref["uid"] for ref in found[name_of_two]["metadata"]["ownerReferences"]]
                == [rs_of_two["metadata"]["uid"]]
            ),
            timeout=TIMEOUT,
            what="the ConfigMap owned by its ReplicaSet",
        )

        # Three pods: a new ConfigMap, a new ReplicaSet; the old ones are garbage-collected.
        await scale_memcached(client, namespace, 3)
        second = await wait_ready(client, namespace, servers=3)
        assert second.status is not None and second.status.config_map is not None
        name_of_three = second.status.config_map
        assert name_of_three != name_of_two
        rs_of_three = await replica_set_of(client, namespace, name_of_three)
        assert rs_of_three["metadata"]["uid"] != rs_of_two["metadata"]["uid"]
        async with asyncio.timeout(TIMEOUT):
            await client.wait_for(
                *kinds.ReplicaSet,
                rs_of_two["metadata"]["name"],
                lambda obj: obj is None or obj["metadata"]["uid"] != rs_of_two["metadata"]["uid"],
                namespace=namespace,
            )
            await client.wait_for(
                *kinds.ConfigMap, name_of_two, lambda obj: obj is None, namespace=namespace
            )

        # Back to the same two pods: the same config, hence the same ConfigMap name. (Which pod
        # a ReplicaSet removes first among equally ready ones is not fixed: pick it, as a user
        # would, with the pod-deletion-cost annotation.)
        pods = await client.list(
            *kinds.Pod, namespace=namespace, label_selector={"app.kubernetes.io/instance": "cache"}
        )
        (added,) = [pod for pod in pods if pod["status"]["podIP"] not in ips]
        await client.patch(
            added,
            {"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "-100"}}},
        )
        await scale_memcached(client, namespace, 2)
        third = await wait_ready(client, namespace, servers=2)
        assert third.status is not None
        assert third.status.config_map == name_of_two
        await wait_for(
            lambda: config_maps(client, namespace),
            lambda found: set(found) == {name_of_two},
            timeout=TIMEOUT,
            what="only the current ConfigMap left",
        )

        # A reconcile with nothing changed creates nothing: naming the Service port by name
        # instead of number selects the same port, so the same config.
        before = await config_maps(client, namespace)
        deployment = await client.get(*kinds.Deployment, "proxy-mcrouter", namespace=namespace)
        await client.patch(
            API_VERSION,
            "MemcachedProxy",
            "proxy",
            {"spec": {"rules": {"service": {"port": "memcached"}}}},
            namespace=namespace,
        )
        resynced = await wait_for(
            lambda: client.get(MemcachedProxy, "proxy", namespace=namespace),
            lambda obj: ready(obj) and obj.metadata.generation == 2,
            timeout=TIMEOUT,
            what="the proxy reconciled at generation 2",
        )
        assert resynced.status is not None and resynced.status.config_map == name_of_two
        after = await config_maps(client, namespace)
        assert {n: cm["metadata"]["resourceVersion"] for n, cm in after.items()} == {
            n: cm["metadata"]["resourceVersion"] for n, cm in before.items()
        }
        again = await client.get(*kinds.Deployment, "proxy-mcrouter", namespace=namespace)
        assert again["metadata"]["generation"] == deployment["metadata"]["generation"]


async def test_an_unknown_rule_type_is_rejected(client: Client, namespace: str) -> None:
    await install_crds(client, Memcached, MemcachedProxy)
    with pytest.raises(Invalid) as refused:
        await client.create(proxy(namespace, type="mirrored"))
    assert "spec.rules.type" in str(refused.value)


def test_the_four_route_shapes() -> None:
    assert mcrouter.route("sharded", "p") == "PoolRoute|p"
    assert mcrouter.route("replicated", "p") == {
        "type": "OperationSelectorRoute",
        "default_policy": "AllSyncRoute|Pool|p",
        "operation_policies": {"delete": "LatestRoute|Pool|p"},
    }
    with pytest.raises(ValueError, match="unknown rule type"):
        mcrouter.route("mirrored", "p")


def test_servers_use_the_endpoints_target_port() -> None:
    """The Service port 11211 maps to the pods' port 21211: the pool lists the pods' port."""
    service = {
        "metadata": {"name": "cache"},
        "spec": {"ports": [{"name": "memcached", "port": 11211, "targetPort": 21211}]},
    }
    endpoints = {
        "subsets": [
            {
                "addresses": [{"ip": "10.244.0.10"}, {"ip": "10.244.0.9"}],
                "notReadyAddresses": [{"ip": "10.244.0.11"}],
                "ports": [
                    {"name": "memcached", "port": 21211, "protocol": "TCP"},
                    {"name": "metrics", "port": 9150, "protocol": "TCP"},
                ],
            }
        ]
    }
    port = mcrouter.service_port(service, 11211)
    assert mcrouter.service_port(service, "memcached") == port
    assert mcrouter.servers(endpoints, port) == ["10.244.0.9:21211", "10.244.0.10:21211"]
    with pytest.raises(mcrouter.UnknownPort):
        mcrouter.service_port(service, 11212)
    # Content-addressed: the same servers, the same name; others, another name.
    config = mcrouter.render("sharded", "pool", ["10.244.0.9:21211"])
    assert mcrouter.config_map_name("proxy", config) == mcrouter.config_map_name("proxy", config)
    other = mcrouter.render("sharded", "pool", ["10.244.0.10:21211"])
    assert mcrouter.config_map_name("proxy", config) != mcrouter.config_map_name("proxy", other)
