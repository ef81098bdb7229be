"""Replica counts from resource usage, as upstream's ``replica_calculator.go``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from setpoint.api.conditions import find_status_condition
from setpoint.api.times import parse_time
from setpoint.cluster.apiserver.kinds.resource_metrics import ContainerUsage
from setpoint.cluster.controllers.scheduler.quantities import milli

#: Usage this close to target changes nothing (``--horizontal-pod-autoscaler-tolerance``).
TOLERANCE: Final = 0.1
#: A pod this young may still be starting: its CPU is used only once it was ready a window long.
CPU_INITIALIZATION_PERIOD: Final = timedelta(minutes=5)
#: A pod that turned unready this soon after starting is taken as never ready yet.
INITIAL_READINESS_DELAY: Final = timedelta(seconds=30)


class MetricsError(Exception):
    """The replica count cannot be computed (the message is upstream's)."""


@dataclass(frozen=True, slots=True)
class PodSample:
    """One pod's usage of a resource (in milli-units), when it was read and over what window."""

    usage: int
    timestamp: datetime
    window: timedelta


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The replica count a metric asks for, with what the status reports."""

    replicas: int
    #: Average usage per pod, in milli-units (``currentMetrics[].resource.current.averageValue``).
    raw_average: int
    #: Percentage of the requests (None for an AverageValue target).
    utilization: int | None


def samples(
    usages: Mapping[str, Sequence[ContainerUsage]],
    resource: str,
    container: str = "",
    namespace: str = "",
) -> dict[str, PodSample]:
    """Per pod name, the sum of its containers' usage of ``resource`` (cpu or memory), or
    the usage of ``container`` only (a ``ContainerResource`` metric: every pod with metrics
    must report it, as ``getContainerMetrics``)."""
    found = {}
    for pod_name, containers in usages.items():
        if container:
            containers = [c for c in containers if c.name == container]
            if not containers:
                raise MetricsError(
                    f"unable to get metrics for resource {resource}: failed to get container "
                    f"metrics: container {container} not present in metrics for pod "
                    f"{namespace}/{pod_name}"
                )
        if not containers:
            continue
        if resource == "cpu":
            total = sum(c.cpu_nanocores for c in containers) // 1_000_000
        else:
            total = sum(c.memory_bytes for c in containers) * 1000
        newest = max(c.timestamp for c in containers)
        window = max(c.window for c in containers)
        found[pod_name] = PodSample(
            total, datetime.fromtimestamp(newest).astimezone(), timedelta(seconds=window)
        )
    return found


def _unready_for_cpu(pod: Mapping[str, Any], sample: PodSample, now: datetime) -> bool:
    """Whether a pod's CPU sample is left out (upstream ``groupPods``)."""
    condition = find_status_condition(pod, "Ready")
    started = (pod.get("status") or {}).get("startTime")
    if condition is None or not started:
        return True
    start = parse_time(started)
    transition_text = condition.get("lastTransitionTime")
    transition = parse_time(transition_text) if transition_text else start
    if start + CPU_INITIALIZATION_PERIOD > now:
        return condition.get("status") == "False" or sample.timestamp < transition + sample.window
    return condition.get("status") == "False" and start + INITIAL_READINESS_DELAY > transition


def _requests(pods: Sequence[Mapping[str, Any]], resource: str, only: str = "") -> dict[str, int]:
    """Per pod, the sum of its containers' requests of ``resource`` in milli-units (of
    container ``only`` when given)."""
    requests = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        total = 0
        for container in (pod.get("spec") or {}).get("containers") or []:
            if only and container.get("name") != only:
                continue
            value = ((container.get("resources") or {}).get("requests") or {}).get(resource)
            if value is None:
                raise MetricsError(
                    f"missing request for {resource} in container {container.get('name', '')} "
                    f"of Pod {name}"
                )
            total += milli(value)
        requests[name] = total
    return requests


def replicas_for_resource(
    current_replicas: int,
    pods: Sequence[Mapping[str, Any]],
    usage: Mapping[str, PodSample],
    resource: str,
    *,
    target_utilization: int | None,
    target_average: int | None,
    now: datetime,
    container: str = "",
) -> Recommendation:
    """The replica count that brings ``resource`` to its target (``GetResourceReplicas`` for a
    utilization target, ``GetRawResourceReplicas`` for an average value in milli-units)."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    if not usage:
        raise MetricsError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource "
            "metrics API"
        )
    ready: list[str] = []
    unready: set[str] = set()
    missing: set[str] = set()
    for pod in pods:
        name = pod["metadata"]["name"]
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") == "Failed":
            continue  # ignored
        if status.get("phase") == "Pending":
            unready.add(name)
            continue
        sample = usage.get(name)
        if sample is None:
            missing.add(name)
            continue
        if resource == "cpu" and _unready_for_cpu(pod, sample, now):
            unready.add(name)
            continue
        ready.append(name)
    metrics = {name: usage[name].usage for name in ready}
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    if target_utilization is not None:
        requests = _requests(pods, resource, container)

        def ratio(values: Mapping[str, int]) -> tuple[float, int, int]:
            total_usage = sum(values.values())
            total_requests = sum(requests[name] for name in values)
            if total_requests == 0:
                raise MetricsError(f"no metrics returned matched known pods for {resource}")
            utilization = int(total_usage * 100 / total_requests)
            return utilization / target_utilization, utilization, total_usage // len(values)

        def fallback(name: str, scaling_up: bool) -> int:
            # Scaling down: at the target (and at least all of the request).
            return 0 if scaling_up else requests[name] * max(100, target_utilization) // 100

    else:
        assert target_average is not None

        def ratio(values: Mapping[str, int]) -> tuple[float, int, int]:
            total_usage = sum(values.values())
            return total_usage / (target_average * len(values)), 0, total_usage // len(values)

        def fallback(name: str, scaling_up: bool) -> int:
            return 0 if scaling_up else target_average

    usage_ratio, utilization, raw = ratio(metrics)
    scale_up_with_unready = bool(unready) and usage_ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - usage_ratio) <= TOLERANCE:
            return _result(current_replicas, raw, utilization, target_utilization)
        return _result(math.ceil(usage_ratio * len(metrics)), raw, utilization, target_utilization)
    # Missing pods are taken at the target (scaling down) or at zero (scaling up); unready
    # ones at zero, and only when scaling up: neither may push the decision further.
    filled = dict(metrics)
    if usage_ratio != 1.0:
        for name in missing:
            filled[name] = fallback(name, usage_ratio > 1.0)
    if scale_up_with_unready:
        for name in unready:
            filled[name] = 0
    new_ratio, _, _ = ratio(filled)
    if abs(1.0 - new_ratio) <= TOLERANCE or (usage_ratio < 1.0) != (new_ratio < 1.0):
        return _result(current_replicas, raw, utilization, target_utilization)
    replicas = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and replicas > current_replicas) or (
        new_ratio > 1.0 and replicas < current_replicas
    ):
        return _result(current_replicas, raw, utilization, target_utilization)
    return _result(replicas, raw, utilization, target_utilization)


def _result(replicas: int, raw: int, utilization: int, target: int | None) -> Recommendation:
    return Recommendation(replicas, raw, utilization if target is not None else None)
