"""Which Nodes a DaemonSet's pod belongs on, and which node a daemon pod targets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DAEMON_TOLERATIONS", "node_of", "node_wants_daemon_pod", "pin_to_node"]

DAEMON_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
"""Tolerations every daemon pod gets (``AddOrUpdateDaemonPodTolerations``)."""


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" and (not key or key == taint.get("key")):
            return True
        if key == taint.get("key") and toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_wants_daemon_pod(node: Mapping[str, Any], pod_spec: Mapping[str, Any]) -> bool:
    """Whether a daemon pod with ``pod_spec`` should run on ``node``."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = pod_spec.get("nodeSelector") or {}
    if any(labels.get(key) != value for key, value in selector.items()):
        return False
    tolerations = [*(pod_spec.get("tolerations") or ()), *DAEMON_TOLERATIONS]
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(
            tolerations, taint
        ):
            return False
    return True


def pin_to_node(pod: dict[str, Any], node_name: str) -> None:
    """Require ``node_name`` through node affinity and add the daemon tolerations."""
    spec = pod.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {})
    affinity["nodeAffinity"] = {
        **(affinity.get("nodeAffinity") or {}),
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        },
    }
    tolerations = list(spec.get("tolerations") or ())
    for toleration in DAEMON_TOLERATIONS:
        if toleration not in tolerations:
            tolerations.append(dict(toleration))
    spec["tolerations"] = tolerations


def node_of(pod: Mapping[str, Any]) -> str:
    """The node a daemon pod runs on, or the one its affinity targets before scheduling."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""
