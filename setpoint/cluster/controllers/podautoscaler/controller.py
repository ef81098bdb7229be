"""The HorizontalPodAutoscaler controller (see the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Final

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.api.times import format_time
from setpoint.cluster.apiserver.kinds.resource_metrics import ContainerUsage
from setpoint.cluster.apiserver.registry.scale_subresource import scale_of
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.podautoscaler.absent_metrics_apis import (
    MetricFailure,
    external_metric_failure,
    object_metric_failure,
    pods_metric_failure,
)
from setpoint.cluster.controllers.podautoscaler.replica_calculator import (
    MetricsError,
    Recommendation,
    replicas_for_resource,
    samples,
)
from setpoint.cluster.controllers.podautoscaler.scaling_rules import (
    ScalingHistory,
    longest_period,
    normalize,
)
from setpoint.cluster.controllers.scheduler.quantities import milli
from setpoint.cluster.controllers.workload_context import WriteError

HPAS: Final = "autoscaling/horizontalpodautoscalers"
#: What an autoscaler without metrics targets (autoscaling/v2's default).
DEFAULT_METRIC: Final = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}
#: ``--horizontal-pod-autoscaler-sync-period``.
SYNC_PERIOD_SECONDS: Final = 15.0


def milli_quantity(value: int) -> str:
    """``resource.NewMilliQuantity(value, DecimalSI).String()``: ``"250m"``, ``"2"``, ``"64M"``."""
    if value % 1000:
        return f"{value}m"
    units = value // 1000
    for suffix, size in (
        ("E", 10**18),
        ("P", 10**15),
        ("T", 10**12),
        ("G", 10**9),
        ("M", 10**6),
        ("k", 10**3),
    ):
        if units and units % size == 0:
            return f"{units // size}{suffix}"
    return str(units)


def _cannot_get_scale(why: str) -> _Unable:
    """The target's scale cannot be read: ``AbleToScale=False`` and a ``FailedGetScale`` Event."""
    return _Unable(
        "AbleToScale",
        "False",
        "FailedGetScale",
        f"the HPA controller was unable to get the target's current scale: {why}",
        "FailedGetScale",
        why,
    )


class _MetricFailed(Exception):
    """One metric gave no replica count."""

    def __init__(self, failure: MetricFailure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


class _Unable(Exception):
    """A step failed: the condition and Event to report (upstream's wording)."""

    def __init__(
        self, condition: str, status: str, reason: str, message: str, event: str, event_message: str
    ) -> None:
        super().__init__(message)
        self.condition = condition
        self.status = status
        self.reason = reason
        self.message = message
        self.event = event
        self.event_message = event_message


class HorizontalPodAutoscalerController(Controller):
    """Scales targets of ``autoscaling/v2`` HorizontalPodAutoscalers (package docstring)."""

    name: ClassVar[str] = "horizontal-pod-autoscaler"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._histories: dict[ObjectKey, ScalingHistory] = {}

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:horizontal-pod-autoscaler",
            field_manager="kube-controller-manager",
            component="horizontal-pod-autoscaler",
        )

    def watches(self) -> list[Watch]:
        return [Watch(HPAS, self._sync_later)]

    def _sync_later(self, hpa: Object) -> Iterable[ObjectKey]:
        # Upstream's queue holds every autoscaler back for one sync period (a fixed-interval
        # rate limiter): a change, its own status write included, is acted on within 15 s,
        # never more often. Pods and metrics are not watched: each sync reads them.
        self.enqueue_after(key_of(hpa), SYNC_PERIOD_SECONDS)
        return ()

    async def reconcile(self, key: ObjectKey) -> float | None:
        hpa = self.access.get(HPAS, key.namespace, key.name)
        if hpa is None:
            self._histories.pop(key, None)
            return None
        try:
            await self._reconcile(key, hpa)
        except WriteError as error:
            if error.code == 404:
                return None
            raise
        return SYNC_PERIOD_SECONDS

    async def _reconcile(self, key: ObjectKey, hpa: Mapping[str, Any]) -> None:
        spec = hpa.get("spec") or {}
        status = dict(hpa.get("status") or {})
        conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
        now = self.access.clock.now()

        def condition(type_: str, value: str, reason: str, message: str) -> None:
            _set_condition(conditions, type_, value, reason, message, now)

        try:
            served, target = self._target(key.namespace, spec)
        except _Unable as unable:
            self.access.event(hpa, "Warning", unable.event, unable.event_message)
            condition(unable.condition, unable.status, unable.reason, unable.message)
            await self._write_status(hpa, status, conditions, None, None, None, False, now)
            return
        scale = scale_of(served, dict(target))
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        observed = int((scale.get("status") or {}).get("replicas") or 0)
        condition(
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        min_replicas = int(spec.get("minReplicas") or 1)
        max_replicas = int(spec.get("maxReplicas") or 0)
        metric_statuses: list[dict[str, Any]] | None = None
        reason = ""
        if current == 0 and min_replicas != 0:
            desired = 0
            condition(
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
        elif current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        else:
            try:
                recommended, metric_name, metric_statuses = self._from_metrics(
                    hpa, scale, current, now
                )
            except _Unable as unable:
                self.access.event(hpa, "Warning", unable.event, unable.event_message)
                condition(unable.condition, unable.status, unable.reason, unable.message)
                await self._write_status(hpa, status, conditions, observed, current, [], False, now)
                return
            condition(
                "ScalingActive",
                "True",
                "ValidMetricFound",
                f"the HPA was able to successfully calculate a replica count from {metric_name}",
            )
            if recommended > current:
                reason = f"{metric_name} above target"
            elif recommended < current:
                reason = "All metrics below target"
            history = self._histories.setdefault(key, ScalingHistory())
            normalized = normalize(
                history, spec.get("behavior"), current, recommended, min_replicas, max_replicas, now
            )
            condition("AbleToScale", "True", *normalized.stabilized)
            condition(
                "ScalingLimited", "True" if normalized.limited else "False", *normalized.limit
            )
            desired = normalized.replicas
        rescale = desired != current
        if rescale:
            try:
                await self.access.write_scale(
                    served, key.namespace, target["metadata"]["name"], desired
                )
            except WriteError as error:
                self.access.event(
                    hpa,
                    "Warning",
                    "FailedRescale",
                    f"New size: {desired}; reason: {reason}; error: {error.message}",
                )
                condition(
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {error.message}",
                )
                await self._write_status(
                    hpa, status, conditions, observed, desired, metric_statuses, False, now
                )
                return
            condition(
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            self.access.event(
                hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}"
            )
            if spec.get("behavior") is not None:
                self._histories.setdefault(key, ScalingHistory()).record_change(
                    current, desired, now, longest_period(spec.get("behavior"))
                )
        await self._write_status(
            hpa, status, conditions, observed, desired, metric_statuses, rescale, now
        )

    def _target(
        self, namespace: str, spec: Mapping[str, Any]
    ) -> tuple[ServedResource, Mapping[str, Any]]:
        """The scale target's resource and object; :class:`_Unable` when it cannot be read."""
        ref = spec.get("scaleTargetRef") or {}
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        name = str(ref.get("name") or "")
        served = self.access.informers.resource_for_kind(api_version, kind)
        if served is None or not ("scale" in served.subresources or served.scale_spec is not None):
            group = api_version.rpartition("/")[0]
            why = f'no matches for kind "{kind}" in group "{group}"'
            raise _cannot_get_scale(why)
        target = self.access.read_stored(served, namespace, name)
        if target is None:
            plural = served.plural if not served.group else f"{served.plural}.{served.group}"
            why = f'{plural} "{name}" not found'
            raise _cannot_get_scale(why)
        return served, target

    def _from_metrics(
        self, hpa: Mapping[str, Any], scale: Mapping[str, Any], current: int, now: datetime
    ) -> tuple[int, str, list[dict[str, Any]]]:
        """The replica count the metrics ask for (the largest), the metric that asked for it,
        and ``currentMetrics``; :class:`_Unable` when no metric could be computed."""
        selector_text = (scale.get("status") or {}).get("selector") or ""
        if not selector_text:
            raise _Unable(
                "ScalingActive",
                "False",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
                "SelectorRequired",
                "selector is required",
            )
        try:
            selector = LabelSelector.parse(selector_text)
        except SelectorError as error:
            raise _Unable(
                "ScalingActive",
                "False",
                "InvalidSelector",
                f"the HPA target's scale selector could not be parsed: {error}",
                "InvalidSelector",
                f"couldn't convert selector into a corresponding internal selector object: {error}",
            ) from error
        namespace = hpa["metadata"].get("namespace") or ""
        pods = [
            pod
            for pod in self.access.list("pods", namespace)
            if selector.matches((pod.get("metadata") or {}).get("labels") or {})
        ]
        usages = self._usage(pods)
        best: tuple[int, str] | None = None
        statuses: list[dict[str, Any]] = []
        failures: list[MetricFailure] = []
        metrics = (hpa.get("spec") or {}).get("metrics") or [DEFAULT_METRIC]
        for metric in metrics:
            kind = metric.get("type")
            if kind in ("Resource", "ContainerResource"):
                try:
                    replicas, name, metric_status = self._resource_metric(
                        metric, namespace, pods, usages, current, now
                    )
                except _MetricFailed as failed:
                    failures.append(failed.failure)
                    continue
                statuses.append(metric_status)
                if best is None or replicas > best[0]:
                    best = (replicas, name)
            elif kind == "Pods":
                failures.append(pods_metric_failure(metric))
            elif kind == "Object":
                failures.append(object_metric_failure(metric, namespace))
            elif kind == "External":
                failures.append(external_metric_failure(metric, namespace))
            else:
                why = f'unknown metric source type "{kind}"'
                failures.append(MetricFailure("InvalidMetricSourceType", why, why))
        for failure in failures:
            # getUnableComputeReplicaCountCondition records one Event per failed metric.
            self.access.event(hpa, "Warning", failure.reason, failure.detail)
        # All metrics failed, or some did and the others would scale down: no decision.
        if best is None or (failures and best[0] < current):
            first = failures[0]
            raise _Unable(
                "ScalingActive",
                "False",
                first.reason,
                f"the HPA was unable to compute the replica count: {first.detail}",
                "FailedComputeMetricsReplicas",
                f"invalid metrics ({len(failures)} invalid out of {len(metrics)}), first error "
                f"is: {first.error}",
            )
        return best[0], best[1], statuses

    def _resource_metric(
        self,
        metric: Mapping[str, Any],
        namespace: str,
        pods: list[Mapping[str, Any]],
        usages: dict[str, list[ContainerUsage]],
        current: int,
        now: datetime,
    ) -> tuple[int, str, dict[str, Any]]:
        """A ``Resource`` or ``ContainerResource`` metric: the replicas it asks for, its name
        and its ``currentMetrics`` entry; :class:`_MetricFailed` when it cannot be computed."""
        kind = str(metric.get("type"))
        source = metric.get("resource" if kind == "Resource" else "containerResource") or {}
        resource = source.get("name") or ""
        container = str(source.get("container") or "") if kind == "ContainerResource" else ""
        target = source.get("target") or {}
        utilization = (
            target.get("averageUtilization") if target.get("type") == "Utilization" else None
        )
        average = (
            milli(target.get("averageValue")) if target.get("type") == "AverageValue" else None
        )
        try:
            recommendation = replicas_for_resource(
                current,
                pods,
                samples(usages, resource, container, namespace),
                resource,
                target_utilization=utilization,
                target_average=average,
                now=now,
                container=container,
            )
        except MetricsError as error:
            what = "utilization" if utilization is not None else "usage"
            message = f"failed to get {resource} {what}: {error}"
            reason = (
                "FailedGetResourceMetric"
                if kind == "Resource"
                else ("FailedGetContainerResourceMetric")
            )
            raise _MetricFailed(MetricFailure(reason, message, message)) from error
        name = (
            f"{resource} resource utilization (percentage of request)"
            if utilization is not None
            else f"{resource} resource"
        )
        return (
            recommendation.replicas,
            name,
            _metric_status(resource, recommendation, container),
        )

    def _usage(self, pods: list[Mapping[str, Any]]) -> dict[str, list[ContainerUsage]]:
        runtime = self.access.pod_runtime()
        if runtime is None:
            return {}
        found = {}
        for pod in pods:
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            usage = runtime.usage(dict(pod))
            if usage:
                found[pod["metadata"]["name"]] = usage
        return found

    async def _write_status(
        self,
        hpa: Mapping[str, Any],
        old: Mapping[str, Any],
        conditions: list[dict[str, Any]],
        current: int | None,
        desired: int | None,
        metrics: list[dict[str, Any]] | None,
        rescaled: bool,
        now: datetime,
    ) -> None:
        status: dict[str, Any] = {
            key: value for key, value in old.items() if key in ("lastScaleTime",)
        }
        status["observedGeneration"] = int(hpa["metadata"].get("generation") or 0)
        if current is not None:
            status["currentReplicas"] = current
        if desired is not None:
            status["desiredReplicas"] = desired
        if rescaled:
            status["lastScaleTime"] = format_time(now)
        if metrics:
            status["currentMetrics"] = metrics
        status["conditions"] = conditions
        if status == dict(old):
            return
        await self.access.update_status(HPAS, {**hpa, "status": status})


def _metric_status(
    resource: str, recommendation: Recommendation, container: str = ""
) -> dict[str, Any]:
    current: dict[str, Any] = {"averageValue": milli_quantity(recommendation.raw_average)}
    if recommendation.utilization is not None:
        current["averageUtilization"] = recommendation.utilization
    if container:
        return {
            "type": "ContainerResource",
            "containerResource": {"name": resource, "container": container, "current": current},
        }
    return {"type": "Resource", "resource": {"name": resource, "current": current}}


def _set_condition(
    conditions: list[dict[str, Any]],
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
) -> None:
    """Upstream's ``setCondition``: the transition time moves only when the status does."""
    for index, existing in enumerate(conditions):
        if existing.get("type") == type_:
            moved = existing.get("status") != status
            conditions[index] = {
                "type": type_,
                "status": status,
                "lastTransitionTime": format_time(now)
                if moved
                else existing.get("lastTransitionTime"),
                "reason": reason,
                "message": message,
            }
            return
    conditions.append(
        {
            "type": type_,
            "status": status,
            "lastTransitionTime": format_time(now),
            "reason": reason,
            "message": message,
        }
    )
