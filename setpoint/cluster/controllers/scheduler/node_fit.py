"""Which nodes a pod fits, and why the others do not (the default profile's filters)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from setpoint.cluster.controllers.scheduler.quantities import milli, units


@dataclass(slots=True)
class NodeUsage:
    """What the pods assigned to a node request."""

    pods: int = 0
    cpu_milli: int = 0
    memory: int = 0
    #: pod uid -> (cpu, memory), to subtract exactly what was added.
    members: dict[str, tuple[int, int]] = field(default_factory=dict)

    def add(self, uid: str, cpu: int, memory: int) -> None:
        if uid in self.members:
            return
        self.members[uid] = (cpu, memory)
        self.pods += 1
        self.cpu_milli += cpu
        self.memory += memory

    def remove(self, uid: str) -> None:
        taken = self.members.pop(uid, None)
        if taken is None:
            return
        self.pods -= 1
        self.cpu_milli -= taken[0]
        self.memory -= taken[1]


def pod_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """CPU (millicores) and memory (bytes) a pod requests: the sum over its containers, or the
    largest init container when that is more (``resourcehelper.PodRequests``)."""
    spec = pod.get("spec") or {}

    def request(container: Mapping[str, Any], name: str) -> object:
        resources = container.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        return requests.get(name, limits.get(name, 0))

    cpu = sum(milli(request(c, "cpu")) for c in spec.get("containers") or [])
    memory = sum(units(request(c, "memory")) for c in spec.get("containers") or [])
    for init in spec.get("initContainers") or []:
        cpu = max(cpu, milli(request(init, "cpu")))
        memory = max(memory, units(request(init, "memory")))
    return cpu, memory


def _selector_matches(
    pod: Mapping[str, Any], labels: Mapping[str, str], node_name: str = ""
) -> bool:
    spec = pod.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not affinity:
        return True
    terms = affinity.get("nodeSelectorTerms") or []
    return any(_term_matches(term, labels, node_name) for term in terms)


def _term_matches(term: Mapping[str, Any], labels: Mapping[str, str], node_name: str = "") -> bool:
    for expression in term.get("matchFields") or []:
        # Only metadata.name is a node field a selector may use (DaemonSet pods pin with it).
        values = expression.get("values") or []
        if expression.get("key") != "metadata.name":
            return False
        if expression.get("operator") == "In" and node_name not in values:
            return False
        if expression.get("operator") == "NotIn" and node_name in values:
            return False
    for expression in term.get("matchExpressions") or []:
        key = expression.get("key", "")
        operator = expression.get("operator")
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator in ("Gt", "Lt"):
            try:
                number, bound = int(labels[key]), int(values[0])
            except (KeyError, ValueError, IndexError):
                return False
            if (operator == "Gt" and not number > bound) or (
                operator == "Lt" and not number < bound
            ):
                return False
    return bool(term.get("matchExpressions") or term.get("matchFields"))


def _tolerates(tolerations: list[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for toleration in tolerations:
        effect = toleration.get("effect")
        if effect and effect != taint.get("effect"):
            continue
        operator = toleration.get("operator") or "Equal"
        key = toleration.get("key")
        if operator == "Exists" and (not key or key == taint.get("key")):
            return True
        if (
            operator == "Equal"
            and key == taint.get("key")
            and ((toleration.get("value") or "") == (taint.get("value") or ""))
        ):
            return True
    return False


def unfit_reasons(pod: Mapping[str, Any], node: Mapping[str, Any], usage: NodeUsage) -> list[str]:
    """Why ``pod`` cannot go to ``node`` (empty: it fits), in upstream's wording."""
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    if spec.get("unschedulable") and not _tolerates(tolerations, unschedulable_taint):
        return ["node(s) were unschedulable"]
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    if not ready:
        return ["node(s) were not ready"]
    if not _selector_matches(pod, meta.get("labels") or {}, str(meta.get("name", ""))):
        return ["node(s) didn't match Pod's node affinity/selector"]
    for taint in spec.get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not _tolerates(tolerations, taint):
            value = taint.get("value")
            shown = f"{taint.get('key')}: {value}" if value else str(taint.get("key"))
            return [f"node(s) had untolerated taint {{{shown}}}"]
    allocatable = status.get("allocatable") or {}
    reasons: list[str] = []
    if usage.pods + 1 > units(allocatable.get("pods", 0)):
        reasons.append("Too many pods")
    cpu, memory = pod_requests(pod)
    if cpu and usage.cpu_milli + cpu > milli(allocatable.get("cpu", 0)):
        reasons.append("Insufficient cpu")
    if memory and usage.memory + memory > units(allocatable.get("memory", 0)):
        reasons.append("Insufficient memory")
    return reasons


def failure_message(node_count: int, reasons: Counter[str], resource_failures: int) -> str:
    """``0/3 nodes are available: 1 Insufficient cpu, 2 node(s) ... preemption: ...``."""
    if node_count == 0:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    message = f"0/{node_count} nodes are available: {', '.join(parts)}."
    preemption: list[str] = []
    if resource_failures:
        preemption.append(f"{resource_failures} No preemption victims found for incoming pod")
    if node_count - resource_failures:
        preemption.append(
            f"{node_count - resource_failures} Preemption is not helpful for scheduling"
        )
    listed = ", ".join(sorted(preemption))
    return f"{message} preemption: 0/{node_count} nodes are available: {listed}."
