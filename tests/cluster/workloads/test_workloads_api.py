"""The workload controllers inside a local cluster, driven through the HTTP API.

Only the workload controllers run here (no scheduler or kubelet): the tests play the kubelet
by patching pod status, so each step of a rollout is under their control.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.api.times import format_time
from setpoint.cluster.controllers.framework.manager import ControllerManager
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.workload_controllers import workload_controller_classes
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
REPLICASETS = "/apis/apps/v1/namespaces/default/replicasets"
PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
EVENTS = "/api/v1/namespaces/default/events"


class Harness:
    def __init__(self, api: RawAPI, clock: FakeClock, manager: ControllerManager) -> None:
        self.api = api
        self.clock = clock
        self.manager = manager

    async def get(self, path: str) -> Any:
        reply = await self.api.request("GET", path)
        assert reply.status == 200, reply.body
        return reply.body

    async def pods(self, active_only: bool = True) -> list[dict[str, Any]]:
        items = (await self.get(PODS))["items"]
        if active_only:
            items = [
                p
                for p in items
                if not p["metadata"].get("deletionTimestamp")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]
        return list(items)

    async def set_pod(self, name: str, phase: str, ready: bool, exit_code: int = 0) -> None:
        stamp = format_time(self.clock.now())
        status: dict[str, Any] = {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": stamp,
                }
            ],
        }
        if phase in ("Succeeded", "Failed"):
            status["containerStatuses"] = [
                {
                    "name": "c",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": exit_code, "finishedAt": stamp}},
                }
            ]
        reply = await self.api.request(
            "PATCH",
            f"{PODS}/{name}/status",
            {"status": status},
            content_type="application/merge-patch+json",
        )
        assert reply.status == 200, reply.body

    async def finish_deleting(self) -> None:
        """The kubelet's last step: remove pods being deleted."""
        for pod in await self.pods(active_only=False):
            if pod["metadata"].get("deletionTimestamp") and not pod["metadata"].get("finalizers"):
                await self.api.request(
                    "DELETE", f"{PODS}/{pod['metadata']['name']}", {"gracePeriodSeconds": 0}
                )

    async def events(self, reason: str) -> list[str]:
        await self.manager.recorder.flush()
        items = (await self.get(EVENTS))["items"]
        return [e["message"] for e in items if e["reason"] == reason]


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    clock = FakeClock()
    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        manager = ControllerManager(
            cluster.server, ControllerOptions(clock=clock), workload_controller_classes()
        )
        await manager.start()
        try:
            async with raw_api(cluster.url, cluster.token) as api:
                yield Harness(api, clock, manager)
        finally:
            await manager.stop()


def _deployment(replicas: int = 3, image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


async def _ready_all(h: Harness, expected: int) -> None:
    async def all_there() -> list[dict[str, Any]] | None:
        pods = await h.pods()
        return pods if len(pods) == expected else None

    for pod in await eventually(all_there, f"{expected} pods"):
        if (pod.get("status") or {}).get("phase") != "Running":
            await h.set_pod(pod["metadata"]["name"], "Running", True)


async def test_deployment_creates_replica_set_pods_and_becomes_available(h: Harness) -> None:
    reply = await h.api.request("POST", DEPLOYMENTS, _deployment())
    assert reply.status == 201, reply.body
    await _ready_all(h, 3)

    async def available() -> Any:
        status = (await h.get(f"{DEPLOYMENTS}/web")).get("status") or {}
        return status if status.get("availableReplicas") == 3 else None

    status = await eventually(available, "3 available replicas")
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    (rs,) = (await h.get(REPLICASETS))["items"]
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["status"]["readyReplicas"] == 3
    pods = await h.pods()
    assert all(p["metadata"]["name"].startswith(f"web-{pod_hash}-") for p in pods)
    assert all(len(p["metadata"]["name"]) == len(f"web-{pod_hash}-") + 5 for p in pods)
    owner = pods[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "ReplicaSet",
        True,
        True,
    )
    assert await h.events("ScalingReplicaSet") == [
        f"Scaled up replica set web-{pod_hash} from 0 to 3"
    ]
    assert len(await h.events("SuccessfulCreate")) == 3


async def test_rolling_update_from_three_replicas_step_by_step(h: Harness) -> None:
    await h.api.request("POST", DEPLOYMENTS, _deployment())
    await _ready_all(h, 3)
    deployment = await h.get(f"{DEPLOYMENTS}/web")
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    reply = await h.api.request("PUT", f"{DEPLOYMENTS}/web", deployment)
    assert reply.status == 200, reply.body
    seen_totals = []
    for _ in range(20):
        # Wait for the controllers to settle, then let one pending pod become ready.
        async def settled() -> list[dict[str, Any]] | None:
            d = await h.get(f"{DEPLOYMENTS}/web")
            if d["status"].get("observedGeneration") != d["metadata"]["generation"]:
                return None
            pods = await h.pods()
            new = [p for p in pods if p["spec"]["containers"][0]["image"] == "nginx:1.28"]
            return pods if new else None

        pods = await eventually(settled, "a new pod")
        await h.finish_deleting()
        seen_totals.append(len(pods))
        # maxSurge 25% of 3 → 1; maxUnavailable 25% of 3 → 0.
        assert len(pods) <= 4
        ready = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        assert len(ready) >= 3
        pending = [p for p in pods if (p.get("status") or {}).get("phase") != "Running"]
        if not pending:
            status = (await h.get(f"{DEPLOYMENTS}/web"))["status"]
            if status.get("updatedReplicas") == 3 and len(pods) == 3:
                break
            continue
        await h.set_pod(pending[0]["metadata"]["name"], "Running", True)
    status = (await h.get(f"{DEPLOYMENTS}/web"))["status"]
    assert status["updatedReplicas"] == 3
    assert 4 in seen_totals
    await h.finish_deleting()
    assert len(await h.pods(active_only=False)) == 3
    sizes = sorted(
        (rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], rs["spec"]["replicas"])
        for rs in (await h.get(REPLICASETS))["items"]
    )
    assert sizes == [("1", 0), ("2", 3)]
    scaled = await h.events("ScalingReplicaSet")
    assert any("Scaled down replica set" in m and "from 3 to 2" in m for m in scaled)


def _job(name: str = "pi", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                }
            },
            **spec,
        },
    }


async def _finish_new_pods(h: Harness, phase: str, exit_code: int = 0) -> int:
    pods = [
        p for p in await h.pods() if (p.get("status") or {}).get("phase", "Pending") == "Pending"
    ]
    for pod in pods:
        await h.set_pod(pod["metadata"]["name"], phase, False, exit_code)
    return len(pods)


async def test_job_completes_and_counts_its_pods_once(h: Harness) -> None:
    reply = await h.api.request("POST", JOBS, _job(completions=2, parallelism=2))
    assert reply.status == 201, reply.body

    async def two_pods() -> Any:
        pods = await h.pods()
        return pods if len(pods) == 2 else None

    pods = await eventually(two_pods, "2 job pods")
    assert all(p["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"] for p in pods)
    assert all(p["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi" for p in pods)
    await _finish_new_pods(h, "Succeeded")

    async def complete() -> Any:
        job = await h.get(f"{JOBS}/pi")
        types = [c["type"] for c in (job.get("status") or {}).get("conditions") or ()]
        return job if "Complete" in types else None

    job = await eventually(complete, "Complete condition")
    status = job["status"]
    assert status["succeeded"] == 2
    assert "failed" not in status and "active" not in status
    assert status["ready"] == 0
    assert status["uncountedTerminatedPods"] == {}
    assert status["completionTime"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Complete"]["reason"] == "CompletionsReached"
    assert (
        conditions["SuccessCriteriaMet"]["message"] == "Reached expected number of succeeded pods"
    )
    finished = await h.pods(active_only=False)
    assert len(finished) == 2
    assert all(not p["metadata"].get("finalizers") for p in finished)
    assert await h.events("Completed") == ["Job completed"]


async def test_job_reaches_its_backoff_limit(h: Harness) -> None:
    await h.api.request("POST", JOBS, _job(backoffLimit=1))
    await eventually(h.pods, "a job pod")
    await _finish_new_pods(h, "Failed", exit_code=1)

    async def failed_once() -> Any:
        job = await h.get(f"{JOBS}/pi")
        return (job.get("status") or {}).get("failed") == 1

    await eventually(failed_once, "one failure counted")
    assert await h.pods() == []
    h.clock.advance(10.5)  # the pod-failure backoff: 10 s
    await eventually(h.pods, "a replacement pod")
    await _finish_new_pods(h, "Failed", exit_code=1)

    async def failed() -> Any:
        job = await h.get(f"{JOBS}/pi")
        conditions = (job.get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c["type"] == "Failed"), None)

    condition = await eventually(failed, "Failed condition")
    assert condition["reason"] == "BackoffLimitExceeded"
    assert condition["message"] == "Job has reached the specified backoff limit"
    job = await h.get(f"{JOBS}/pi")
    assert job["status"]["failed"] == 2
    assert "completionTime" not in job["status"]
    assert [c["type"] for c in job["status"]["conditions"]] == ["FailureTarget", "Failed"]
    assert await h.events("BackoffLimitExceeded") == ["Job has reached the specified backoff limit"]


async def test_cronjob_runs_on_the_fake_clock(h: Harness) -> None:
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "hello"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": _job()["spec"]}},
    }
    reply = await h.api.request("POST", CRONJOBS, cronjob)
    assert reply.status == 201, reply.body
    now = h.clock.now()
    wait = (5 - now.minute % 5) * 60 - now.second
    h.clock.advance(wait + 1)

    async def one_job() -> Any:
        items = (await h.get(JOBS))["items"]
        return items if items else None

    (job,) = await eventually(one_job, "a job")
    scheduled = now.replace(second=0, microsecond=0) + timedelta(seconds=wait + now.second)
    assert job["metadata"]["name"] == f"hello-{int(scheduled.timestamp()) // 60}"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"

    async def recorded() -> Any:
        status = (await h.get(f"{CRONJOBS}/hello")).get("status") or {}
        return status if status.get("active") else None

    status = await eventually(recorded, "cronjob status")
    assert status["lastScheduleTime"] == format_time(scheduled)
    assert f"Created job {job['metadata']['name']}" in await h.events("SuccessfulCreate")


STATEFULSETS = "/apis/apps/v1/namespaces/default/statefulsets"
CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"


async def test_statefulset_creates_ordered_pods_and_claims_and_scales_down_in_reverse(
    h: Harness,
) -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    reply = await h.api.request("POST", STATEFULSETS, sts)
    assert reply.status == 201, reply.body
    for count in (1, 2, 3):

        async def exactly(count: int = count) -> Any:
            pods = await h.pods()
            return pods if len(pods) == count else None

        pods = await eventually(exactly, f"{count} pods")
        names = sorted(p["metadata"]["name"] for p in pods)
        assert names == [f"db-{i}" for i in range(count)]  # one at a time, in order
        newest = next(p for p in pods if p["metadata"]["name"] == f"db-{count - 1}")
        labels = newest["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == f"db-{count - 1}"
        assert labels["apps.kubernetes.io/pod-index"] == str(count - 1)
        assert newest["spec"]["hostname"] == f"db-{count - 1}"
        assert newest["spec"]["subdomain"] == "db"
        volume = next(v for v in newest["spec"]["volumes"] if v["name"] == "data")
        assert volume["persistentVolumeClaim"]["claimName"] == f"data-db-{count - 1}"
        await h.set_pod(f"db-{count - 1}", "Running", True)
    claims = sorted(c["metadata"]["name"] for c in (await h.get(CLAIMS))["items"])
    assert claims == ["data-db-0", "data-db-1", "data-db-2"]

    async def ready_status() -> Any:
        status = (await h.get(f"{STATEFULSETS}/db")).get("status") or {}
        return status if status.get("readyReplicas") == 3 else None

    status = await eventually(ready_status, "3 ready replicas")
    assert status["replicas"] == 3
    assert status["currentRevision"] == status["updateRevision"]
    assert status["currentRevision"].startswith("db-")
    assert status["updatedReplicas"] == status["currentReplicas"] == 3
    revisions = (await h.get("/apis/apps/v1/namespaces/default/controllerrevisions"))["items"]
    assert [r["metadata"]["name"] for r in revisions] == [status["updateRevision"]]

    await h.api.request(
        "PATCH",
        f"{STATEFULSETS}/db",
        {"spec": {"replicas": 1}},
        content_type="application/merge-patch+json",
    )

    async def only_first() -> Any:
        await h.finish_deleting()
        return [p["metadata"]["name"] for p in await h.pods(active_only=False)] == ["db-0"]

    await eventually(only_first, "db-0 alone")
    messages = await h.events("SuccessfulDelete")
    assert messages[:2] == [
        "delete Pod db-2 in StatefulSet db successful",
        "delete Pod db-1 in StatefulSet db successful",
    ]
    assert "create Pod db-0 in StatefulSet db successful" in await h.events("SuccessfulCreate")
    assert "create Claim data-db-0 Pod db-0 in StatefulSet db success" in await h.events(
        "SuccessfulCreate"
    )


async def test_daemonset_runs_one_pod_per_eligible_node(h: Harness) -> None:
    for index, extra in enumerate(({}, {}, {"taints": [{"key": "gpu", "effect": "NoSchedule"}]})):
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{index}"},
            "spec": extra,
        }
        reply = await h.api.request("POST", "/api/v1/nodes", node)
        assert reply.status == 201, reply.body
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "fluentd:1"}]},
            },
        },
    }
    reply = await h.api.request("POST", "/apis/apps/v1/namespaces/default/daemonsets", ds)
    assert reply.status == 201, reply.body

    async def two_pods() -> Any:
        pods = await h.pods()
        return pods if len(pods) == 2 else None

    pods = await eventually(two_pods, "a pod on each untainted node")
    targets = sorted(
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"][0]
        for p in pods
    )
    assert targets == ["n0", "n1"]
    assert all(p["metadata"]["generateName"] == "agent-" for p in pods)
    for pod in pods:
        await h.set_pod(pod["metadata"]["name"], "Running", True)

    async def ready() -> Any:
        status = (await h.get("/apis/apps/v1/namespaces/default/daemonsets/agent")).get("status")
        return status if status and status.get("numberReady") == 2 else None

    status = await eventually(ready, "2 ready daemon pods")
    assert status["desiredNumberScheduled"] == 2
    assert status["currentNumberScheduled"] == 2
    assert status["numberAvailable"] == 2
    assert status["updatedNumberScheduled"] == 2
    assert status["numberMisscheduled"] == 0
    assert "numberUnavailable" not in status


async def test_progress_deadline_exceeded_on_the_fake_clock(h: Harness) -> None:
    deployment = _deployment(replicas=2)
    deployment["spec"]["progressDeadlineSeconds"] = 60
    await h.api.request("POST", DEPLOYMENTS, deployment)

    async def progressing() -> Any:
        status = (await h.get(f"{DEPLOYMENTS}/web")).get("status") or {}
        conditions = {c["type"]: c for c in status.get("conditions") or ()}
        return conditions.get("Progressing")

    condition = await eventually(progressing, "Progressing condition")
    assert condition["reason"] == "NewReplicaSetCreated"
    assert condition["message"].startswith('Created new replica set "web-')
    h.clock.advance(62)  # no pod ever becomes ready

    async def timed_out() -> Any:
        condition = await progressing()
        return condition if condition["reason"] == "ProgressDeadlineExceeded" else None

    condition = await eventually(timed_out, "ProgressDeadlineExceeded")
    assert condition["status"] == "False"
    assert condition["message"].endswith("has timed out progressing.")
    status = (await h.get(f"{DEPLOYMENTS}/web"))["status"]
    assert status["unavailableReplicas"] == 2
    available = next(c for c in status["conditions"] if c["type"] == "Available")
    assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")


async def test_min_ready_seconds_delays_availability(h: Harness) -> None:
    deployment = _deployment(replicas=1)
    deployment["spec"]["minReadySeconds"] = 30
    await h.api.request("POST", DEPLOYMENTS, deployment)
    await _ready_all(h, 1)

    async def rs_status() -> Any:
        items = (await h.get(REPLICASETS))["items"]
        status = items[0].get("status") if items else None
        return status if status and status.get("readyReplicas") == 1 else None

    status = await eventually(rs_status, "a ready replica")
    assert "availableReplicas" not in status
    h.clock.advance(31)

    async def available() -> Any:
        status = (await h.get(f"{DEPLOYMENTS}/web")).get("status") or {}
        return status.get("availableReplicas") == 1

    await eventually(available, "available after minReadySeconds")


async def test_job_active_deadline(h: Harness) -> None:
    await h.api.request("POST", JOBS, _job(activeDeadlineSeconds=30))
    await eventually(h.pods, "a job pod")
    h.clock.advance(31)

    async def failed() -> Any:
        await h.finish_deleting()
        job = await h.get(f"{JOBS}/pi")
        conditions = (job.get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c["type"] == "Failed"), None)

    condition = await eventually(failed, "Failed condition")
    assert condition["reason"] == "DeadlineExceeded"
    assert condition["message"] == "Job was active longer than specified deadline"
    assert await h.pods() == []


async def test_indexed_job_through_the_api(h: Harness) -> None:
    reply = await h.api.request(
        "POST", JOBS, _job(completionMode="Indexed", completions=2, parallelism=2)
    )
    assert reply.status == 201, reply.body

    async def two_pods() -> Any:
        pods = await h.pods()
        return pods if len(pods) == 2 else None

    pods = await eventually(two_pods, "2 indexed pods")
    assert sorted(p["metadata"]["name"][:5] for p in pods) == ["pi-0-", "pi-1-"]
    await _finish_new_pods(h, "Succeeded")

    async def complete() -> Any:
        status = (await h.get(f"{JOBS}/pi")).get("status") or {}
        return status if status.get("completionTime") else None

    status = await eventually(complete, "indexed job complete")
    assert status["completedIndexes"] == "0-1"
    assert status["succeeded"] == 2
