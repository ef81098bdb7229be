"""ReplicationControllers with the real kubectl and the replication manager: pods created and
owned, ``kubectl scale``, the table, adoption of matching orphans, cascading delete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _rc(namespace: str, replicas: int) -> dict[str, Any]:
    # No spec.selector: defaulted from the template's labels, as upstream.
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def _live_pods(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    items = kubectl.json("get", "pods", "-n", namespace, "-l", "app=web")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def _ready(kubectl: Kubectl, namespace: str, count: int) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        rc = kubectl.json("get", "rc", "web", "-n", namespace)
        status = rc.get("status") or {}
        settled = status.get("replicas") == status.get("readyReplicas") == count
        return rc if settled and len(_live_pods(kubectl, namespace)) == count else None

    return eventually_sync(ready, f"{count} ready replicas")


def test_replication_controller_keeps_its_pods(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    path = tmp_path / "rc.json"
    path.write_text(json.dumps(_rc(namespace, 2)))
    assert "replicationcontroller/web created" in kubectl.run("apply", "-f", str(path)).stdout
    rc = _ready(kubectl, namespace, 2)
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["metadata"]["labels"] == {"app": "web"}
    assert rc["status"]["observedGeneration"] == 1
    for pod in _live_pods(kubectl, namespace):
        owner = pod["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == (
            "ReplicationController",
            "web",
            True,
        )
        assert pod["metadata"]["generateName"] == "web-"
    row = kubectl.run("get", "rc", "web", "-n", namespace, "-o", "wide").stdout.splitlines()
    assert row[0].split() == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    cells = row[1].split()
    assert cells[:4] == ["web", "2", "2", "2"]
    assert cells[-3:] == ["web", "nginx:1.27", "app=web"]

    scaled = kubectl.run("scale", "rc", "web", "--replicas=3", "-n", namespace).stdout
    assert scaled.strip() == "replicationcontroller/web scaled"
    _ready(kubectl, namespace, 3)
    kubectl.run("scale", "rc", "web", "--replicas=1", "-n", namespace)
    _ready(kubectl, namespace, 1)
    events = kubectl.json("get", "events", "-n", namespace)["items"]
    reasons = {(e["reason"], (e.get("source") or {}).get("component")) for e in events}
    assert ("SuccessfulCreate", "replication-controller") in reasons
    assert ("SuccessfulDelete", "replication-controller") in reasons

    # A deleted pod is replaced.
    victim = _live_pods(kubectl, namespace)[0]["metadata"]["name"]
    kubectl.run("delete", "pod", victim, "-n", namespace, "--wait=false")
    eventually_sync(
        lambda: [p for p in _live_pods(kubectl, namespace) if p["metadata"]["name"] != victim],
        "a replacement pod",
    )

    # Deleting the controller deletes its pods (the garbage collector, foreground by kubectl).
    kubectl.run("delete", "rc", "web", "-n", namespace)
    eventually_sync(lambda: not _live_pods(kubectl, namespace), "the pods gone")
