"""``Pods``, ``Object`` and ``External`` metrics, which need APIs this cluster does not serve.

Those metrics are read from ``custom.metrics.k8s.io`` (Pods, Object) and
``external.metrics.k8s.io`` (External), served on a real cluster by an adapter (Prometheus
Adapter, KEDA, ...) through API aggregation. Neither is served here, so each such metric fails
exactly as kube-controller-manager's autoscaler reports it when those APIs are absent: the
per-metric reason (``FailedGetPodsMetric``, ``FailedGetObjectMetric``,
``FailedGetExternalMetric``) with its Event, and the error that ``FailedComputeMetricsReplicas``
quotes (``horizontal.go``, ``replica_calculator.go``, ``metrics/client.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from setpoint.api.go_format import go_label_selector

NO_CUSTOM_METRICS_API: Final = (
    "unable to fetch metrics from custom metrics API: no custom metrics API "
    "(custom.metrics.k8s.io) registered"
)


@dataclass(frozen=True, slots=True)
class MetricFailure:
    """Why one metric gave no replica count, in upstream's words."""

    #: The ``ScalingActive`` reason and the per-metric Event's reason.
    reason: str
    #: The Event's message, and the condition's after "the HPA was unable to compute ...: ".
    detail: str
    #: The error ``invalid metrics (...), first error is: <error>`` quotes.
    error: str


def pods_metric_failure(metric: Mapping[str, Any]) -> MetricFailure:
    """A ``Pods`` metric: ``GetMetricReplicas`` cannot reach the custom metrics API."""
    name = ((metric.get("pods") or {}).get("metric") or {}).get("name", "")
    detail = f"unable to get metric {name}: {NO_CUSTOM_METRICS_API}"
    return MetricFailure(
        "FailedGetPodsMetric", detail, f"failed to get pods metric value: {detail}"
    )


def object_metric_failure(metric: Mapping[str, Any], namespace: str) -> MetricFailure:
    """An ``Object`` metric: ``GetObjectMetricReplicas`` (a ``Value`` target) or
    ``GetObjectPerPodMetricReplicas`` (``AverageValue``) cannot reach the custom metrics API."""
    source = metric.get("object") or {}
    name = (source.get("metric") or {}).get("name", "")
    described = source.get("describedObject") or {}
    target = (source.get("target") or {}).get("type")
    if target not in ("Value", "AverageValue"):
        detail = (
            "invalid object metric source: neither a value target nor an average value target "
            "was set"
        )
        return MetricFailure(
            "FailedGetObjectMetric", detail, f"failed to get object metric value: {detail}"
        )
    # Upstream's format string has its verbs out of order; this is what it prints.
    detail = (
        f"unable to get metric {name}: {described.get('kind', '')} on {namespace} "
        f"{described.get('name', '')}/{NO_CUSTOM_METRICS_API}"
    )
    error = detail if target == "Value" else f"failed to get {name} object metric: {detail}"
    return MetricFailure(
        "FailedGetObjectMetric", detail, f"failed to get object metric value: {error}"
    )


def external_metric_failure(metric: Mapping[str, Any], namespace: str) -> MetricFailure:
    """An ``External`` metric: the external metrics API answers 404 (it is not served)."""
    source = (metric.get("external") or {}).get("metric") or {}
    name = source.get("name", "")
    target = ((metric.get("external") or {}).get("target") or {}).get("type")
    if target not in ("Value", "AverageValue"):
        detail = (
            "invalid external metric source: neither a value target nor an average value "
            "target was set"
        )
        return MetricFailure("FailedGetExternalMetric", detail, detail)
    detail = (
        f"unable to get external metric {namespace}/{name}/"
        f"{go_label_selector(source.get('selector'))}: unable to fetch metrics from external "
        "metrics API: the server could not find the requested resource "
        f"(get {name}.external.metrics.k8s.io)"
    )
    error = (
        f"failed to get {name} external metric: {detail}"
        if target == "AverageValue"
        else f"failed to get external metric {name}: {detail}"
    )
    return MetricFailure("FailedGetExternalMetric", detail, error)
