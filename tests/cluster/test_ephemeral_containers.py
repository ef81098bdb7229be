"""The ``pods/ephemeralcontainers`` subresource: the patches kubectl debug sends, PUT, upstream's
validation messages, the simulated kubelet's ``ephemeralContainerStatuses``, and attach to a
container without a process."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cluster.raw_api import RawAPI

STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def _debugger(name: str = "debugger", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", **extra}


async def _running_pod(api: RawAPI, namespace: str, name: str) -> str:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }
    created = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert created.status == 201, created.body
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


async def _until(api: RawAPI, path: str, check: Any) -> dict[str, Any]:
    for _ in range(100):
        found = await api.request("GET", path)
        if check(found.body):
            return found.body  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError(found.body.get("status"))


def _message(reply: Any) -> str:
    assert reply.status == 422, reply.body
    return str(reply.body["message"])


async def test_debug_patch_adds_a_container_the_kubelet_runs(api: RawAPI, namespace: str) -> None:
    path = await _running_pod(api, namespace, "web")
    ephemeral = path + "/ephemeralcontainers"
    got = await api.request("GET", ephemeral)
    assert got.status == 200 and got.body["kind"] == "Pod"
    added = await api.request(
        "PATCH",
        ephemeral,
        {"spec": {"ephemeralContainers": [_debugger(targetContainerName="app", stdin=True)]}},
        content_type=STRATEGIC,
    )
    assert added.status == 200, added.body
    stored = added.body["spec"]["ephemeralContainers"][0]
    assert stored["targetContainerName"] == "app"
    assert stored["terminationMessagePolicy"] == "File"  # defaulted as upstream
    second = await api.request(
        "PATCH",
        ephemeral,
        [
            {
                "op": "add",
                "path": "/spec/ephemeralContainers/-",
                "value": _debugger("once", command=["true"]),
            }
        ],
        content_type=JSON_PATCH,
    )
    assert second.status == 200, second.body
    pod = await _until(
        api,
        path,
        lambda p: len((p.get("status") or {}).get("ephemeralContainerStatuses") or []) == 2,
    )
    states = {s["name"]: s for s in pod["status"]["ephemeralContainerStatuses"]}
    assert "running" in states["debugger"]["state"]
    assert states["debugger"]["ready"] is False
    # Simulated: one with a command ends by itself (ephemeral containers never restart).
    await _until(
        api,
        path,
        lambda p: any(
            s["name"] == "once" and "terminated" in s["state"]
            for s in (p.get("status") or {}).get("ephemeralContainerStatuses") or []
        ),
    )
    assert pod["status"]["phase"] == "Running"


async def test_upstream_validation_messages(api: RawAPI, namespace: str) -> None:
    path = await _running_pod(api, namespace, "checked")
    ephemeral = path + "/ephemeralcontainers"
    forbidden = _debugger(
        ports=[{"containerPort": 80}],
        resources={"requests": {"cpu": "1"}},
        livenessProbe={"exec": {"command": ["true"]}},
        targetContainerName="nope",
    )
    reply = await api.request(
        "PATCH", ephemeral, {"spec": {"ephemeralContainers": [forbidden]}}, content_type=STRATEGIC
    )
    assert _message(reply) == (
        'Pod "checked" is invalid: ['
        'spec.ephemeralContainers[0].targetContainerName: Not found: "nope", '
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container, "
        "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral "
        "Container, "
        "spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral "
        "Container]"
    )
    duplicate = await api.request(
        "PATCH",
        ephemeral,
        {"spec": {"ephemeralContainers": [_debugger("app")]}},
        content_type=MERGE,
    )
    assert _message(duplicate) == (
        'Pod "checked" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "app"'
    )
    assert "ephemeralContainers" not in (await api.request("GET", path)).body["spec"]
    added = await api.request(
        "PATCH", ephemeral, {"spec": {"ephemeralContainers": [_debugger()]}}, content_type=MERGE
    )
    assert added.status == 200, added.body
    pod = added.body
    pod["spec"]["ephemeralContainers"] = []
    del pod["metadata"]["resourceVersion"]  # the kubelet writes the status meanwhile
    removed = await api.request("PUT", ephemeral, pod)
    assert _message(removed) == (
        'Pod "checked" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
        'containers "debugger" may not be removed\n'
    )
    changed = await api.request(
        "PATCH",
        ephemeral,
        [{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "alpine"}],
        content_type=JSON_PATCH,
    )
    assert _message(changed).startswith(
        'Pod "checked" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
        'containers "debugger" may not be changed\n'
    )
    # Only spec.ephemeralContainers is written through the subresource.
    relabelled = await api.request(
        "PATCH",
        ephemeral,
        {
            "metadata": {"labels": {"x": "y"}},
            "spec": {"containers": [{"name": "app", "image": "x"}]},
        },
        content_type=STRATEGIC,
    )
    assert relabelled.status == 200
    assert "labels" not in relabelled.body["metadata"]
    assert relabelled.body["spec"]["containers"][0]["image"] == "nginx"


async def test_a_new_pod_cannot_have_ephemeral_containers(api: RawAPI, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "early"},
        "spec": {
            "containers": [{"name": "app", "image": "nginx"}],
            "ephemeralContainers": [_debugger()],
        },
    }
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert _message(reply) == (
        'Pod "early" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create'
    )


async def test_attach_to_a_simulated_container_is_refused_as_by_a_kubelet(
    api: RawAPI, namespace: str
) -> None:
    path = await _running_pod(api, namespace, "quiet")
    await _until(api, path, lambda p: (p.get("status") or {}).get("phase") == "Running")
    reply = await api.request("POST", path + "/attach?container=app&stdout=true")
    assert reply.status == 400
    assert reply.body["message"] == f"container app not found in pod quiet_{namespace}"
    wrong = await api.request("POST", path + "/attach?container=other&stdout=true")
    assert wrong.body["message"] == "container other is not valid for pod quiet"
