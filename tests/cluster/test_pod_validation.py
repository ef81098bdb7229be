"""Pod validation beyond the schema: what ``ValidatePodCreate`` requires (kube-apiserver 1.32)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.raw_api import RawAPI


def _pod(name: str, spec: dict[str, Any] | None) -> dict[str, Any]:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}}
    if spec is not None:
        pod["spec"] = spec
    return pod


def _causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["reason"], c["field"]) for c in body["details"]["causes"]]


@pytest.mark.parametrize("spec", [None, {}], ids=["no-spec", "empty-spec"])
async def test_pod_without_containers_is_invalid(
    api: RawAPI, namespace: str, spec: dict[str, Any] | None
) -> None:
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", _pod("p", spec))
    assert reply.status == 422, reply.body
    assert reply.body["message"] == 'Pod "p" is invalid: spec.containers: Required value'
    assert _causes(reply.body) == [("FieldValueRequired", "spec.containers")]


async def test_pod_container_without_image_is_invalid(api: RawAPI, namespace: str) -> None:
    pod = _pod("p", {"containers": [{"name": "c", "image": "busybox"}, {"name": "d"}]})
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert reply.status == 422, reply.body
    assert reply.body["message"] == 'Pod "p" is invalid: spec.containers[1].image: Required value'
    assert _causes(reply.body) == [("FieldValueRequired", "spec.containers[1].image")]


async def test_pod_container_names_are_dns_labels_and_unique(api: RawAPI, namespace: str) -> None:
    containers = [{"name": "c", "image": "busybox"}, {"name": "c", "image": "busybox"}]
    init = [{"name": "Bad_Name", "image": "busybox"}]
    pod = _pod("p", {"containers": containers, "initContainers": init})
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert reply.status == 422, reply.body
    # Upstream order: regular containers, then init containers.
    assert _causes(reply.body) == [
        ("FieldValueDuplicate", "spec.containers[1].name"),
        ("FieldValueInvalid", "spec.initContainers[0].name"),
    ]


async def test_pod_template_may_leave_the_image_out(api: RawAPI, namespace: str) -> None:
    """Workload templates may omit the image (set later by config management), pods may not."""
    labels = {"app": "d"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    reply = await api.request("POST", path, deployment)
    assert reply.status == 201, reply.body
