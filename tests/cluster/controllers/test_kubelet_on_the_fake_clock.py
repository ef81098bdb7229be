"""The simulated kubelet on a FakeClock: completion, readiness delay, and the endpoints that
follow readiness. Time moves only when the test advances it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def clock_and_api() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock()
    async with LocalCluster(clock=clock) as cluster, raw_api(cluster.url, cluster.token) as api:
        yield clock, api


async def pod_status(api: RawAPI, name: str) -> dict[str, Any]:
    reply = await api.request("GET", f"{PODS}/{name}")
    assert reply.status == 200, reply.body
    return reply.body.get("status") or {}


def conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions") or []}


async def test_a_command_that_ends_succeeds_after_the_run_time(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    body = {
        "metadata": {"name": "once"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "echo", "image": "busybox", "command": ["echo", "YAY"]}],
        },
    }
    await api.request("POST", PODS, body)

    async def phase_is(phase: str) -> dict[str, Any] | None:
        status = await pod_status(api, "once")
        return status if status.get("phase") == phase else None

    await eventually(lambda: phase_is("Running"), "Running")
    clock.advance(1.0)
    status = await eventually(lambda: phase_is("Succeeded"), "Succeeded")

    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    ready = conditions(status)["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")


async def test_readiness_waits_for_the_probe_delay_and_endpoints_follow(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    service = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
        },
    }
    assert (await api.request("POST", "/api/v1/namespaces/default/services", service)).status == 201
    body = {
        "metadata": {"name": "slow", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "readinessProbe": {
                        "httpGet": {"path": "/", "port": 8080},
                        "initialDelaySeconds": 5,
                    },
                }
            ]
        },
    }
    await api.request("POST", PODS, body)

    async def running_unready() -> dict[str, Any] | None:
        status = await pod_status(api, "slow")
        return status if status.get("phase") == "Running" else None

    status = await eventually(running_unready, "Running")
    ready = conditions(status)["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    assert ready["message"] == "containers with unready status: [app]"

    async def endpoints() -> dict[str, Any] | None:
        reply = await api.request("GET", "/api/v1/namespaces/default/endpoints/web")
        return reply.body if reply.status == 200 and reply.body.get("subsets") else None

    unready = await eventually(endpoints, "Endpoints with the unready pod")
    (subset,) = unready["subsets"]
    assert "addresses" not in subset
    assert subset["notReadyAddresses"][0]["ip"] == status["podIP"]
    assert subset["notReadyAddresses"][0]["targetRef"]["name"] == "slow"
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]

    clock.advance(5)

    async def ready_endpoints() -> dict[str, Any] | None:
        found = await endpoints()
        return found if found and "addresses" in found["subsets"][0] else None

    ready_now = await eventually(ready_endpoints, "Endpoints with the ready pod")
    assert ready_now["subsets"][0]["addresses"][0]["ip"] == status["podIP"]
    assert conditions(await pod_status(api, "slow"))["Ready"]["status"] == "True"

    reply = await api.request(
        "GET",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
        "?labelSelector=kubernetes.io/service-name%3Dweb",
    )
    (slice_,) = reply.body["items"]
    assert slice_["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == (
        "endpointslice-controller.k8s.io"
    )
    assert slice_["metadata"]["ownerReferences"][0]["kind"] == "Service"
    (endpoint,) = slice_["endpoints"]
    assert endpoint["conditions"] == {"ready": True, "serving": True, "terminating": False}
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]

    await api.request("DELETE", f"{PODS}/slow")

    async def emptied() -> bool:
        reply = await api.request("GET", "/api/v1/namespaces/default/endpoints/web")
        return reply.status == 200 and not reply.body.get("subsets")

    await eventually(emptied, "Endpoints emptied when the pod goes")
