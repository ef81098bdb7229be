"""The HorizontalPodAutoscaler controller on the cluster clock: it scales a Deployment up and
back down from its pods' usage, a custom resource through its ``scale`` subresource, and
``kubectl autoscale``'s ``autoscaling/v1`` objects are the same as ``v2`` ones."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI, raw_api

NS = "default"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
PODS = f"/api/v1/namespaces/{NS}/pods"


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock()
    async with (
        LocalCluster(clock=clock, https_port=None) as local,
        raw_api(local.url, local.token) as api,
    ):
        yield clock, api


def _deployment(cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {
                    "labels": {"app": "web"},
                    "annotations": {"setpoint.dev/simulated-cpu": cpu},
                },
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "nginx",
                            "resources": {"requests": {"cpu": "100m"}},
                        }
                    ]
                },
            },
        },
    }


def _hpa(target: dict[str, Any], behavior: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": target,
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50},
                },
            }
        ],
    }
    if behavior is not None:
        spec["behavior"] = behavior
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": spec,
    }


async def _ready_pods(api: RawAPI, count: int) -> list[dict[str, Any]]:
    async def ready() -> list[dict[str, Any]] | None:
        pods = (await api.request("GET", f"{PODS}?labelSelector=app%3Dweb")).body["items"]
        ready = [
            pod
            for pod in pods
            if not pod["metadata"].get("deletionTimestamp")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (pod.get("status") or {}).get("conditions") or []
            )
        ]
        return ready if len(ready) == count and len(pods) == count else None

    return await eventually(ready, f"{count} ready pods")


async def _hpa_status(api: RawAPI, **wanted: Any) -> dict[str, Any]:
    async def matching() -> dict[str, Any] | None:
        hpa = (await api.request("GET", f"{HPAS}/web")).body
        status = hpa.get("status") or {}
        return hpa if all(status.get(k) == v for k, v in wanted.items()) else None

    return await eventually(matching, f"HPA status {wanted}")


def _conditions(hpa: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in hpa["status"]["conditions"]}


async def test_a_deployment_scales_up_then_down_with_its_usage(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    assert (await api.request("POST", DEPLOYMENTS, _deployment("200m"))).status == 201
    await _ready_pods(api, 1)
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 0}}
    assert (await api.request("POST", HPAS, _hpa(target, behavior))).status == 201
    # The first sync comes one period (15 s) later; the pod has been ready a whole metrics
    # window by then. 200% of the request against 50%: four pods' worth.
    clock.advance(15)
    hpa = await _hpa_status(api, desiredReplicas=4)
    assert _conditions(hpa)["AbleToScale"] == ("True", "SucceededRescale")
    assert _conditions(hpa)["ScalingActive"] == ("True", "ValidMetricFound")
    assert hpa["status"]["currentMetrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "current": {"averageValue": "200m", "averageUtilization": 200},
            },
        }
    ]
    deployment = (await api.request("GET", f"{DEPLOYMENTS}/web")).body
    assert deployment["spec"]["replicas"] == 4
    assert any(
        entry.get("subresource") == "scale" and entry["manager"] == "kube-controller-manager"
        for entry in deployment["metadata"]["managedFields"]
    )
    events = (await api.request("GET", f"/api/v1/namespaces/{NS}/events")).body["items"]
    rescale = [e for e in events if e["reason"] == "SuccessfulRescale"]
    assert rescale[0]["message"] == (
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    )
    assert rescale[0]["source"]["component"] == "horizontal-pod-autoscaler"
    pods = await _ready_pods(api, 4)
    # The load drops to 20% of the request per pod: 4 x 20 / 50 -> 2 pods.
    for pod in pods:
        patch = {"metadata": {"annotations": {"setpoint.dev/simulated-cpu": "20m"}}}
        reply = await api.request(
            "PATCH",
            f"{PODS}/{pod['metadata']['name']}",
            patch,
            content_type="application/merge-patch+json",
        )
        assert reply.status == 200, reply.body
    clock.advance(15)
    hpa = await _hpa_status(api, desiredReplicas=2)
    events = (await api.request("GET", f"/api/v1/namespaces/{NS}/events")).body["items"]
    assert any(e["message"] == "New size: 2; reason: All metrics below target" for e in events)


async def test_without_behavior_scale_down_waits_for_the_stabilization_window(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    await api.request("POST", DEPLOYMENTS, {**_deployment("60m")})
    reply = await api.request(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"spec": {"replicas": 3}},
        content_type="application/merge-patch+json",
    )
    assert reply.status == 200
    await _ready_pods(api, 3)
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    await api.request("POST", HPAS, _hpa(target))
    clock.advance(15)
    # 60% against 50% is within... no: 1.2 is outside the 10% tolerance: ceil(1.2 x 3) = 4.
    await _hpa_status(api, desiredReplicas=4)
    pods = await _ready_pods(api, 4)
    for pod in pods:
        await api.request(
            "PATCH",
            f"{PODS}/{pod['metadata']['name']}",
            {"metadata": {"annotations": {"setpoint.dev/simulated-cpu": "10m"}}},
            content_type="application/merge-patch+json",
        )
    clock.advance(15)
    hpa = await _hpa_status(api, desiredReplicas=4)
    # The 5-minute window still holds the earlier recommendation of 4.
    assert _conditions(hpa)["AbleToScale"] == ("True", "ScaleDownStabilized")
    clock.advance(300)
    await _hpa_status(api, desiredReplicas=1)


async def test_a_custom_resource_with_a_scale_subresource_is_autoscaled(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "pools.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                }
            ],
        },
    }
    reply = await api.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert reply.status == 201, reply.body
    pools = f"/apis/example.com/v1/namespaces/{NS}/pools"

    async def served() -> bool:
        return (await api.request("GET", pools)).status == 200

    await eventually(served, "the Pool CRD served")
    pool = {"apiVersion": "example.com/v1", "kind": "Pool", "metadata": {"name": "web"}}
    pool["spec"] = {"replicas": 2}
    assert (await api.request("POST", pools, pool)).status == 201
    status = {"status": {"replicas": 2, "selector": "app=web"}}
    reply = await api.request(
        "PATCH", f"{pools}/web/status", status, content_type="application/merge-patch+json"
    )
    assert reply.status == 200, reply.body
    # The operator's pods (here made by hand): 150% of their request each.
    for index in range(2):
        pod = _deployment("150m")["spec"]["template"]
        body = {**pod, "metadata": {**pod["metadata"], "name": f"web-{index}"}}
        assert (await api.request("POST", PODS, body)).status == 201
    await _ready_pods(api, 2)
    target = {"apiVersion": "example.com/v1", "kind": "Pool", "name": "web"}
    await api.request("POST", HPAS, _hpa(target))
    clock.advance(15)
    # 300% of target asks for 6; without a behavior one sync may at most double (or reach 4).
    hpa = await _hpa_status(api, desiredReplicas=4)
    assert _conditions(hpa)["ScalingLimited"] == ("True", "ScaleUpLimit")
    assert (await api.request("GET", f"{pools}/web")).body["spec"]["replicas"] == 4


async def test_an_unknown_target_is_reported(cluster: tuple[FakeClock, RawAPI]) -> None:
    clock, api = cluster
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "absent"}
    await api.request("POST", HPAS, _hpa(target))
    clock.advance(15)

    async def reported() -> dict[str, Any] | None:
        hpa = (await api.request("GET", f"{HPAS}/web")).body
        conditions = (hpa.get("status") or {}).get("conditions") or []
        return hpa if conditions else None

    hpa = await eventually(reported, "a condition")
    (condition,) = hpa["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "AbleToScale",
        "False",
        "FailedGetScale",
    )
    assert condition["message"] == (
        "the HPA controller was unable to get the target's current scale: "
        'deployments.apps "absent" not found'
    )


def test_kubectl_autoscale_makes_a_v1_autoscaler_served_as_v2(
    local_cluster: BackgroundCluster, namespace: str, tmp_path: Path
) -> None:
    kubectl = Kubectl(local_cluster.kubeconfig_path, tmp_path / "cache")
    kubectl.run("create", "deployment", "web", "-n", namespace, "--image=nginx")
    kubectl.run(
        "autoscale", "deployment", "web", "-n", namespace, "--cpu-percent=60", "--min=2", "--max=5"
    )
    as_v2 = kubectl.run(
        "get", "horizontalpodautoscalers.v2.autoscaling", "web", "-n", namespace, "-o", "json"
    ).stdout
    assert '"averageUtilization": 60' in as_v2
    as_v1 = kubectl.run(
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage} {.spec.minReplicas}",
    ).stdout
    assert as_v1 == "autoscaling/v1 60 2"
