"""HorizontalPodAutoscalers, served as ``autoscaling/v2`` (stored) and ``autoscaling/v1``.

``kubectl autoscale`` writes ``autoscaling/v1``, whose only target is
``targetCPUUtilizationPercentage``; it is stored as the ``v2`` CPU ``Utilization`` metric and
read back from it, and the ``v1`` status's ``currentCPUUtilizationPercentage`` comes from the
``v2`` current CPU metric. Metrics ``v1`` cannot express are kept, as upstream keeps them, in the
``autoscaling.alpha.kubernetes.io/metrics`` annotation of the ``v1`` view (and restored from it
on a ``v1`` write). Storage only: no controller scales anything yet.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/metrics"
_V2: Final = "autoscaling/v2"
_V1: Final = "autoscaling/v1"


def _is_cpu_utilization(metric: Any) -> bool:
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return False
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    return resource.get("name") == "cpu" and target.get("type") == "Utilization"


def to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v2`` form of a ``v1`` HorizontalPodAutoscaler."""
    stored = copy.deepcopy(obj)
    stored["apiVersion"] = _V2
    spec = stored.get("spec")
    metadata = stored.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    metrics: list[Any] = []
    if isinstance(spec, dict):
        percent = spec.pop("targetCPUUtilizationPercentage", None)
        if isinstance(percent, int):
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": percent},
                    },
                }
            )
        extra = annotations.pop(METRICS_ANNOTATION, None)
        if isinstance(extra, str):
            try:
                metrics.extend(m for m in json.loads(extra) if not _is_cpu_utilization(m))
            except (ValueError, TypeError):
                pass
        if metrics:
            spec["metrics"] = metrics
    if isinstance(metadata, dict):
        if annotations:
            metadata["annotations"] = annotations
        else:
            metadata.pop("annotations", None)
    status = stored.get("status")
    if isinstance(status, dict):
        current = status.pop("currentCPUUtilizationPercentage", None)
        if isinstance(current, int):
            status["currentMetrics"] = [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": current}},
                }
            ]
    return stored


def to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v1`` view of a stored ``v2`` HorizontalPodAutoscaler."""
    served = copy.deepcopy(obj)
    served["apiVersion"] = _V1
    spec = served.get("spec")
    if isinstance(spec, dict):
        metrics = spec.pop("metrics", None) or []
        spec.pop("behavior", None)
        others = []
        for metric in metrics:
            if _is_cpu_utilization(metric) and "targetCPUUtilizationPercentage" not in spec:
                target = metric["resource"]["target"]
                spec["targetCPUUtilizationPercentage"] = target.get("averageUtilization")
            else:
                others.append(metric)
        if others:
            metadata = served.setdefault("metadata", {})
            annotations = dict(metadata.get("annotations") or {})
            annotations[METRICS_ANNOTATION] = json.dumps(others, separators=(",", ":"))
            metadata["annotations"] = annotations
    status = served.get("status")
    if isinstance(status, dict):
        currents = status.pop("currentMetrics", None) or []
        status.pop("conditions", None)
        for metric in currents:
            resource = (metric or {}).get("resource") or {}
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if resource.get("name") == "cpu" and isinstance(utilization, int):
                status["currentCPUUtilizationPercentage"] = utilization
                break
    return served


class HorizontalPodAutoscalerBehaviour(KindBehaviour):
    """Converts ``autoscaling/v1`` writes and reads to and from the stored ``v2`` shape."""

    def to_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return to_v2(obj) if resource.version == "v1" else obj

    def from_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return to_v1(obj) if resource.version == "v1" else obj
