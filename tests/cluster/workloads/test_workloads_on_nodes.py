"""Workloads on a local cluster with several Nodes, its scheduler and simulated kubelet."""

from __future__ import annotations

from typing import Any

from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import raw_api


async def test_daemonset_runs_one_pod_on_each_of_three_nodes() -> None:
    async with LocalCluster(nodes=3) as cluster, raw_api(cluster.url, cluster.token) as api:
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
        path = "/apis/apps/v1/namespaces/default/daemonsets"
        reply = await api.request("POST", path, ds)
        assert reply.status == 201, reply.body

        async def all_ready() -> Any:
            status = (await api.request("GET", f"{path}/agent")).body.get("status") or {}
            return status if status.get("numberReady") == 3 else None

        status = await eventually(all_ready, "a ready pod on each node")
        assert status["desiredNumberScheduled"] == 3
        assert status["currentNumberScheduled"] == 3
        assert status["numberAvailable"] == 3
        assert status["numberMisscheduled"] == 0
        pods = (await api.request("GET", "/api/v1/namespaces/default/pods")).body["items"]
        nodes = sorted(p["spec"]["nodeName"] for p in pods)
        assert nodes == ["setpoint-node-0", "setpoint-node-1", "setpoint-node-2"]
        assert all(p["status"]["phase"] == "Running" for p in pods)


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


async def test_statefulset_ordered_ready_waits_for_each_pod() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        pods_path = "/api/v1/namespaces/default/pods"
        start = (await api.request("GET", pods_path)).body["metadata"]["resourceVersion"]
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
            },
        }
        path = "/apis/apps/v1/namespaces/default/statefulsets"
        assert (await api.request("POST", path, sts)).status == 201

        async def all_ready() -> Any:
            status = (await api.request("GET", f"{path}/db")).body.get("status") or {}
            return status if status.get("readyReplicas") == 3 else None

        await eventually(all_ready, "3 ready replicas")
        events = await api.watch(f"{pods_path}?watch=1&resourceVersion={start}&timeoutSeconds=1")
        order = []
        for event in events:
            pod = event["object"]
            if event["type"] == "ADDED":
                order.append(f"add {pod['metadata']['name']}")
            elif _ready(pod) and f"ready {pod['metadata']['name']}" not in order:
                order.append(f"ready {pod['metadata']['name']}")
        assert order == [
            "add db-0",
            "ready db-0",
            "add db-1",
            "ready db-1",
            "add db-2",
            "ready db-2",
        ]


async def test_deleting_a_job_deletes_its_pods_despite_the_tracking_finalizer() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "sleepy"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        }
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        pods = "/api/v1/namespaces/default/pods"
        assert (await api.request("POST", jobs, job)).status == 201

        async def running() -> Any:
            items = (await api.request("GET", pods)).body["items"]
            return items if items and items[0]["status"].get("phase") == "Running" else None

        (pod,) = await eventually(running, "the job's pod running")
        assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        deleted = await api.request("DELETE", f"{jobs}/sleepy", {"propagationPolicy": "Background"})
        assert deleted.status == 200, deleted.body

        async def no_pods() -> Any:
            return (await api.request("GET", pods)).body["items"] == []

        await eventually(no_pods, "the pod deleted with its Job")


async def test_a_namespace_full_of_workloads_is_deleted() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        assert (
            await api.request("POST", "/api/v1/namespaces", {"metadata": {"name": "shop"}})
        ).status == 201
        template = {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        job_template = {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}],
            }
        }
        objects = {
            "/apis/apps/v1/namespaces/shop/deployments": {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": template,
                },
            },
            "/apis/apps/v1/namespaces/shop/statefulsets": {
                "metadata": {"name": "db"},
                "spec": {
                    "replicas": 2,
                    "serviceName": "db",
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {**template, "metadata": {"labels": {"app": "db"}}},
                },
            },
            "/apis/batch/v1/namespaces/shop/jobs": {
                "metadata": {"name": "batch"},
                "spec": {"template": job_template},
            },
            "/apis/batch/v1/namespaces/shop/cronjobs": {
                "metadata": {"name": "tick"},
                "spec": {
                    "schedule": "* * * * *",
                    "jobTemplate": {"spec": {"template": job_template}},
                },
            },
        }
        for path, body in objects.items():
            reply = await api.request("POST", path, body)
            assert reply.status == 201, reply.body

        async def five_running() -> Any:
            items = (await api.request("GET", "/api/v1/namespaces/shop/pods")).body["items"]
            running = [p for p in items if p["status"].get("phase") == "Running"]
            return len(running) >= 5

        await eventually(five_running, "the workloads' pods running")
        assert (await api.request("DELETE", "/api/v1/namespaces/shop")).status == 200

        async def gone() -> Any:
            return (await api.request("GET", "/api/v1/namespaces/shop")).status == 404

        await eventually(gone, "the namespace deleted")


async def test_statefulset_claims_follow_the_retention_policy() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        sets = "/apis/apps/v1/namespaces/default/statefulsets"
        claims = "/api/v1/namespaces/default/persistentvolumeclaims"

        def statefulset(name: str, policy: str) -> dict[str, Any]:
            return {
                "metadata": {"name": name},
                "spec": {
                    "replicas": 2,
                    "serviceName": name,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{"name": "c", "image": "postgres:17"}]},
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
                    "persistentVolumeClaimRetentionPolicy": {
                        "whenDeleted": policy,
                        "whenScaled": policy,
                    },
                },
            }

        for name, policy in (("kept", "Retain"), ("gone", "Delete")):
            assert (await api.request("POST", sets, statefulset(name, policy))).status == 201

        async def claim_names() -> list[str]:
            return sorted(
                c["metadata"]["name"] for c in (await api.request("GET", claims)).body["items"]
            )

        async def four_claims() -> Any:
            return await claim_names() == [
                "data-gone-0",
                "data-gone-1",
                "data-kept-0",
                "data-kept-1",
            ]

        await eventually(four_claims, "claims of both sets")
        for name in ("kept", "gone"):
            await api.request(
                "PATCH",
                f"{sets}/{name}",
                {"spec": {"replicas": 1}},
                content_type="application/merge-patch+json",
            )

        async def scaled() -> Any:
            return await claim_names() == ["data-gone-0", "data-kept-0", "data-kept-1"]

        await eventually(scaled, "the scaled-down claim of 'gone' deleted with its pod")
        for name in ("kept", "gone"):
            await api.request("DELETE", f"{sets}/{name}", {"propagationPolicy": "Background"})

        async def deleted() -> Any:
            return await claim_names() == ["data-kept-0", "data-kept-1"]

        await eventually(deleted, "the claims of 'gone' deleted with the set")


async def test_daemonset_rolling_update_replaces_pods_node_by_node() -> None:
    async with LocalCluster(nodes=2) as cluster, raw_api(cluster.url, cluster.token) as api:
        path = "/apis/apps/v1/namespaces/default/daemonsets"
        ds = {
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "fluentd:1"}]},
                },
            },
        }
        assert (await api.request("POST", path, ds)).status == 201

        async def rolled(generation: int) -> Any:
            body = (await api.request("GET", f"{path}/agent")).body
            status = body.get("status") or {}
            return (
                status.get("observedGeneration") == generation
                and status.get("updatedNumberScheduled") == 2
                and status.get("numberAvailable") == 2
            )

        await eventually(lambda: rolled(1), "first rollout")
        patch = {
            "spec": {
                "template": {"spec": {"containers": [{"name": "agent", "image": "fluentd:2"}]}}
            }
        }
        reply = await api.request(
            "PATCH", f"{path}/agent", patch, content_type="application/merge-patch+json"
        )
        assert reply.status == 200, reply.body
        await eventually(lambda: rolled(2), "second rollout")
        pods = (await api.request("GET", "/api/v1/namespaces/default/pods")).body["items"]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        assert sorted(p["spec"]["containers"][0]["image"] for p in live) == ["fluentd:2"] * 2
        assert all(p["metadata"]["labels"]["pod-template-generation"] == "2" for p in live)


async def test_statefulset_rolling_update_goes_from_the_highest_ordinal_down() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        path = "/apis/apps/v1/namespaces/default/statefulsets"
        pods_path = "/api/v1/namespaces/default/pods"
        sts = {
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
                },
            },
        }
        assert (await api.request("POST", path, sts)).status == 201

        async def settled() -> Any:
            status = (await api.request("GET", f"{path}/db")).body.get("status") or {}
            done = (
                status.get("readyReplicas") == 3
                and status.get("updatedReplicas") == 3
                and status.get("currentRevision") == status.get("updateRevision")
            )
            return status if done else None

        first = await eventually(settled, "first revision rolled out")
        start = (await api.request("GET", pods_path)).body["metadata"]["resourceVersion"]
        containers = [{"name": "db", "image": "postgres:17"}]
        patch = {"spec": {"template": {"spec": {"containers": containers}}}}
        await api.request("PATCH", f"{path}/db", patch, content_type="application/merge-patch+json")

        async def updated() -> Any:
            status = await settled()
            return (
                status if status and status["updateRevision"] != first["updateRevision"] else None
            )

        second = await eventually(updated, "second revision rolled out")
        assert second["currentRevision"] == second["updateRevision"]
        events = await api.watch(f"{pods_path}?watch=1&resourceVersion={start}&timeoutSeconds=1")
        replaced = [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"]
        assert replaced == ["db-2", "db-1", "db-0"]
        revisions = (
            await api.request("GET", "/apis/apps/v1/namespaces/default/controllerrevisions")
        ).body["items"]
        assert sorted(r["revision"] for r in revisions) == [1, 2]


async def test_job_with_a_failing_command_reaches_its_backoff_limit_under_run_pods() -> None:
    clock = FakeClock()
    async with (
        LocalCluster(run_pods=True, clock=clock) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        job = {
            "metadata": {"name": "flaky"},
            "spec": {
                "backoffLimit": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "c", "image": "busybox", "command": ["sh", "-c", "exit 3"]}
                        ],
                    }
                },
            },
        }
        assert (await api.request("POST", jobs, job)).status == 201

        async def failed(count: int) -> Any:
            status = (await api.request("GET", f"{jobs}/flaky")).body.get("status") or {}
            return status if status.get("failed") == count else None

        await eventually(lambda: failed(1), "the first pod failed")
        clock.advance(11)  # the pod-failure backoff before the replacement pod
        status = await eventually(lambda: failed(2), "the second pod failed")

        async def finished() -> Any:
            body = (await api.request("GET", f"{jobs}/flaky")).body
            conditions = (body.get("status") or {}).get("conditions") or ()
            return next((c for c in conditions if c["type"] == "Failed"), None)

        condition = await eventually(finished, "Failed condition")
        assert condition["reason"] == "BackoffLimitExceeded"
        assert condition["message"] == "Job has reached the specified backoff limit"
        pods = (await api.request("GET", "/api/v1/namespaces/default/pods")).body["items"]
        assert len(pods) == 2
        codes = [p["status"]["containerStatuses"][0]["state"]["terminated"] for p in pods]
        assert [(c["exitCode"], c["reason"]) for c in codes] == [(3, "Error"), (3, "Error")]
        assert status["failed"] == 2


async def test_daemonset_max_surge_starts_the_new_pod_before_stopping_the_old() -> None:
    async with LocalCluster(nodes=2) as cluster, raw_api(cluster.url, cluster.token) as api:
        path = "/apis/apps/v1/namespaces/default/daemonsets"
        pods_path = "/api/v1/namespaces/default/pods"
        ds = {
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
                },
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "fluentd:1"}]},
                },
            },
        }
        assert (await api.request("POST", path, ds)).status == 201

        async def rolled(generation: int) -> Any:
            status = (await api.request("GET", f"{path}/agent")).body.get("status") or {}
            return (
                status.get("observedGeneration") == generation
                and status.get("updatedNumberScheduled") == 2
                and status.get("numberAvailable") == 2
            )

        await eventually(lambda: rolled(1), "first rollout")
        listed = (await api.request("GET", pods_path)).body
        live = {p["metadata"]["name"] for p in listed["items"]}
        start = listed["metadata"]["resourceVersion"]
        containers = [{"name": "agent", "image": "fluentd:2"}]
        patch = {"spec": {"template": {"spec": {"containers": containers}}}}
        merge = "application/merge-patch+json"
        await api.request("PATCH", f"{path}/agent", patch, content_type=merge)
        await eventually(lambda: rolled(2), "second rollout")
        events = await api.watch(f"{pods_path}?watch=1&resourceVersion={start}&timeoutSeconds=1")
        counts = []
        for event in events:
            pod = event["object"]
            name = pod["metadata"]["name"]
            if event["type"] == "ADDED":
                live.add(name)
            elif event["type"] == "DELETED" or pod["metadata"].get("deletionTimestamp"):
                live.discard(name)
            counts.append(len(live))
        # maxUnavailable 0, maxSurge 1: never fewer than two pods, at times three.
        assert min(counts) == 2
        assert max(counts) == 3


async def test_cronjob_jobs_run_to_completion_and_history_is_trimmed() -> None:
    clock = FakeClock()
    async with (
        LocalCluster(clock=clock) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        cronjobs = "/apis/batch/v1/namespaces/default/cronjobs"
        jobs = "/apis/batch/v1/namespaces/default/jobs"
        cronjob = {
            "metadata": {"name": "tick"},
            "spec": {
                "schedule": "* * * * *",
                "successfulJobsHistoryLimit": 2,
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {"name": "c", "image": "busybox", "command": ["echo", "hi"]}
                                ],
                            }
                        }
                    }
                },
            },
        }
        assert (await api.request("POST", cronjobs, cronjob)).status == 201
        for run in range(1, 5):
            clock.advance(60)

            async def completed(run: int = run) -> Any:
                clock.advance(1)  # lets the simulated container finish
                status = (await api.request("GET", f"{cronjobs}/tick")).body.get("status") or {}
                items = (await api.request("GET", jobs)).body["items"]
                done = [j for j in items if (j.get("status") or {}).get("completionTime")]
                return status.get("lastSuccessfulTime") and len(done) >= min(run, 2)

            await eventually(completed, f"run {run} completed")
        items = (await api.request("GET", jobs)).body["items"]
        assert len(items) <= 3  # two kept successes, perhaps the next run already started
        events = (await api.request("GET", "/api/v1/namespaces/default/events")).body["items"]
        reasons = {e["reason"] for e in events if e["involvedObject"]["kind"] == "CronJob"}
        assert {"SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"} <= reasons


async def test_recreate_stops_every_old_pod_before_starting_new_ones() -> None:
    async with LocalCluster() as cluster, raw_api(cluster.url, cluster.token) as api:
        path = "/apis/apps/v1/namespaces/default/deployments"
        pods_path = "/api/v1/namespaces/default/pods"
        deployment = {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        }
        assert (await api.request("POST", path, deployment)).status == 201

        async def available(image: str) -> Any:
            body = (await api.request("GET", f"{path}/web")).body
            status = body.get("status") or {}
            current = body["spec"]["template"]["spec"]["containers"][0]["image"] == image
            return (
                current
                and status.get("observedGeneration") == body["metadata"]["generation"]
                and status.get("updatedReplicas") == 2
                and status.get("availableReplicas") == 2
                and status.get("replicas") == 2
            )

        await eventually(lambda: available("nginx:1.27"), "first rollout")
        listed = (await api.request("GET", pods_path)).body
        old = {p["metadata"]["name"] for p in listed["items"]}
        containers = [{"name": "web", "image": "nginx:1.28"}]
        patch = {"spec": {"template": {"spec": {"containers": containers}}}}
        merge = "application/merge-patch+json"
        await api.request("PATCH", f"{path}/web", patch, content_type=merge)
        await eventually(lambda: available("nginx:1.28"), "recreated")
        rv = listed["metadata"]["resourceVersion"]
        events = await api.watch(f"{pods_path}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
        first_new = next(i for i, e in enumerate(events) if e["type"] == "ADDED")
        gone = {
            e["object"]["metadata"]["name"] for e in events[:first_new] if e["type"] == "DELETED"
        }
        assert gone == old  # both old pods were removed before the first new one was created
