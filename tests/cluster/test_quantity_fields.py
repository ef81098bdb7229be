"""Quantity fields of built-in objects are stored as kube-apiserver stores them: decoded into a
``resource.Quantity`` and written back in canonical form (``1000m`` → ``"1"``, ``1024Mi`` →
``"1Gi"``, a JSON number → a string). A client that writes ``1000m`` and compares what it reads
back sees ``1``, as on a real cluster; custom resources keep what they were given."""

from __future__ import annotations

from typing import Any

from tests.cluster.raw_api import RawAPI


def _pod(name: str, resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]},
    }


async def test_pod_resources_are_stored_canonical(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    resources = {
        "requests": {"cpu": "1000m", "memory": "1024Mi", "ephemeral-storage": "1.5Gi"},
        "limits": {"cpu": 0.5, "memory": 1073741824},
    }
    created = await api.request("POST", path, _pod("sized", resources))
    assert created.status == 201, created.body
    stored = {
        "requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1536Mi"},
        "limits": {"cpu": "500m", "memory": "1073741824"},
    }
    assert created.body["spec"]["containers"][0]["resources"] == stored
    read = await api.request("GET", f"{path}/sized")
    assert read.body["spec"]["containers"][0]["resources"] == stored


async def test_canonical_values_are_kept_and_bad_ones_refused(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    kept = {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "2", "memory": "1e3"}}
    created = await api.request("POST", path, _pod("kept", kept))
    assert created.status == 201, created.body
    assert created.body["spec"]["containers"][0]["resources"] == kept
    bad = await api.request("POST", path, _pod("bad", {"requests": {"cpu": "lots"}}))
    assert bad.status == 422, bad.body


async def test_quota_hard_and_claim_requests_are_canonical(api: RawAPI, namespace: str) -> None:
    quota = {
        "metadata": {"name": "q"},
        "spec": {"hard": {"requests.memory": "2048Mi", "pods": "1e1", "requests.cpu": "0.5"}},
    }
    created = await api.request("POST", f"/api/v1/namespaces/{namespace}/resourcequotas", quota)
    assert created.status == 201, created.body
    assert created.body["spec"]["hard"] == {
        "requests.memory": "2Gi",
        "pods": "10",
        "requests.cpu": "500m",
    }
    claim = {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1024Mi"}},
        },
    }
    created = await api.request(
        "POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", claim
    )
    assert created.status == 201, created.body
    assert created.body["spec"]["resources"]["requests"] == {"storage": "1Gi"}
