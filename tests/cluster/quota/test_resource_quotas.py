"""ResourceQuotas on the local cluster, through the official client and the real kubectl: the
controller writes ``status.hard`` and ``status.used``, creates are charged at admission and
refused with kube-apiserver's messages, deletions give usage back, scopes select pods."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl


def _pod(name: str, resources: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "busybox:1.36"}
    if resources is not None:
        container["resources"] = resources
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], **spec},
    }


def _quota(core_v1: client.CoreV1Api, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    core_v1.create_namespaced_resource_quota(
        namespace,
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec},
    )

    def synced() -> dict[str, Any] | None:
        quota = core_v1.api_client.sanitize_for_serialization(
            core_v1.read_namespaced_resource_quota(name, namespace)
        )
        status = quota.get("status") or {}
        return status if set(status.get("used") or {}) == set(spec["hard"]) else None

    return eventually_sync(synced, f"status of quota {name}")


def _used(core_v1: client.CoreV1Api, namespace: str, name: str) -> dict[str, str]:
    quota = core_v1.read_namespaced_resource_quota(name, namespace)
    return dict(quota.status.used or {})


def _forbidden(call: Any) -> str:
    with pytest.raises(ApiException) as raised:
        call()
    assert raised.value.status == 403
    body = json.loads(raised.value.body)
    assert body["reason"] == "Forbidden"
    return str(body["message"])


COMPUTE = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}


def test_the_controller_writes_hard_and_used(core_v1: client.CoreV1Api, namespace: str) -> None:
    status = _quota(
        core_v1,
        namespace,
        "counts",
        hard={
            "pods": "10",
            "configmaps": "5",
            "requests.memory": "1024Mi",
            "count/jobs.batch": "2",
        },
    )
    # Hard as upstream serializes quantities (canonical); the namespace's kube-root-ca.crt
    # ConfigMap counts.
    assert status["hard"] == {
        "pods": "10",
        "configmaps": "5",
        "requests.memory": "1Gi",
        "count/jobs.batch": "2",
    }
    assert status["used"] == {
        "pods": "0",
        "configmaps": "1",
        "requests.memory": "0",
        "count/jobs.batch": "0",
    }


def test_creates_are_charged_at_once_and_refused_past_the_quota(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    _quota(
        core_v1,
        namespace,
        "compute",
        hard={"pods": "2", "requests.cpu": "1", "limits.memory": "2Gi"},
    )
    core_v1.create_namespaced_pod(namespace, _pod("first", COMPUTE))
    # Charged before the create returned: no controller pass needed.
    assert _used(core_v1, namespace, "compute") == {
        "pods": "1",
        "requests.cpu": "500m",
        "limits.memory": "1Gi",
    }
    big = {"requests": {"cpu": "600m", "memory": "1Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    message = _forbidden(lambda: core_v1.create_namespaced_pod(namespace, _pod("second", big)))
    assert message == (
        'pods "second" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, '
        "used: requests.cpu=500m, limited: requests.cpu=1"
    )
    core_v1.create_namespaced_pod(namespace, _pod("third", COMPUTE))
    message = _forbidden(lambda: core_v1.create_namespaced_pod(namespace, _pod("fourth", COMPUTE)))
    assert message == (
        'pods "fourth" is forbidden: exceeded quota: compute, requested: '
        "limits.memory=1Gi,pods=1,requests.cpu=500m, used: limits.memory=2Gi,pods=2,"
        "requests.cpu=1, limited: limits.memory=2Gi,pods=2,requests.cpu=1"
    )


def test_a_pod_without_the_tracked_requests_is_refused(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    _quota(core_v1, namespace, "compute", hard={"requests.cpu": "1", "limits.memory": "1Gi"})
    message = _forbidden(lambda: core_v1.create_namespaced_pod(namespace, _pod("bare")))
    assert message == (
        'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; '
        "requests.cpu for: app"
    )


def test_deleting_gives_the_usage_back(core_v1: client.CoreV1Api, namespace: str) -> None:
    _quota(core_v1, namespace, "objects", hard={"configmaps": "2", "services": "1"})
    core_v1.create_namespaced_config_map(namespace, {"metadata": {"name": "one"}})
    message = _forbidden(
        lambda: core_v1.create_namespaced_config_map(namespace, {"metadata": {"name": "two"}})
    )
    assert message == (
        'configmaps "two" is forbidden: exceeded quota: objects, requested: configmaps=1, '
        "used: configmaps=2, limited: configmaps=2"
    )
    core_v1.delete_namespaced_config_map("one", namespace)
    eventually_sync(
        lambda: _used(core_v1, namespace, "objects")["configmaps"] == "1", "usage given back"
    )
    core_v1.create_namespaced_config_map(namespace, {"metadata": {"name": "two"}})
    service = {
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}},
    }
    core_v1.create_namespaced_service(namespace, service)
    service["metadata"] = {"name": "web2"}
    message = _forbidden(lambda: core_v1.create_namespaced_service(namespace, service))
    assert "exceeded quota: objects, requested: services=1, used: services=1" in message


def test_scopes_select_the_pods_a_quota_counts(core_v1: client.CoreV1Api, namespace: str) -> None:
    _quota(core_v1, namespace, "best-effort", hard={"pods": "1"}, scopes=["BestEffort"])
    _quota(core_v1, namespace, "terminating", hard={"pods": "5"}, scopes=["Terminating"])
    core_v1.create_namespaced_pod(namespace, _pod("plain"))
    core_v1.create_namespaced_pod(namespace, _pod("sized", COMPUTE))
    core_v1.create_namespaced_pod(namespace, _pod("deadline", COMPUTE, activeDeadlineSeconds=60))
    assert _used(core_v1, namespace, "best-effort") == {"pods": "1"}
    assert _used(core_v1, namespace, "terminating") == {"pods": "1"}
    message = _forbidden(lambda: core_v1.create_namespaced_pod(namespace, _pod("another")))
    assert "exceeded quota: best-effort, requested: pods=1" in message
    # The controller's recount agrees with the charges.
    eventually_sync(
        lambda: _used(core_v1, namespace, "terminating") == {"pods": "1"}, "terminating recount"
    )


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def test_kubectl_get_quota_shows_requests_and_limits(
    core_v1: client.CoreV1Api, namespace: str, kubectl: Kubectl
) -> None:
    _quota(
        core_v1,
        namespace,
        "compute",
        hard={"pods": "4", "requests.cpu": "2", "limits.cpu": "4", "limits.memory": "4Gi"},
    )
    core_v1.create_namespaced_pod(namespace, _pod("first", COMPUTE))
    lines = kubectl.run("get", "quota", "-n", namespace).stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    row = lines[1]
    assert row.startswith("compute ")
    assert "pods: 1/4, requests.cpu: 500m/2" in row
    assert row.rstrip().endswith("limits.cpu: 1/4, limits.memory: 1Gi/4Gi")


def test_an_update_is_charged_for_what_it_adds(core_v1: client.CoreV1Api, namespace: str) -> None:
    _quota(core_v1, namespace, "ports", hard={"services.nodeports": "1", "requests.storage": "2Gi"})
    ports = [{"name": "a", "port": 80}, {"name": "b", "port": 81}]
    service = {"metadata": {"name": "web"}, "spec": {"ports": ports}}
    core_v1.create_namespaced_service(namespace, service)
    message = _forbidden(
        lambda: core_v1.patch_namespaced_service("web", namespace, {"spec": {"type": "NodePort"}})
    )
    assert message == (
        'services "web" is forbidden: exceeded quota: ports, requested: services.nodeports=2, '
        "used: services.nodeports=0, limited: services.nodeports=1"
    )
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    core_v1.create_namespaced_persistent_volume_claim(namespace, claim)
    assert _used(core_v1, namespace, "ports")["requests.storage"] == "1Gi"
    grow = {"spec": {"resources": {"requests": {"storage": "3Gi"}}}}
    message = _forbidden(
        lambda: core_v1.patch_namespaced_persistent_volume_claim("data", namespace, grow)
    )
    assert message == (
        'persistentvolumeclaims "data" is forbidden: exceeded quota: ports, requested: '
        "requests.storage=2Gi, used: requests.storage=1Gi, limited: requests.storage=2Gi"
    )
    # Updates that add nothing pass, quota or not.
    core_v1.patch_namespaced_service("web", namespace, {"metadata": {"labels": {"a": "b"}}})
