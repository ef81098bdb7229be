"""Pod facts shared by the workload controllers: template hash, availability, deletion order."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from setpoint.api.times import format_time
from setpoint.cluster.controllers.workload_pods.deletion_ranking import pods_to_delete
from setpoint.cluster.controllers.workload_pods.pod_from_template import pod_from_template
from setpoint.cluster.controllers.workload_pods.pod_state import is_pod_active, is_pod_available
from setpoint.cluster.controllers.workload_pods.template_hash import compute_hash, fnv1a_32

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
}


def test_fnv1a_matches_the_published_test_vectors() -> None:
    assert fnv1a_32(b"") == 0x811C9DC5
    assert fnv1a_32(b"a") == 0xE40C292C
    assert fnv1a_32(b"foobar") == 0xBF9CF968


def test_template_hash_is_stable_safe_and_changes_with_the_template() -> None:
    first = compute_hash(TEMPLATE)
    assert first == compute_hash({"spec": TEMPLATE["spec"], "metadata": TEMPLATE["metadata"]})
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", first)
    changed = {**TEMPLATE, "spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}
    assert compute_hash(changed) != first
    assert compute_hash(TEMPLATE, 1) != first


def _pod(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready_for: float | None = 100.0,
    created_ago: float = 1000.0,
    restarts: int = 0,
    cost: int | None = None,
) -> dict[str, Any]:
    conditions = []
    if ready_for is not None:
        conditions.append(
            {
                "type": "Ready",
                "status": "True",
                "lastTransitionTime": format_time(NOW - timedelta(seconds=ready_for)),
            }
        )
    metadata: dict[str, Any] = {
        "name": name,
        "creationTimestamp": format_time(NOW - timedelta(seconds=created_ago)),
    }
    if cost is not None:
        metadata["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    return {
        "metadata": metadata,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [{"name": "c", "restartCount": restarts}],
        },
    }


def _names(pods: list[Any]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def test_deletion_order_follows_upstream_ranking() -> None:
    pods = [
        _pod("ready-old", ready_for=10000, created_ago=20000),
        _pod("unscheduled", node="", phase="Pending", ready_for=None),
        _pod("pending", phase="Pending", ready_for=None),
        _pod("not-ready", ready_for=None),
        _pod("expensive-young", ready_for=1, created_ago=1, cost=10),
        _pod("ready-young", ready_for=1, created_ago=2),
    ]
    order = _names(pods_to_delete(pods, len(pods), NOW))
    assert order == [
        "unscheduled",
        "pending",
        "not-ready",
        "ready-young",
        "ready-old",
        "expensive-young",
    ]
    assert _names(pods_to_delete(pods, 2, NOW)) == ["unscheduled", "pending"]
    assert pods_to_delete(pods, 0, NOW) == []


def test_deletion_prefers_doubled_up_nodes_then_restarts() -> None:
    a = _pod("alone", node="n1")
    b = _pod("crowded", node="n2")
    c = _pod("crowded-too", node="n2", restarts=3)
    assert _names(pods_to_delete([a, b, c], 3, NOW)) == ["crowded-too", "crowded", "alone"]


def test_availability_needs_min_ready_seconds() -> None:
    pod = _pod("p", ready_for=5)
    assert is_pod_available(pod, 0, NOW)
    assert is_pod_available(pod, 4, NOW)
    assert not is_pod_available(pod, 5, NOW)
    assert not is_pod_available(_pod("q", ready_for=None), 0, NOW)


def test_active_excludes_terminal_and_deleting_pods() -> None:
    assert is_pod_active(_pod("p"))
    assert not is_pod_active(_pod("p", phase="Succeeded"))
    deleting = _pod("p")
    deleting["metadata"]["deletionTimestamp"] = format_time(NOW)
    assert not is_pod_active(deleting)


def test_pod_from_template_is_owned_and_named_after_the_owner() -> None:
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-abc", "namespace": "ns", "uid": "u1", "labels": {"x": "y"}},
    }
    template = {**TEMPLATE, "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}}}
    pod = pod_from_template(template, owner)
    assert pod["metadata"] == {
        "generateName": "web-abc-",
        "namespace": "ns",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-abc",
                "uid": "u1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert pod["spec"] == TEMPLATE["spec"]
    assert pod["spec"] is not TEMPLATE["spec"]


def test_template_hash_ignores_go_zero_values() -> None:
    # kubectl sends `creationTimestamp: null` in templates; Go hashes it as the zero value.
    with_null = {
        "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "resources": {}}]},
    }
    plain = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    }
    assert compute_hash(with_null) == compute_hash(plain)
