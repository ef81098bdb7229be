"""Deployment and ReplicaSet controllers synced against each other on an in-memory store."""

from __future__ import annotations

import copy
from typing import Any

from setpoint.cluster.controllers.deployment.controller import DeploymentController
from setpoint.cluster.controllers.replicaset.controller import ReplicaSetController
from setpoint.cluster.controllers.workload_pods.pod_state import is_pod_active

from .fake_context import FakeContext


def _deployment(replicas: int = 3, image: str = "nginx:1") -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


class Cluster:
    def __init__(self) -> None:
        self.ctx = FakeContext()
        self.deployments = DeploymentController(self.ctx)
        self.replica_sets = ReplicaSetController(self.ctx)

    async def settle(self, kubelet: bool = True, rounds: int = 50) -> list[tuple[int, int]]:
        """Sync until nothing changes; returns (active pods, ready pods) after each round."""
        history = []
        for _ in range(rounds):
            before = self.ctx.writes
            for d in self.ctx.list("apps/deployments"):
                await self.deployments.sync("default", d["metadata"]["name"])
            for rs in self.ctx.list("apps/replicasets"):
                await self.replica_sets.sync("default", rs["metadata"]["name"])
            pods = [p for p in self.ctx.list("pods") if is_pod_active(p)]
            history.append(
                (len(pods), sum(1 for p in pods if (p.get("status") or {}).get("phase")))
            )
            if kubelet:
                # One pod becomes ready per round, so rollouts go step by step.
                for pod in pods:
                    if not (pod.get("status") or {}).get("phase"):
                        self.ctx.set_pod_phase(pod["metadata"]["name"], "Running", True)
                        break
                for name, obj in list(self.ctx.objects["pods"].items()):
                    if obj["metadata"].get("deletionTimestamp") or False:
                        del self.ctx.objects["pods"][name]
            if self.ctx.writes == before:
                break
        return history

    def deployment(self) -> dict[str, Any]:
        found = self.ctx.get("apps/deployments", "default", "web")
        assert found is not None
        return copy.deepcopy(dict(found))


async def test_a_new_deployment_gets_a_replica_set_pods_and_status() -> None:
    cluster = Cluster()
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle()
    sets = cluster.ctx.list("apps/replicasets")
    assert len(sets) == 1
    rs = sets[0]
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    pods = cluster.ctx.list("pods")
    assert len(pods) == 3
    assert all(p["metadata"]["generateName"] == f"web-{pod_hash}-" for p in pods)
    status = cluster.deployment()["status"]
    assert status["replicas"] == status["availableReplicas"] == status["updatedReplicas"] == 3
    assert "unavailableReplicas" not in status
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert (
        "deployment-controller",
        "Normal",
        "ScalingReplicaSet",
        f"Scaled up replica set web-{pod_hash} from 0 to 3",
    ) in cluster.ctx.events
    created = [e for e in cluster.ctx.events if e[2] == "SuccessfulCreate"]
    assert len(created) == 3


async def test_rolling_update_stays_within_surge_and_unavailable() -> None:
    cluster = Cluster()
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle()
    deployment = cluster.deployment()
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    await cluster.ctx.update("apps/deployments", deployment)
    history = await cluster.settle()
    # maxSurge 1 (ceil 0.75), maxUnavailable 0 (floor 0.75): never above 4, never below 3 ready.
    assert max(total for total, _ in history) == 4
    assert min(ready for _, ready in history) >= 3
    sets = {
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs
        for rs in cluster.ctx.list("apps/replicasets")
    }
    assert sets["2"]["spec"]["replicas"] == 3
    assert sets["1"]["spec"]["replicas"] == 0
    status = cluster.deployment()["status"]
    assert status["updatedReplicas"] == 3
    assert (
        cluster.deployment()["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    )
    scaling = [e[3] for e in cluster.ctx.events if e[2] == "ScalingReplicaSet"]
    old = sets["1"]["metadata"]["name"]
    assert f"Scaled down replica set {old} from 3 to 2" in scaling


async def test_rollback_reuses_the_old_replica_set_with_a_new_revision() -> None:
    cluster = Cluster()
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle()
    for image in ("nginx:2", "nginx:1"):
        deployment = cluster.deployment()
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] = image
        await cluster.ctx.update("apps/deployments", deployment)
        await cluster.settle()
    sets = cluster.ctx.list("apps/replicasets")
    assert len(sets) == 2
    first = next(
        rs for rs in sets if rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"
    )
    annotations = first["metadata"]["annotations"]
    assert annotations["deployment.kubernetes.io/revision"] == "3"
    assert annotations["deployment.kubernetes.io/revision-history"] == "1"
    assert first["spec"]["replicas"] == 3


async def test_scaling_and_recreate() -> None:
    cluster = Cluster()
    spec = _deployment()
    spec["spec"]["strategy"] = {"type": "Recreate"}
    await cluster.ctx.create("apps/deployments", spec)
    await cluster.settle()
    deployment = cluster.deployment()
    deployment["spec"]["replicas"] = 5
    await cluster.ctx.update("apps/deployments", deployment)
    await cluster.settle()
    assert len([p for p in cluster.ctx.list("pods") if is_pod_active(p)]) == 5
    deployment = cluster.deployment()
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    await cluster.ctx.update("apps/deployments", deployment)
    history = await cluster.settle()
    assert 0 in [total for total, _ in history]
    assert cluster.deployment()["status"]["updatedReplicas"] == 5


async def test_paused_deployment_does_not_roll_out() -> None:
    cluster = Cluster()
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle()
    deployment = cluster.deployment()
    deployment["spec"]["paused"] = True
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    await cluster.ctx.update("apps/deployments", deployment)
    await cluster.settle()
    assert len(cluster.ctx.list("apps/replicasets")) == 1
    progressing = {c["type"]: c for c in cluster.deployment()["status"]["conditions"]}[
        "Progressing"
    ]
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "Unknown",
        "DeploymentPaused",
        "Deployment is paused",
    )
    deployment = cluster.deployment()
    deployment["spec"]["paused"] = False
    await cluster.ctx.update("apps/deployments", deployment)
    await cluster.settle()
    assert len(cluster.ctx.list("apps/replicasets")) == 2


async def test_replica_set_never_overshoots_when_the_cache_lags() -> None:
    cluster = Cluster()
    rs = await cluster.ctx.create(
        "apps/replicasets",
        {
            "metadata": {"name": "r", "namespace": "default"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}},
            },
        },
    )
    # A cache that never sees the pods: reads of one pod and lists alike.
    real_list, real_get = cluster.ctx.list, cluster.ctx.get
    cluster.ctx.list = lambda resource, namespace=None: (
        [] if resource == "pods" else real_list(resource, namespace)
    )  # type: ignore[method-assign]
    cluster.ctx.get = lambda resource, namespace, name: (
        None if resource == "pods" else real_get(resource, namespace, name)
    )  # type: ignore[method-assign]
    for _ in range(5):
        await cluster.replica_sets.sync("default", rs["metadata"]["name"])
    assert len(cluster.ctx.objects["pods"]) == 3


async def test_failed_pod_creation_sets_replica_failure_on_the_set_and_the_deployment() -> None:
    from setpoint.cluster.controllers.workload_context import WriteError

    cluster = Cluster()
    real_create = cluster.ctx.create
    message = 'pods "web-x" is forbidden: exceeded quota: compute'

    async def refuse_pods(resource: str, obj: Any) -> dict[str, Any]:
        if resource == "pods":
            raise WriteError(403, "Forbidden", message)
        return await real_create(resource, obj)

    cluster.ctx.create = refuse_pods  # type: ignore[method-assign]
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle(kubelet=False, rounds=3)
    (rs,) = cluster.ctx.list("apps/replicasets")
    (failure,) = rs["status"]["conditions"]
    assert (failure["type"], failure["reason"], failure["message"]) == (
        "ReplicaFailure",
        "FailedCreate",
        message,
    )
    assert ("replicaset-controller", "Warning", "FailedCreate", f"Error creating: {message}") in (
        cluster.ctx.events
    )
    conditions = {c["type"]: c for c in cluster.deployment()["status"]["conditions"]}
    assert conditions["ReplicaFailure"]["reason"] == "FailedCreate"
    cluster.ctx.create = real_create  # type: ignore[method-assign]
    await cluster.settle()
    (rs,) = cluster.ctx.list("apps/replicasets")
    assert "conditions" not in rs["status"]
    assert "ReplicaFailure" not in {c["type"] for c in cluster.deployment()["status"]["conditions"]}


async def test_a_bad_max_surge_is_reported_once_not_retried() -> None:
    cluster = Cluster()
    spec = _deployment()
    spec["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = "lots"
    await cluster.ctx.create("apps/deployments", spec)
    assert await cluster.deployments.sync("default", "web") is None
    assert cluster.ctx.list("apps/replicasets") == []
    (event,) = [e for e in cluster.ctx.events if e[2] == "InvalidStrategy"]
    assert "not a percentage" in event[3]


async def test_a_refused_write_is_not_retried_at_once() -> None:
    # Retrying at once spun the worker without letting the informer catch up (a stale cache
    # kept producing the same 404); the watch event of the change re-enqueues the key instead.
    from setpoint.cluster.controllers.workload_context import WriteError

    cluster = Cluster()
    await cluster.ctx.create("apps/deployments", _deployment())
    await cluster.settle()
    deployment = cluster.deployment()
    deployment["spec"]["replicas"] = 5
    await cluster.ctx.update("apps/deployments", deployment)

    async def gone(resource: str, obj: Any) -> dict[str, Any]:
        raise WriteError(404, "NotFound", f'replicasets.apps "{obj["metadata"]["name"]}" not found')

    cluster.ctx.update = gone  # type: ignore[method-assign]
    assert await cluster.deployments.sync("default", "web") is None
