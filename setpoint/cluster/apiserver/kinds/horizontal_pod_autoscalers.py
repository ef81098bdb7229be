"""HorizontalPodAutoscalers in ``autoscaling/v1`` and ``v2``: one store, two shapes.

kube-apiserver serves both versions (``kubectl autoscale`` still creates ``v1``) and stores
``v2``. ``v1`` only knows a CPU utilization target (``targetCPUUtilizationPercentage``,
``currentCPUUtilizationPercentage``); as upstream, what it cannot say travels in annotations
when read through ``v1``: the other metrics (``autoscaling.alpha.kubernetes.io/metrics``), the
behavior (``…/behavior``), the current metrics (``…/current-metrics``) and the conditions
(``…/conditions``), each as JSON, and comes back when such an object is written through ``v1``.
Difference: upstream writes the metric annotations in the older ``v2beta1`` field names; here
they hold the ``v2`` objects as they are.
"""

from __future__ import annotations

import json
from typing import Any, Final

from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/behavior"
_ANNOTATIONS: Final = (
    METRICS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
)


def _is_cpu_utilization(metric: Any) -> bool:
    resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
    target = resource.get("target") or {}
    return (
        metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and target.get("type") == "Utilization"
    )


def _annotation(annotations: dict[str, Any], key: str) -> Any:
    text = annotations.pop(key, None)
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def v2_from_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A v1 HorizontalPodAutoscaler in the stored ``v2`` shape."""
    out = dict(obj)
    out["apiVersion"] = "autoscaling/v2"
    metadata = dict(obj.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    extra_metrics = _annotation(annotations, METRICS_ANNOTATION)
    behavior = _annotation(annotations, BEHAVIOR_ANNOTATION)
    current_metrics = _annotation(annotations, CURRENT_METRICS_ANNOTATION)
    conditions = _annotation(annotations, CONDITIONS_ANNOTATION)
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    out["metadata"] = metadata
    spec = dict(obj.get("spec") or {})
    metrics: list[Any] = []
    target = spec.pop("targetCPUUtilizationPercentage", None)
    if target is not None:
        metrics.append(
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": target},
                },
            }
        )
    if isinstance(extra_metrics, list):
        metrics.extend(m for m in extra_metrics if not _is_cpu_utilization(m))
    if metrics:
        spec["metrics"] = metrics
    if isinstance(behavior, dict):
        spec["behavior"] = behavior
    out["spec"] = spec
    if "status" in obj:
        status = dict(obj.get("status") or {})
        current = status.pop("currentCPUUtilizationPercentage", None)
        current_list: list[Any] = [
            m
            for m in (current_metrics if isinstance(current_metrics, list) else [])
            if not (m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu")
        ]
        if current is not None:
            current_list.insert(
                0,
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": current}},
                },
            )
        if current_list:
            status["currentMetrics"] = current_list
        if isinstance(conditions, list):
            status["conditions"] = conditions
        status.setdefault("desiredReplicas", 0)
        out["status"] = status
    return out


def v1_from_v2(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored (``v2``) HorizontalPodAutoscaler as ``autoscaling/v1`` shows it."""
    out = dict(obj)
    out["apiVersion"] = "autoscaling/v1"
    metadata = dict(obj.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    spec = dict(obj.get("spec") or {})
    metrics = spec.pop("metrics", None) or []
    behavior = spec.pop("behavior", None)
    others = []
    for metric in metrics:
        if _is_cpu_utilization(metric) and "targetCPUUtilizationPercentage" not in spec:
            target = metric["resource"]["target"].get("averageUtilization")
            if target is not None:
                spec["targetCPUUtilizationPercentage"] = target
                continue
        others.append(metric)
    if others:
        annotations[METRICS_ANNOTATION] = json.dumps(others, separators=(",", ":"))
    if behavior is not None:
        annotations[BEHAVIOR_ANNOTATION] = json.dumps(behavior, separators=(",", ":"))
    out["spec"] = spec
    status = dict(obj.get("status") or {})
    current_metrics = status.pop("currentMetrics", None) or []
    conditions = status.pop("conditions", None)
    other_current = []
    for metric in current_metrics:
        resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
        utilization = (resource.get("current") or {}).get("averageUtilization")
        if (
            metric.get("type") == "Resource"
            and resource.get("name") == "cpu"
            and utilization is not None
        ):
            status["currentCPUUtilizationPercentage"] = utilization
        else:
            other_current.append(metric)
    if other_current:
        annotations[CURRENT_METRICS_ANNOTATION] = json.dumps(other_current, separators=(",", ":"))
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = json.dumps(conditions, separators=(",", ":"))
    if "status" in obj:
        out["status"] = status
    if annotations:
        metadata["annotations"] = annotations
    out["metadata"] = metadata
    return out


class HorizontalPodAutoscalerBehaviour(KindBehaviour):
    """Converts between the served ``v1`` shape and the stored ``v2`` one."""

    def to_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return v2_from_v1(obj) if resource.version == "v1" else obj

    def from_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return v1_from_v2(obj) if resource.version == "v1" else obj
