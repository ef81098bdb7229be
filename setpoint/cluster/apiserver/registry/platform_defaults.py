"""Defaults of the built-in kinds beyond pods and workloads (``pkg/apis/*/v1/defaults.go``):
replication controllers, limit ranges, persistent volumes and claims, storage classes, CSI drivers,
network policies, horizontal pod autoscalers and priority classes. Only absent fields are
filled, as in :mod:`.builtin_defaults`, which applies these too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

#: Upstream's default target when an HPA names no metric (autoscaling/v2 defaults.go).
DEFAULT_HPA_CPU_UTILIZATION: Final = 80


def _spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    return spec if isinstance(spec, dict) else None


def _default_replication_controller(obj: dict[str, Any]) -> None:
    # SetDefaults_ReplicationController: selector and labels from the template's labels.
    spec = _spec(obj)
    if spec is None:
        return
    template = spec.get("template")
    template_labels = (
        (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    )
    if isinstance(template_labels, dict) and template_labels:
        if not spec.get("selector"):
            spec["selector"] = dict(template_labels)
        metadata = obj.get("metadata")
        if isinstance(metadata, dict) and not metadata.get("labels"):
            metadata["labels"] = dict(template_labels)
    spec.setdefault("replicas", 1)


def _default_persistent_volume(obj: dict[str, Any]) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    status = obj.get("status")
    if isinstance(status, dict) or status is None:
        status = obj.setdefault("status", {}) if status is None else status
        status.setdefault("phase", "Pending")


def _default_persistent_volume_claim(obj: dict[str, Any]) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("volumeMode", "Filesystem")
    status = obj.get("status")
    if status is None:
        status = obj["status"] = {}
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def _default_storage_class(obj: dict[str, Any]) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _default_csi_driver(obj: dict[str, Any]) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    spec.setdefault("requiresRepublish", False)
    spec.setdefault("seLinuxMount", False)
    spec.setdefault("volumeLifecycleModes", ["Persistent"])


def _default_network_policy(obj: dict[str, Any]) -> None:
    # SetDefaults_NetworkPolicy: Ingress always; Egress too when egress rules are given.
    spec = _spec(obj)
    if spec is None or spec.get("policyTypes"):
        return
    types = ["Ingress"]
    if spec.get("egress"):
        types.append("Egress")
    spec["policyTypes"] = types
    for rule in (spec.get("ingress") or []) + (spec.get("egress") or []):
        if isinstance(rule, dict):
            for port in rule.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _default_hpa(obj: dict[str, Any]) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {
                        "type": "Utilization",
                        "averageUtilization": DEFAULT_HPA_CPU_UTILIZATION,
                    },
                },
            }
        ]


def _default_limit_range(obj: dict[str, Any]) -> None:
    # SetDefaults_LimitRangeItem, Container items: default from max, defaultRequest from
    # default, then from min.
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        found_default = item.get("default")
        found_request = item.get("defaultRequest")
        default: dict[str, Any] = found_default if isinstance(found_default, dict) else {}
        request: dict[str, Any] = found_request if isinstance(found_request, dict) else {}
        for name, value in (item.get("max") or {}).items():
            default.setdefault(name, value)
        for name, value in default.items():
            request.setdefault(name, value)
        for name, value in (item.get("min") or {}).items():
            request.setdefault(name, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def _default_hpa_v1(obj: dict[str, Any]) -> None:
    spec = _spec(obj)
    if spec is not None:
        spec.setdefault("minReplicas", 1)


def _default_priority_class(obj: dict[str, Any]) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


#: The defaulters of these kinds, by (apiVersion, kind).
PLATFORM_DEFAULTERS: Final[dict[tuple[str, str], Callable[[dict[str, Any]], None]]] = {
    ("v1", "ReplicationController"): _default_replication_controller,
    ("v1", "PersistentVolume"): _default_persistent_volume,
    ("v1", "LimitRange"): _default_limit_range,
    ("v1", "PersistentVolumeClaim"): _default_persistent_volume_claim,
    ("storage.k8s.io/v1", "StorageClass"): _default_storage_class,
    ("storage.k8s.io/v1", "CSIDriver"): _default_csi_driver,
    ("networking.k8s.io/v1", "NetworkPolicy"): _default_network_policy,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): _default_hpa,
    ("autoscaling/v1", "HorizontalPodAutoscaler"): _default_hpa_v1,
    ("scheduling.k8s.io/v1", "PriorityClass"): _default_priority_class,
}
