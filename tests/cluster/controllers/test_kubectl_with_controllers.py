"""kubectl against the controllers: cascading deletes, logs, wait --for=jsonpath."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def create(kubectl: Kubectl, manifest: dict[str, Any]) -> None:
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(manifest))


def config_map(namespace: str, name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **meta},
    }


def test_delete_cascade_foreground_waits_for_dependents(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, config_map(namespace, "owner"))
    owner = kubectl.json("get", "configmap", "owner", "-n", namespace)
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": True,
    }
    create(kubectl, config_map(namespace, "child", ownerReferences=[ref]))

    kubectl.run("delete", "configmap", "owner", "-n", namespace, "--cascade=foreground", "--wait")

    left = kubectl.run("get", "configmaps", "-n", namespace, "-o", "name").stdout.split()
    assert "configmap/owner" not in left
    assert "configmap/child" not in left


def test_delete_cascade_orphan_keeps_dependents(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, config_map(namespace, "owner"))
    owner = kubectl.json("get", "configmap", "owner", "-n", namespace)
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    create(kubectl, config_map(namespace, "child", ownerReferences=[ref]))

    kubectl.run("delete", "configmap", "owner", "-n", namespace, "--cascade=orphan", "--wait")

    child = kubectl.json("get", "configmap", "child", "-n", namespace)
    assert not child["metadata"].get("ownerReferences")


def test_wait_for_jsonpath_and_logs(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("run", "web", "-n", namespace, "--image=nginx:1.27")

    kubectl.run(
        "wait",
        "pod/web",
        "-n",
        namespace,
        "--for=jsonpath={.status.phase}=Running",
        "--timeout=30s",
    )
    kubectl.run("wait", "pod/web", "-n", namespace, "--for=condition=Ready", "--timeout=30s")
    logs = kubectl.run("logs", "web", "-n", namespace)

    assert "simulated" in logs.stdout
    described = kubectl.run("describe", "pod", "web", "-n", namespace).stdout
    assert f"Successfully assigned {namespace}/web to setpoint-node" in described
    assert "Started container web" in described
