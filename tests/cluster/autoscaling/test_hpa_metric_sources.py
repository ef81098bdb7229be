"""HorizontalPodAutoscaler metric sources beyond ``Resource``: ``ContainerResource`` from the
metrics API's per-container figures, and ``Pods``/``Object``/``External``, whose APIs
(custom.metrics.k8s.io, external.metrics.k8s.io) are not served: reported as upstream's
controller reports them when those APIs are absent."""

from __future__ import annotations

from typing import Any

from setpoint.api.clock import FakeClock
from tests.cluster.autoscaling.test_horizontal_pod_autoscaler import (
    DEPLOYMENTS,
    HPAS,
    NS,
    _conditions,
    _hpa_status,
    _ready_pods,
    cluster,
)
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI

__all__ = ["cluster"]

TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
NO_CUSTOM = (
    "unable to fetch metrics from custom metrics API: no custom metrics API "
    "(custom.metrics.k8s.io) registered"
)


def _two_container_deployment() -> dict[str, Any]:
    def container(name: str, cpu: str) -> dict[str, Any]:
        return {"name": name, "image": "nginx", "resources": {"requests": {"cpu": cpu}}}

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
                    # Each container of a simulated pod uses this much.
                    "annotations": {"setpoint.dev/simulated-cpu": "200m"},
                },
                "spec": {"containers": [container("main", "100m"), container("sidecar", "400m")]},
            },
        },
    }


def _hpa(metrics: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": TARGET, "minReplicas": 1, "maxReplicas": 10, "metrics": metrics},
    }


def _container_cpu(container: str, utilization: int) -> dict[str, Any]:
    return {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": container,
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


async def _events(api: RawAPI) -> list[dict[str, Any]]:
    return (await api.request("GET", f"/api/v1/namespaces/{NS}/events")).body["items"]  # type: ignore[no-any-return]


async def test_container_resource_scales_on_one_containers_usage(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    assert (await api.request("POST", DEPLOYMENTS, _two_container_deployment())).status == 201
    await _ready_pods(api, 1)
    # The pod as a whole uses 400m of 500m requested (80%); its main container 200m of 100m.
    assert (await api.request("POST", HPAS, _hpa([_container_cpu("main", 50)]))).status == 201
    clock.advance(15)
    hpa = await _hpa_status(api, desiredReplicas=4)
    assert _conditions(hpa)["ScalingActive"] == ("True", "ValidMetricFound")
    assert hpa["status"]["currentMetrics"] == [
        {
            "type": "ContainerResource",
            "containerResource": {
                "name": "cpu",
                "container": "main",
                "current": {"averageValue": "200m", "averageUtilization": 200},
            },
        }
    ]


async def test_container_resource_of_a_container_without_metrics(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    assert (await api.request("POST", DEPLOYMENTS, _two_container_deployment())).status == 201
    (pod,) = await _ready_pods(api, 1)
    assert (await api.request("POST", HPAS, _hpa([_container_cpu("absent", 50)]))).status == 201
    clock.advance(15)

    async def failed() -> dict[str, Any] | None:
        hpa = (await api.request("GET", f"{HPAS}/web")).body
        conditions = {c["type"]: c for c in (hpa.get("status") or {}).get("conditions") or []}
        active = conditions.get("ScalingActive")
        return hpa if active and active["status"] == "False" else None

    hpa = await eventually(failed, "ScalingActive False")
    active = next(c for c in hpa["status"]["conditions"] if c["type"] == "ScalingActive")
    why = (
        "failed to get cpu utilization: unable to get metrics for resource cpu: failed to get "
        f"container metrics: container absent not present in metrics for pod "
        f"{NS}/{pod['metadata']['name']}"
    )
    assert active["reason"] == "FailedGetContainerResourceMetric"
    assert active["message"] == f"the HPA was unable to compute the replica count: {why}"
    events = {e["reason"]: e["message"] for e in await _events(api)}
    assert events["FailedGetContainerResourceMetric"] == why
    assert events["FailedComputeMetricsReplicas"] == (
        f"invalid metrics (1 invalid out of 1), first error is: {why}"
    )


async def test_pods_object_and_external_metrics_fail_as_without_their_apis(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    assert (await api.request("POST", DEPLOYMENTS, _two_container_deployment())).status == 201
    await _ready_pods(api, 1)
    metrics = [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "packets"},
                "target": {"type": "AverageValue", "averageValue": "1k"},
            },
        },
        {
            "type": "Object",
            "object": {
                "metric": {"name": "requests"},
                "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "front"},
                "target": {"type": "Value", "value": "10"},
            },
        },
        {
            "type": "External",
            "external": {
                "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
                "target": {"type": "AverageValue", "averageValue": "30"},
            },
        },
    ]
    assert (await api.request("POST", HPAS, _hpa(metrics))).status == 201
    clock.advance(15)

    async def reported() -> list[dict[str, Any]] | None:
        found = await _events(api)
        return found if any(e["reason"] == "FailedComputeMetricsReplicas" for e in found) else None

    events = {e["reason"]: e["message"] for e in await eventually(reported, "the Events")}
    pods_error = f"unable to get metric packets: {NO_CUSTOM}"
    assert events["FailedGetPodsMetric"] == pods_error
    assert events["FailedGetObjectMetric"] == (
        f"unable to get metric requests: Service on {NS} front/{NO_CUSTOM}"
    )
    assert events["FailedGetExternalMetric"] == (
        f"unable to get external metric {NS}/queue/&LabelSelector{{MatchLabels:map[string]"
        "string{q: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch "
        "metrics from external metrics API: the server could not find the requested resource "
        "(get queue.external.metrics.k8s.io)"
    )
    assert events["FailedComputeMetricsReplicas"] == (
        "invalid metrics (3 invalid out of 3), first error is: failed to get pods metric "
        f"value: {pods_error}"
    )
    hpa = (await api.request("GET", f"{HPAS}/web")).body
    active = next(c for c in hpa["status"]["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetPodsMetric")
    assert active["message"] == f"the HPA was unable to compute the replica count: {pods_error}"


async def test_a_failed_metric_blocks_scaling_down_but_not_up(
    cluster: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = cluster
    deployment = _two_container_deployment()
    deployment["spec"]["replicas"] = 2
    deployment["spec"]["template"]["metadata"]["annotations"]["setpoint.dev/simulated-cpu"] = "10m"
    assert (await api.request("POST", DEPLOYMENTS, deployment)).status == 201
    pods = await _ready_pods(api, 2)
    packets = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "packets"},
            "target": {"type": "AverageValue", "averageValue": "1k"},
        },
    }
    # main uses 10m of 100m: alone, the CPU metric would scale down to one replica.
    hpa = _hpa([_container_cpu("main", 50), packets])
    hpa["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 0}}
    assert (await api.request("POST", HPAS, hpa)).status == 201
    clock.advance(15)

    async def blocked() -> dict[str, Any] | None:
        found = (await api.request("GET", f"{HPAS}/web")).body
        conditions = {c["type"]: c for c in (found.get("status") or {}).get("conditions") or []}
        active = conditions.get("ScalingActive")
        return found if active and active["reason"] == "FailedGetPodsMetric" else None

    await eventually(blocked, "scaling blocked by the failed metric")
    events = [e for e in await _events(api) if e["reason"] == "FailedComputeMetricsReplicas"]
    assert events[0]["message"].startswith("invalid metrics (1 invalid out of 2), first error")
    assert (await api.request("GET", f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 2
    # Up is another matter: main at 200% of its request asks for more, the failure aside.
    for pod in pods:
        patch = {"metadata": {"annotations": {"setpoint.dev/simulated-cpu": "200m"}}}
        await api.request(
            "PATCH",
            f"/api/v1/namespaces/{NS}/pods/{pod['metadata']['name']}",
            patch,
            content_type="application/merge-patch+json",
        )
    clock.advance(15)
    # 8 wanted; behavior's default scale-up policies allow max(100 %, 4 pods) per 15 s: 6.
    scaled = await _hpa_status(api, desiredReplicas=6)
    assert _conditions(scaled)["ScalingActive"] == ("True", "ValidMetricFound")
