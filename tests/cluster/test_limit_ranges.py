"""LimitRanges applied at admission, with the real kubectl: defaults filled into new pods
(and the ``kubernetes.io/limit-ranger`` annotation), min/max/ratio enforced on containers, the
pod as a whole and claims' storage, with kube-apiserver's messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _create(kubectl: Kubectl, tmp_path: Path, document: dict[str, Any], check: bool = True) -> Any:
    path = tmp_path / f"{document['metadata']['name']}.json"
    path.write_text(json.dumps(document))
    return kubectl.run("create", "-f", str(path), check=check)


def _pod(name: str, namespace: str, resources: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "busybox:1.36"}
    if resources is not None:
        container["resources"] = resources
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container]},
    }


@pytest.fixture
def limited(kubectl: Kubectl, namespace: str, tmp_path: Path) -> str:
    _create(
        kubectl,
        tmp_path,
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "limits", "namespace": namespace},
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "500m", "memory": "256Mi"},
                        "defaultRequest": {"cpu": "250m"},
                        "max": {"cpu": "1", "memory": "1Gi"},
                        "min": {"cpu": "100m"},
                        "maxLimitRequestRatio": {"cpu": "4"},
                    },
                    {"type": "Pod", "max": {"memory": "1536Mi"}},
                    {"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}},
                ]
            },
        },
    )
    return namespace


def test_limit_range_is_defaulted(kubectl: Kubectl, limited: str) -> None:
    item = kubectl.json("get", "limits", "limits", "-n", limited)["spec"]["limits"][0]
    # SetDefaults_LimitRangeItem: defaultRequest takes the default limit where unset.
    assert item["defaultRequest"] == {"cpu": "250m", "memory": "256Mi"}


def test_defaults_fill_a_new_pod(kubectl: Kubectl, limited: str, tmp_path: Path) -> None:
    _create(kubectl, tmp_path, _pod("plain", limited))
    pod = kubectl.json("get", "pod", "plain", "-n", limited)
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "250m", "memory": "256Mi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; "
        "cpu, memory limit for container app"
    )
    assert pod["status"]["qosClass"] == "Burstable"


def test_constraints_are_enforced(kubectl: Kubectl, limited: str, tmp_path: Path) -> None:
    too_big = _create(
        kubectl,
        tmp_path,
        _pod("too-big", limited, {"limits": {"cpu": "2", "memory": "2Gi"}}),
        check=False,
    )
    assert too_big.returncode != 0
    assert (
        'pods "too-big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
        "maximum memory usage per Container is 1Gi, but limit is 2Gi, "
        "maximum memory usage per Pod is 1536Mi, but limit is 2Gi]"
    ) in too_big.stderr
    too_small = _create(
        kubectl,
        tmp_path,
        _pod("too-small", limited, {"requests": {"cpu": "50m"}, "limits": {"cpu": "100m"}}),
        check=False,
    )
    assert (
        'pods "too-small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
        in (too_small.stderr)
    )
    ratio = _create(
        kubectl,
        tmp_path,
        _pod("ratio", limited, {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}),
        check=False,
    )
    assert (
        'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 4, '
        "but provided ratio is 10.000000"
    ) in ratio.stderr
    assert kubectl.run("get", "pods", "-n", limited, "-o", "name").stdout == ""

    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "huge", "namespace": limited},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}},
    }
    refused = _create(kubectl, tmp_path, claim, check=False)
    assert (
        'persistentvolumeclaims "huge" is forbidden: maximum storage usage per '
        "PersistentVolumeClaim is 2Gi, but request is 5Gi"
    ) in refused.stderr


def test_requests_default_to_limits_without_limit_ranges(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    _create(kubectl, tmp_path, _pod("limited", namespace, {"limits": {"cpu": "1"}}))
    pod = kubectl.json("get", "pod", "limited", "-n", namespace)
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1"},
        "requests": {"cpu": "1"},
    }
    assert "kubernetes.io/limit-ranger" not in (pod["metadata"].get("annotations") or {})


def test_a_deleted_limit_range_no_longer_applies(
    kubectl: Kubectl, limited: str, tmp_path: Path
) -> None:
    kubectl.run("delete", "limits", "limits", "-n", limited)
    _create(kubectl, tmp_path, _pod("free", limited, {"limits": {"cpu": "3"}}))
    pod = kubectl.json("get", "pod", "free", "-n", limited)
    assert "kubernetes.io/limit-ranger" not in (pod["metadata"].get("annotations") or {})
