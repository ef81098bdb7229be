"""The real kubectl against the workload controllers: rollout, scale, set image, undo, wait."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _deployment(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def _make_pods_ready(kubectl: Kubectl, namespace: str, count: int) -> None:
    """Wait until ``count`` live pods exist (the scheduler and the simulated kubelet run them)."""

    def pods() -> list[dict[str, Any]] | None:
        items = kubectl.json("get", "pods", "-n", namespace, "-l", "app=web")["items"]
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        return live if len(live) >= count else None

    eventually_sync(pods, f"{count} pods")


def _roll_until_revision(kubectl: Kubectl, namespace: str, revision: str) -> None:
    """Make new pods ready until the rollout to ``revision`` is complete."""

    def complete() -> bool:
        _make_pods_ready(kubectl, namespace, 3)
        deployment = kubectl.json("get", "deployment", "web", "-n", namespace)
        status = deployment["status"]
        annotations = deployment["metadata"].get("annotations") or {}
        return (
            annotations.get("deployment.kubernetes.io/revision") == revision
            and status.get("updatedReplicas") == status.get("replicas") == 3
            and status.get("availableReplicas") == 3
        )

    eventually_sync(complete, f"rollout to revision {revision}")


def test_rollout_scale_set_image_undo(kubectl: Kubectl, namespace: str) -> None:
    n = ("-n", namespace)
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(_deployment(namespace)))
    _make_pods_ready(kubectl, namespace, 2)
    out = kubectl.run("rollout", "status", "deployment/web", *n, "--timeout=30s").stdout
    assert 'deployment "web" successfully rolled out' in out
    kubectl.run("wait", "--for=condition=Available", "deployment/web", *n, "--timeout=30s")

    kubectl.run("scale", "deployment/web", "--replicas=3", *n)
    _make_pods_ready(kubectl, namespace, 3)
    eventually_sync(
        lambda: (
            kubectl.json("get", "deployment", "web", *n)["status"].get("availableReplicas") == 3
        ),
        "3 available",
    )

    # What `kubectl set image deployment/web web=nginx:1.28` does, as a JSON patch (set image
    # sends a strategic merge patch, which this branch's API server does not accept yet).
    image = [
        {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}
    ]
    kubectl.run("patch", "deployment", "web", *n, "--type=json", "-p", json.dumps(image))
    _roll_until_revision(kubectl, namespace, "2")
    out = kubectl.run("rollout", "status", "deployment/web", *n, "--timeout=30s").stdout
    assert 'deployment "web" successfully rolled out' in out
    history = kubectl.run("rollout", "history", "deployment/web", *n).stdout
    assert "REVISION" in history and "1 " in history and "2 " in history

    kubectl.run("rollout", "undo", "deployment/web", *n)
    eventually_sync(
        lambda: (
            kubectl.json("get", "deployment", "web", *n)["spec"]["template"]["spec"]["containers"][
                0
            ]["image"]
            == "nginx:1.27"
        ),
        "rolled back template",
    )
    _roll_until_revision(kubectl, namespace, "3")
    sets = kubectl.json("get", "replicasets", *n)["items"]
    revisions = {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["metadata"]["annotations"][
            "deployment.kubernetes.io/revision"
        ]
        for rs in sets
    }
    assert revisions == {"nginx:1.27": "3", "nginx:1.28": "2"}

    described = kubectl.run("describe", "deployment", "web", *n).stdout
    assert "ScalingReplicaSet" in described
    assert "deployment-controller" in described
    everything = kubectl.run("get", "all", *n).stdout
    assert "deployment.apps/web" in everything
    assert "replicaset.apps/web-" in everything
    assert "pod/web-" in everything


def test_delete_deployment_cascade_foreground_waits_for_its_pods(
    kubectl: Kubectl, namespace: str
) -> None:
    n = ("-n", namespace)
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(_deployment(namespace)))
    kubectl.run("rollout", "status", "deployment/web", *n, "--timeout=30s")
    kubectl.run("delete", "deployment", "web", *n, "--cascade=foreground", "--timeout=30s")
    assert kubectl.json("get", "replicasets", *n)["items"] == []
    # Pods block their ReplicaSet's deletion (blockOwnerDeletion), which blocks the Deployment's.
    assert kubectl.json("get", "pods", *n)["items"] == []


def test_orphaned_replica_set_is_adopted_by_a_new_deployment(
    kubectl: Kubectl, namespace: str
) -> None:
    n = ("-n", namespace)
    manifest = json.dumps(_deployment(namespace))
    kubectl.run("create", "--validate=false", "-f", "-", stdin=manifest)
    kubectl.run("rollout", "status", "deployment/web", *n, "--timeout=30s")
    pods_before = sorted(p["metadata"]["name"] for p in kubectl.json("get", "pods", *n)["items"])
    kubectl.run("delete", "deployment", "web", *n, "--cascade=orphan")
    eventually_sync(
        lambda: (
            not kubectl.json("get", "replicasets", *n)["items"][0]["metadata"].get(
                "ownerReferences"
            )
        ),
        "the ReplicaSet orphaned",
    )
    kubectl.run("create", "--validate=false", "-f", "-", stdin=manifest)
    uid = kubectl.json("get", "deployment", "web", *n)["metadata"]["uid"]
    eventually_sync(
        lambda: (
            (
                kubectl.json("get", "replicasets", *n)["items"][0]["metadata"].get(
                    "ownerReferences"
                )
                or [{}]
            )[0].get("uid")
            == uid
        ),
        "the ReplicaSet adopted",
    )
    kubectl.run("rollout", "status", "deployment/web", *n, "--timeout=30s")
    assert len(kubectl.json("get", "replicasets", *n)["items"]) == 1
    pods_after = sorted(p["metadata"]["name"] for p in kubectl.json("get", "pods", *n)["items"])
    assert pods_after == pods_before


def test_rollout_status_of_a_statefulset_and_a_daemonset(kubectl: Kubectl, namespace: str) -> None:
    n = ("-n", namespace)
    template = {
        "metadata": {"labels": {"app": "db"}},
        "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
    }
    for kind, extra in (("StatefulSet", {"replicas": 2, "serviceName": "db"}), ("DaemonSet", {})):
        manifest = {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "db"}}, "template": template, **extra},
        }
        kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(manifest))
    out = kubectl.run("rollout", "status", "statefulset/db", *n, "--timeout=30s").stdout
    # The API server defaults partition: 0, so kubectl reports a partitioned roll out (as
    # against a real cluster).
    assert "partitioned roll out complete: 2 new pods have been updated" in out
    out = kubectl.run("rollout", "status", "daemonset/db", *n, "--timeout=30s").stdout
    assert 'daemon set "db" successfully rolled out' in out
    for kind in ("statefulset", "daemonset"):
        history = kubectl.run("rollout", "history", f"{kind}/db", *n).stdout.split()
        assert history[1:5] == ["REVISION", "CHANGE-CAUSE", "1", "<none>"], history


def test_wait_for_a_job_to_complete(kubectl: Kubectl, namespace: str) -> None:
    n = ("-n", namespace)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": namespace},
        "spec": {
            "completions": 2,
            "parallelism": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "busybox", "command": ["echo", "3.14"]}],
                }
            },
        },
    }
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(job))
    kubectl.run("wait", "--for=condition=complete", "job/pi", *n, "--timeout=30s")
    succeeded = kubectl.run("get", "job", "pi", *n, "-o", "jsonpath={.status.succeeded}").stdout
    assert succeeded == "2"
    described = kubectl.run("describe", "job", "pi", *n).stdout
    assert "Completed" in described and "job-controller" in described


def test_rollout_status_reports_an_exceeded_progress_deadline(tmp_path: Path) -> None:
    clock = FakeClock()
    with BackgroundCluster(clock=clock) as cluster:
        kubectl = Kubectl(cluster.kubeconfig_path, tmp_path / "kube-cache")
        deployment = _deployment("default")
        deployment["spec"]["progressDeadlineSeconds"] = 60
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        # The simulated kubelet makes the pods ready only after this delay on the clock.
        container["readinessProbe"] = {
            "exec": {"command": ["true"]},
            "initialDelaySeconds": 3600,
        }
        kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(deployment))

        def progressing() -> Any:
            status = kubectl.json("get", "deployment", "web").get("status") or {}
            return any(c["type"] == "Progressing" for c in status.get("conditions") or ())

        eventually_sync(progressing, "a Progressing condition")
        clock.advance(61)
        result = kubectl.run("rollout", "status", "deployment/web", "--timeout=20s", check=False)
        assert result.returncode == 1
        assert 'error: deployment "web" exceeded its progress deadline' in result.stderr


def test_orphaned_statefulset_pods_are_adopted_by_a_new_set(
    kubectl: Kubectl, namespace: str
) -> None:
    n = ("-n", namespace)
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
            },
        },
    }
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(manifest))
    kubectl.run("rollout", "status", "statefulset/db", *n, "--timeout=30s")
    uids = {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in kubectl.json("get", "pods", *n)["items"]
    }
    kubectl.run("delete", "statefulset", "db", *n, "--cascade=orphan")
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(manifest))
    owner = kubectl.json("get", "statefulset", "db", *n)["metadata"]["uid"]

    def adopted() -> bool:
        pods = kubectl.json("get", "pods", *n)["items"]
        return all(
            (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == owner for p in pods
        )

    eventually_sync(adopted, "the pods adopted")
    kubectl.run("rollout", "status", "statefulset/db", *n, "--timeout=30s")
    after = {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in kubectl.json("get", "pods", *n)["items"]
    }
    assert after == uids  # the same pods, not new ones
