"""The scheduler's filters on plain objects: affinity fields, taints, resources, messages."""

from __future__ import annotations

from collections import Counter
from typing import Any

from setpoint.cluster.controllers.scheduler.node_fit import (
    NodeUsage,
    failure_message,
    unfit_reasons,
)
from setpoint.cluster.controllers.scheduler.quantities import milli, units


def node(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {
            "allocatable": {"cpu": "2", "memory": "1Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pinned_pod(node_name: str, **spec: Any) -> dict[str, Any]:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    return {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                }
            },
            "containers": [{"name": "app"}],
            **spec,
        }
    }


def test_match_fields_pin_a_pod_to_one_node() -> None:
    pod = pinned_pod("b")
    assert unfit_reasons(pod, node("b"), NodeUsage()) == []
    assert unfit_reasons(pod, node("a"), NodeUsage()) == [
        "node(s) didn't match Pod's node affinity/selector"
    ]


def test_an_unschedulable_node_takes_only_pods_that_tolerate_it() -> None:
    cordoned = node("a", unschedulable=True)
    assert unfit_reasons(pinned_pod("a"), cordoned, NodeUsage()) == ["node(s) were unschedulable"]
    tolerant = pinned_pod(
        "a",
        tolerations=[
            {
                "key": "node.kubernetes.io/unschedulable",
                "operator": "Exists",
                "effect": "NoSchedule",
            }
        ],
    )
    assert unfit_reasons(tolerant, cordoned, NodeUsage()) == []


def test_untolerated_taints_and_resources() -> None:
    tainted = node("a", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert unfit_reasons({"spec": {}}, tainted, NodeUsage()) == [
        "node(s) had untolerated taint {dedicated: db}"
    ]
    hungry = {
        "spec": {"containers": [{"resources": {"requests": {"cpu": "1500m", "memory": "2Gi"}}}]}
    }
    usage = NodeUsage()
    usage.add("other", milli("1"), 0)
    assert unfit_reasons(hungry, node("a"), usage) == ["Insufficient cpu", "Insufficient memory"]


def test_quantities() -> None:
    assert milli("100m") == 100
    assert milli("0.5") == 500
    assert units("1Gi") == 2**30
    assert units("1e3") == 1000
    assert units("500M") == 500_000_000


def test_failure_message_shape() -> None:
    reasons = Counter(
        {"Insufficient cpu": 1, "node(s) didn't match Pod's node affinity/selector": 2}
    )
    assert failure_message(3, reasons, 1) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found "
        "for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    assert failure_message(0, Counter(), 0) == "no nodes available to schedule pods"
