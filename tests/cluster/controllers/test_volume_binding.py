"""Persistent volumes with the real kubectl: the default ``standard`` StorageClass, claims
provisioned and Bound, a StatefulSet's ``volumeClaimTemplates``, a pre-made volume bound to a
matching claim and released when the claim goes."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _apply(kubectl: Kubectl, tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / f"{secrets.token_hex(4)}.json"
    path.write_text(json.dumps(document))
    kubectl.run("apply", "-f", str(path))


def _claim(name: str, namespace: str, size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            **spec,
        },
    }


def _bound(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any]:
    def bound() -> dict[str, Any] | None:
        claim = kubectl.json("get", "pvc", name, "-n", namespace)
        return claim if claim.get("status", {}).get("phase") == "Bound" else None

    return eventually_sync(bound, f"claim {name} Bound")


def test_default_class_provisions_and_binds(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    classes = kubectl.run("get", "storageclass").stdout.splitlines()
    assert classes[0].split() == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert any(
        line.split()[:5]
        == ["standard", "(default)", "setpoint.dev/host-path", "Delete", "Immediate"]
        for line in classes[1:]
    )

    _apply(kubectl, tmp_path, _claim("data", namespace))
    claim = _bound(kubectl, namespace, "data")
    assert claim["spec"]["storageClassName"] == "standard"
    volume_name = claim["spec"]["volumeName"]
    assert volume_name == f"pvc-{claim['metadata']['uid']}"
    assert claim["status"]["capacity"] == {"storage": "1Gi"}
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    volume = kubectl.json("get", "pv", volume_name)
    assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert volume["status"]["phase"] == "Bound"
    assert volume["spec"]["claimRef"]["name"] == "data"
    assert Path(volume["spec"]["hostPath"]["path"]).is_dir()

    row = kubectl.run("get", "pvc", "data", "-n", namespace).stdout.splitlines()[1].split()
    assert row[:6] == ["data", "Bound", volume_name, "1Gi", "RWO", "standard"]
    pv_row = kubectl.run("get", "pv", volume_name).stdout.splitlines()[1].split()
    assert pv_row[:7] == [
        volume_name,
        "1Gi",
        "RWO",
        "Delete",
        "Bound",
        f"{namespace}/data",
        "standard",
    ]

    # The claim goes: its provisioned volume (reclaim policy Delete) and directory go too.
    kubectl.run("delete", "pvc", "data", "-n", namespace)
    eventually_sync(
        lambda: kubectl.run("get", "pv", volume_name, check=False).returncode != 0,
        "the provisioned volume deleted",
    )
    assert not Path(volume["spec"]["hostPath"]["path"]).exists()


def test_statefulset_claims_are_bound(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    _apply(
        kubectl,
        tmp_path,
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {
                "replicas": 2,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "2Gi"}},
                        },
                    }
                ],
            },
        },
    )
    for ordinal in (0, 1):
        eventually_sync(
            lambda ordinal=ordinal: (
                kubectl.run(
                    "get", "pvc", f"data-db-{ordinal}", "-n", namespace, check=False
                ).returncode
                == 0
            ),
            f"claim data-db-{ordinal}",
        )
        claim = _bound(kubectl, namespace, f"data-db-{ordinal}")
        assert claim["status"]["capacity"] == {"storage": "2Gi"}


def test_premade_volume_binds_to_a_matching_claim_and_is_released(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    name = f"manual-{secrets.token_hex(3)}"
    _apply(
        kubectl,
        tmp_path,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"disk": name}},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                "storageClassName": "",
                "hostPath": {"path": str(tmp_path / "disk")},
            },
        },
    )
    available = eventually_sync(
        lambda: kubectl.json("get", "pv", name).get("status", {}).get("phase") == "Available",
        "the volume Available",
    )
    assert available
    volume = kubectl.json("get", "pv", name)
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    # Too big a request, then a fitting one selecting the volume by label, with no class.
    _apply(kubectl, tmp_path, _claim("big", namespace, "10Gi", storageClassName=""))
    _apply(
        kubectl,
        tmp_path,
        _claim(
            "fits",
            namespace,
            "3Gi",
            storageClassName="",
            selector={"matchLabels": {"disk": name}},
        ),
    )
    claim = _bound(kubectl, namespace, "fits")
    assert claim["spec"]["volumeName"] == name
    assert claim["status"]["capacity"] == {"storage": "5Gi"}
    assert kubectl.json("get", "pvc", "big", "-n", namespace)["status"]["phase"] == "Pending"

    kubectl.run("delete", "pvc", "fits", "-n", namespace)
    released = eventually_sync(
        lambda: kubectl.json("get", "pv", name).get("status", {}).get("phase") == "Released",
        "the volume Released",
    )
    assert released
    kubectl.run("delete", "pv", name)


def test_a_claim_in_use_stays_until_its_pod_is_gone(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    _apply(kubectl, tmp_path, _claim("used", namespace))
    claim = _bound(kubectl, namespace, "used")
    _apply(
        kubectl,
        tmp_path,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "user", "namespace": namespace},
            "spec": {
                "containers": [{"name": "app", "image": "busybox:1.36"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "used"}}],
            },
        },
    )
    eventually_sync(
        lambda: kubectl.json("get", "pod", "user", "-n", namespace)["spec"].get("nodeName"),
        "the pod scheduled",
    )
    kubectl.run("delete", "pvc", "used", "-n", namespace, "--wait=false")
    held = kubectl.json("get", "pvc", "used", "-n", namespace)
    assert held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    row = kubectl.run("get", "pvc", "used", "-n", namespace).stdout.splitlines()[1].split()
    assert row[:2] == ["used", "Terminating"]

    kubectl.run("delete", "pod", "user", "-n", namespace)
    eventually_sync(
        lambda: kubectl.run("get", "pvc", "used", "-n", namespace, check=False).returncode != 0,
        "the claim gone with its pod",
    )
    volume = claim["spec"]["volumeName"]
    eventually_sync(
        lambda: kubectl.run("get", "pv", volume, check=False).returncode != 0,
        "its volume deleted",
    )
