"""The real kubectl against the local cluster: the everyday commands and their output."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def test_configmap_lifecycle(kubectl: Kubectl, namespace: str) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "demo", "namespace": namespace},
        "data": {"a": "1"},
    }
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(manifest))
    assert kubectl.json("get", "configmap", "demo", "-n", namespace)["data"] == {"a": "1"}

    kubectl.run("label", "configmap", "demo", "-n", namespace, "tier=web")
    kubectl.run(
        "patch", "configmap", "demo", "-n", namespace, "--type=merge", "-p", '{"data":{"b":"2"}}'
    )
    listed = kubectl.json("get", "configmaps", "-n", namespace, "-l", "tier=web")
    assert [(i["metadata"]["name"], i["data"]) for i in listed["items"]] == [
        ("demo", {"a": "1", "b": "2"})
    ]

    kubectl.run("delete", "configmap", "demo", "-n", namespace)
    missing = kubectl.run("get", "configmap", "demo", "-n", namespace, check=False)
    assert missing.returncode != 0
    assert 'configmaps "demo" not found' in missing.stderr


def test_custom_resource_and_discovery(kubectl: Kubectl, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(crd))
    groups = json.loads(kubectl.run("get", "--raw", "/apis").stdout)
    assert group in [g["name"] for g in groups["groups"]]

    kubectl.run(
        "create",
        "--validate=false",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=json.dumps(widget("w1", group, size=2)),
    )
    fetched = kubectl.json("get", f"widgets.{group}", "w1", "-n", namespace)
    assert fetched["spec"] == {"size": 2, "color": "blue"}

    kubectl.run(
        "patch",
        f"widgets.{group}",
        "w1",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"size":5}}',
    )
    assert kubectl.json("get", "wd", "w1", "-n", namespace)["spec"]["size"] == 5

    rejected = kubectl.run(
        "create",
        "--validate=false",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=json.dumps(widget("bad", group, size=-1)),
        check=False,
    )
    assert rejected.returncode != 0
    assert (
        "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"
        in (rejected.stderr)
    )

    kubectl.run("delete", f"widgets.{group}", "w1", "-n", namespace)
    kubectl.run("delete", "crd", crd["metadata"]["name"])
    groups = json.loads(kubectl.run("get", "--raw", "/apis").stdout)
    assert group not in [g["name"] for g in groups["groups"]]


def test_conflict_watch_pagination_and_finalizer(kubectl: Kubectl, namespace: str) -> None:
    def configmap(name: str, **metadata: object) -> str:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, **metadata},
        }
        return json.dumps(body)

    for index in range(5):
        kubectl.run("create", "--validate=false", "-f", "-", stdin=configmap(f"c{index}"))
    paged = kubectl.run("get", "configmaps", "-n", namespace, "--chunk-size=2", "-o", "name")
    expected = [f"configmap/c{index}" for index in range(5)] + ["configmap/kube-root-ca.crt"]
    assert paged.stdout.split() == expected  # the root CA publisher's too, in name order

    stale = kubectl.json("get", "configmap", "c0", "-n", namespace)
    kubectl.run("label", "configmap", "c0", "-n", namespace, "fresh=yes")
    stale["data"] = {"from": "stale copy"}
    replaced = kubectl.run(
        "replace", "--validate=false", "-f", "-", stdin=json.dumps(stale), check=False
    )
    assert replaced.returncode != 0
    assert "Error from server (Conflict)" in replaced.stderr
    assert "the object has been modified" in replaced.stderr

    watch = kubectl.popen(
        "get",
        "configmaps",
        "-n",
        namespace,
        "--watch-only",
        "--output-watch-events",
        "-o",
        'jsonpath={.type} {.object.metadata.name}{"\\n"}',
        "--request-timeout=3s",
    )
    time.sleep(0.5)  # let the watch start; events after it are what it must show
    kubectl.run(
        "create",
        "--validate=false",
        "-f",
        "-",
        stdin=configmap("held", finalizers=["example.com/hold"]),
    )
    kubectl.run("delete", "configmap", "held", "-n", namespace, "--wait=false")
    deleting = kubectl.json("get", "configmap", "held", "-n", namespace)
    assert deleting["metadata"]["deletionTimestamp"]
    kubectl.run(
        "patch",
        "configmap",
        "held",
        "-n",
        namespace,
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/metadata/finalizers"}]',
    )
    out, _ = watch.communicate(timeout=30)
    assert out.split() == ["ADDED", "held", "MODIFIED", "held", "DELETED", "held"]
    missing = kubectl.run("get", "configmap", "held", "-n", namespace, check=False)
    assert "NotFound" in missing.stderr
