"""Evictions and PodDisruptionBudgets (day-2 operations: drain): the ``pods/eviction``
subresource honours budgets as kube-apiserver's ``EvictionREST``, and the disruption controller
keeps each budget's status, so that ``kubectl drain`` evicts within the budget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/{ns}/pods"
BUDGETS = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"


async def _eventually(check: Callable[[], Awaitable[Any]]) -> Any:
    deadline = time.monotonic() + 20.0
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


def _budget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": spec,
    }


def _eviction(name: str, **delete_options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name},
    }
    if delete_options:
        body["deleteOptions"] = delete_options
    return body


async def _running_pods(api: RawAPI, ns: str, count: int, **labels: str) -> list[str]:
    names = [f"{next(iter(labels.values()))}-{index}" for index in range(count)]
    for name in names:
        reply = await api.request("POST", PODS.format(ns=ns), _pod(name, **labels))
        assert reply.status == 201, reply.body

    async def ready() -> bool:
        for name in names:
            pod = (await api.request("GET", f"{PODS.format(ns=ns)}/{name}")).body
            conditions = (pod.get("status") or {}).get("conditions") or []
            if not any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                return False
        return True

    await _eventually(ready)
    return names


async def _budget_status(api: RawAPI, ns: str, name: str, **wanted: int) -> dict[str, Any]:
    async def settled() -> dict[str, Any] | None:
        budget = (await api.request("GET", f"{BUDGETS.format(ns=ns)}/{name}")).body
        status = budget.get("status") or {}
        if status.get("observedGeneration") != budget["metadata"]["generation"]:
            return None
        if any(status.get(key) != value for key, value in wanted.items()):
            return None
        return budget

    return await _eventually(settled)  # type: ignore[no-any-return]


@pytest.fixture
async def api(local_cluster: BackgroundCluster) -> Any:
    async with raw_api(local_cluster.url, local_cluster.token) as client_:
        yield client_


async def test_budget_status_counts_healthy_pods(api: RawAPI, namespace: str) -> None:
    await _running_pods(api, namespace, 3, app="count")
    reply = await api.request(
        "POST",
        BUDGETS.format(ns=namespace),
        _budget("count", {"minAvailable": 2, "selector": {"matchLabels": {"app": "count"}}}),
    )
    assert reply.status == 201, reply.body
    budget = await _budget_status(api, namespace, "count", disruptionsAllowed=1)
    status = budget["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"]) == (3, 2, 3)
    (condition,) = status["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "observedGeneration")} == {
        "type": "DisruptionAllowed",
        "status": "True",
        "reason": "SufficientPods",
        "observedGeneration": 1,
    }
    # Raising the bar is seen at once: no disruption allowed any more.
    reply = await api.request(
        "PATCH",
        f"{BUDGETS.format(ns=namespace)}/count",
        data=b'{"spec":{"minAvailable":3}}',
        content_type="application/merge-patch+json",
    )
    assert reply.status == 200, reply.body
    budget = await _budget_status(api, namespace, "count", disruptionsAllowed=0)
    assert budget["status"]["conditions"][0]["reason"] == "InsufficientPods"


async def test_an_eviction_the_budget_forbids_is_429(api: RawAPI, namespace: str) -> None:
    names = await _running_pods(api, namespace, 2, app="tight")
    spec = {"minAvailable": 2, "selector": {"matchLabels": {"app": "tight"}}}
    await api.request("POST", BUDGETS.format(ns=namespace), _budget("tight", spec))
    await _budget_status(api, namespace, "tight", currentHealthy=2)
    path = f"{PODS.format(ns=namespace)}/{names[0]}/eviction"
    reply = await api.request("POST", path, _eviction(names[0]))
    assert reply.status == 429, reply.body
    assert reply.body["reason"] == "TooManyRequests"
    assert reply.body["message"] == (
        "Cannot evict pod as it would violate the pod's disruption budget."
    )
    assert reply.body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget tight needs 2 healthy pods and has 2 currently",
        }
    ]
    pod = await api.request("GET", f"{PODS.format(ns=namespace)}/{names[0]}")
    assert "deletionTimestamp" not in pod.body["metadata"]


async def test_an_allowed_eviction_takes_from_the_budget_and_marks_the_pod(
    api: RawAPI, namespace: str
) -> None:
    names = await _running_pods(api, namespace, 3, app="loose")
    spec = {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "loose"}}}
    await api.request("POST", BUDGETS.format(ns=namespace), _budget("loose", spec))
    # Bare pods have no controller to scale maxUnavailable by: none is expected, none may
    # go, and a Warning says why (as upstream).
    budget = await _budget_status(api, namespace, "loose", disruptionsAllowed=0, expectedPods=0)
    assert budget["status"]["conditions"][0]["reason"] == "InsufficientPods"

    async def warned() -> bool:
        events = (await api.request("GET", f"/api/v1/namespaces/{namespace}/events")).body
        return any(e["reason"] == "UnmanagedPods" for e in events["items"])

    await _eventually(warned)
    reply = await api.request(
        "PUT",
        f"{BUDGETS.format(ns=namespace)}/loose",
        {**budget, "spec": {"minAvailable": 2, "selector": spec["selector"]}},
    )
    assert reply.status == 200, reply.body
    await _budget_status(api, namespace, "loose", disruptionsAllowed=1)
    watch_from = (await api.request("GET", PODS.format(ns=namespace))).body["metadata"][
        "resourceVersion"
    ]
    path = f"{PODS.format(ns=namespace)}/{names[0]}/eviction"
    reply = await api.request("POST", path, _eviction(names[0]))
    assert reply.status == 201, reply.body
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    # The pod got the DisruptionTarget condition before it was deleted.
    events = await api.watch(
        f"{PODS.format(ns=namespace)}?watch=1&resourceVersion={watch_from}"
        f"&fieldSelector=metadata.name%3D{names[0]}&timeoutSeconds=1"
    )
    marked = [
        c
        for event in events
        for c in (event["object"].get("status") or {}).get("conditions") or []
        if c["type"] == "DisruptionTarget"
    ]
    assert marked and marked[0]["reason"] == "EvictionByEvictionAPI"
    assert marked[0]["message"] == "Eviction API: evicting"
    # The next one is refused until the pod is replaced (nothing replaces a bare pod).
    second = f"{PODS.format(ns=namespace)}/{names[1]}/eviction"
    reply = await api.request("POST", second, _eviction(names[1]))
    assert reply.status == 429, reply.body


async def test_eviction_edge_cases(api: RawAPI, namespace: str) -> None:
    names = await _running_pods(api, namespace, 2, app="edge")
    pods = PODS.format(ns=namespace)
    mismatch = await api.request("POST", f"{pods}/{names[0]}/eviction", _eviction("other"))
    assert (mismatch.status, mismatch.body["message"]) == (
        400,
        "name in URL does not match name in Eviction object",
    )
    missing = await api.request("POST", f"{pods}/nope/eviction", _eviction("nope"))
    assert (missing.status, missing.body["message"]) == (404, 'pods "nope" not found')
    # Two budgets over one pod: upstream answers 500 and evicts nothing.
    selector = {"matchLabels": {"app": "edge"}}
    for name in ("one", "two"):
        await api.request(
            "POST",
            BUDGETS.format(ns=namespace),
            _budget(name, {"minAvailable": 0, "selector": selector}),
        )
    await _budget_status(api, namespace, "two", disruptionsAllowed=2)
    reply = await api.request("POST", f"{pods}/{names[0]}/eviction", _eviction(names[0]))
    assert (reply.status, reply.body["message"]) == (
        500,
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
        "not support.",
    )
    await api.request("DELETE", f"{BUDGETS.format(ns=namespace)}/two")
    # A dry run changes nothing.
    reply = await api.request(
        "POST", f"{pods}/{names[0]}/eviction", _eviction(names[0], dryRun=["All"])
    )
    assert reply.status == 201, reply.body
    pod = await api.request("GET", f"{pods}/{names[0]}")
    assert "deletionTimestamp" not in pod.body["metadata"]
    assert not any(
        c["type"] == "DisruptionTarget" for c in pod.body["status"].get("conditions") or []
    )
    budget = await api.request("GET", f"{BUDGETS.format(ns=namespace)}/one")
    assert not budget.body["status"].get("disruptedPods")
    # A pod with no budget is simply deleted (with the eviction's grace period).
    await api.request("DELETE", f"{BUDGETS.format(ns=namespace)}/one")
    reply = await api.request(
        "POST", f"{pods}/{names[1]}/eviction", _eviction(names[1], gracePeriodSeconds=0)
    )
    assert reply.status == 201, reply.body

    async def gone() -> bool:
        return (await api.request("GET", f"{pods}/{names[1]}")).status == 404

    await _eventually(gone)


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[BackgroundCluster]:
    cluster = BackgroundCluster(in_memory=True, nodes=2).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.mark.slow  # a two-node cluster, a rollout and a drain with the real kubectl
def test_kubectl_drain_evicts_within_the_budget(
    two_nodes: BackgroundCluster, tmp_path: Path
) -> None:
    kubectl = Kubectl(two_nodes.kubeconfig_path, tmp_path / "cache")
    kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=3")
    kubectl.run("rollout", "status", "deployment/web", "--timeout=30s")
    kubectl.run("create", "pdb", "web", "--selector=app=web", "--min-available=3")
    kubectl.run("wait", "pdb/web", "--for=jsonpath={.status.currentHealthy}=3", "--timeout=30s")
    nodes = kubectl.run(
        "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"
    ).stdout.split()
    busiest = max(set(nodes), key=nodes.count)
    # The budget allows no disruption: drain cordons, then gives up after its timeout.
    blocked = kubectl.run("drain", busiest, "--ignore-daemonsets", "--timeout=3s", check=False)
    assert blocked.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in blocked.stderr
    assert (
        kubectl.run("get", "node", busiest, "-o", "jsonpath={.spec.unschedulable}").stdout == "true"
    )
    # Let one pod go at a time: each evicted pod is replaced on the other node before the next.
    kubectl.run("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
    drained = kubectl.run("drain", busiest, "--ignore-daemonsets", "--timeout=50s")
    assert f"node/{busiest} drained" in drained.stdout
    kubectl.run("rollout", "status", "deployment/web", "--timeout=30s")
    after = kubectl.run(
        "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"
    ).stdout.split()
    assert len(after) == 3 and busiest not in after
    kubectl.run("uncordon", busiest)
    assert kubectl.run("get", "node", busiest, "-o", "jsonpath={.spec.unschedulable}").stdout == ""
