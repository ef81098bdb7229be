"""One step of a Job, planned from the Job and its pods (``job_controller.go`` ``syncJob``).

Pure: :func:`plan_job` returns the new status and what to create, delete and unblock; the
controller performs it. Finished pods are counted in two writes, as upstream: first their
uids join ``status.uncountedTerminatedPods`` (and their tracking finalizer is removed), then,
once the finalizer is gone, they move to ``status.succeeded``/``status.failed``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from setpoint.api.times import format_time, parse_time
from setpoint.cluster.controllers.workload_pods.deletion_ranking import pods_to_delete
from setpoint.cluster.controllers.workload_pods.pod_state import is_pod_ready, pod_phase

__all__ = [
    "COMPLETION_INDEX_ANNOTATION",
    "DEFAULT_POD_FAILURE_BACKOFF",
    "INDEX_FAILURE_COUNT_ANNOTATION",
    "JOB_TRACKING_FINALIZER",
    "MAX_POD_FAILURE_BACKOFF",
    "JobPlan",
    "completion_index",
    "finished_condition",
    "format_indexes",
    "match_pod_failure_policy",
    "parse_indexes",
    "plan_job",
]

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0

_BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
_MAX_FAILED_INDEXES_MESSAGE = "Job has exceeded the specified maximal number of failed indexes"
_DEADLINE_MESSAGE = "Job was active longer than specified deadline"
_COMPLETIONS_MESSAGE = "Reached expected number of succeeded pods"


@dataclass
class JobPlan:
    """What one sync of a Job should do."""

    status: dict[str, Any]
    create: int = 0
    #: Indexed Jobs: the completion index of each pod to create (``len == create``).
    create_indexes: list[int] = field(default_factory=list)
    #: backoffLimitPerIndex: the failures so far of each index to create.
    index_failures: dict[int, int] = field(default_factory=dict)
    delete: list[Mapping[str, Any]] = field(default_factory=list)
    remove_finalizer: list[Mapping[str, Any]] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    requeue_after: float | None = None


def parse_indexes(text: str | None) -> set[int]:
    """``"0-2,5"`` → {0, 1, 2, 5} (``status.completedIndexes``); bad parts are skipped."""
    result: set[int] = set()
    for part in (text or "").split(","):
        low, _, high = part.partition("-")
        try:
            first = int(low)
            last = int(high) if high else first
        except ValueError:
            continue
        result.update(range(first, last + 1))
    return result


def format_indexes(indexes: set[int]) -> str:
    """{0, 1, 2, 5} → ``"0-2,5"``."""
    parts: list[str] = []
    ordered = sorted(indexes)
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        first, last = ordered[start], ordered[end]
        parts.append(str(first) if first == last else f"{first}-{last}")
        start = end + 1
    return ",".join(parts)


def completion_index(pod: Mapping[str, Any]) -> int | None:
    """The pod's completion index (Indexed Jobs), from its annotation."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX_ANNOTATION)
    try:
        return int(str(text)) if text is not None else None
    except ValueError:
        return None


def _index_failure_count(pod: Mapping[str, Any]) -> int:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    try:
        return int(str(annotations.get(INDEX_FAILURE_COUNT_ANNOTATION, 0)))
    except ValueError:
        return 0


def finished_condition(job: Mapping[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` when the Job has finished (that condition is True)."""
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def _has_finalizer(pod: Mapping[str, Any]) -> bool:
    return JOB_TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or ())


def _deleting(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _only_replace_failed(job: Mapping[str, Any]) -> bool:
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or bool(spec.get("podFailurePolicy"))


def _is_failed(pod: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    """``isPodFailed``: Failed, or deleted before succeeding (unless only Failed is replaced)."""
    if pod_phase(pod) == "Failed":
        return True
    if _only_replace_failed(job):
        return False
    return _deleting(pod) and pod_phase(pod) != "Succeeded"


def _finish_time(pod: Mapping[str, Any]) -> datetime | None:
    latest: datetime | None = None
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        text = ((status.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if isinstance(text, str) and text:
            try:
                moment = parse_time(text)
            except ValueError:
                continue
            latest = moment if latest is None or moment > latest else latest
    if latest is None:
        text = (pod.get("metadata") or {}).get("deletionTimestamp") or (
            pod.get("metadata") or {}
        ).get("creationTimestamp")
        try:
            latest = parse_time(text) if isinstance(text, str) and text else None
        except ValueError:
            latest = None
    return latest


def _condition(type: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    stamp = format_time(now)
    return {
        "type": type,
        "status": "True",
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def _find(status: Mapping[str, Any], type: str) -> dict[str, Any] | None:
    for condition in status.get("conditions") or ():
        if condition.get("type") == type and condition.get("status") == "True":
            return condition  # type: ignore[no-any-return]
    return None


def _add(status: dict[str, Any], condition: dict[str, Any]) -> None:
    if _find(status, condition["type"]) is None:
        status["conditions"] = [
            *(c for c in status.get("conditions") or () if c.get("type") != condition["type"]),
            condition,
        ]


def _exit_code_match(
    pod: Mapping[str, Any], requirement: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    status = pod.get("status") or {}
    values = set(requirement.get("values") or ())
    wanted = requirement.get("containerName")
    for kind in ("initContainerStatuses", "containerStatuses"):
        for container in status.get(kind) or ():
            terminated = (container.get("state") or {}).get("terminated") or {}
            code = terminated.get("exitCode")
            if code in (None, 0) or (wanted and container.get("name") != wanted):
                continue
            matched = code in values
            if matched == (requirement.get("operator") == "In"):
                return container  # type: ignore[no-any-return]
    return None


def match_pod_failure_policy(
    job: Mapping[str, Any], pod: Mapping[str, Any]
) -> tuple[str | None, bool]:
    """``matchPodFailurePolicy``: (FailJob message or None, whether the failure counts)."""
    policy = (job.get("spec") or {}).get("podFailurePolicy") or {}
    meta = pod.get("metadata") or {}
    where = f"{meta.get('namespace')}/{meta.get('name')}"
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        message: str | None = None
        if rule.get("onExitCodes") is not None:
            container = _exit_code_match(pod, rule["onExitCodes"])
            if container is None:
                continue
            code = container["state"]["terminated"]["exitCode"]
            message = (
                f"Container {container.get('name')} for pod {where} failed with exit code "
                f"{code} matching {action} rule at index {index}"
            )
        elif rule.get("onPodConditions") is not None:
            conditions = (pod.get("status") or {}).get("conditions") or ()
            matched = next(
                (
                    c
                    for pattern in rule["onPodConditions"]
                    for c in conditions
                    if c.get("type") == pattern.get("type")
                    and c.get("status") == pattern.get("status", "True")
                ),
                None,
            )
            if matched is None:
                continue
            message = (
                f"Pod {where} has condition {matched.get('type')} matching {action} rule "
                f"at index {index}"
            )
        else:
            continue
        if action == "Ignore":
            return None, False
        if action == "FailJob":
            return message, True
        return None, True
    return None, True


def _success_policy_match(spec: Mapping[str, Any], completed: set[int]) -> str | None:
    """``matchSuccessPolicy`` (Indexed Jobs): the message of the first rule met, or None."""
    rules = (spec.get("successPolicy") or {}).get("rules") or ()
    if not completed:
        return None
    total = int(spec.get("completions") or 0)
    for index, rule in enumerate(rules):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = {i for i in parse_indexes(rule["succeededIndexes"]) if i < total}
            if not required:
                continue
            done = len(required & completed)
            if (count is None and done == len(required)) or (
                count is not None and done >= int(count)
            ):
                return f"Matched rules at index {index}"
        elif count is not None and len(completed) >= int(count):
            return f"Matched rules at index {index}"
    return None


def _restarts_past_limit(spec: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> bool:
    """``pastBackoffLimitOnFailure``: with restartPolicy OnFailure, container restarts count."""
    template_spec = (spec.get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        if pod_phase(pod) not in ("Running", "Pending"):
            continue
        status = pod.get("status") or {}
        for kind in ("initContainerStatuses", "containerStatuses"):
            restarts += sum(int(c.get("restartCount") or 0) for c in status.get(kind) or ())
    limit = int(spec.get("backoffLimit", 6))
    return restarts > 0 if limit == 0 else restarts >= limit


def _suspension(status: dict[str, Any], suspended: bool, now: datetime, plan: JobPlan) -> None:
    """The Suspended condition: True while ``spec.suspend``; False (resumed) afterwards.

    Resuming restarts ``startTime``, so activeDeadlineSeconds counts from the resume.
    """
    current = next(
        (c for c in status.get("conditions") or () if c.get("type") == "Suspended"), None
    )
    if suspended and (current is None or current.get("status") != "True"):
        condition = _condition("Suspended", "JobSuspended", "Job suspended", now)
        plan.events.append(("Normal", "Suspended", "Job suspended"))
    elif not suspended and current is not None and current.get("status") == "True":
        condition = {
            **_condition("Suspended", "JobResumed", "Job resumed", now),
            "status": "False",
        }
        plan.events.append(("Normal", "Resumed", "Job resumed"))
        status["startTime"] = format_time(now)
    else:
        return
    others = [c for c in status.get("conditions") or () if c.get("type") != "Suspended"]
    status["conditions"] = [*others, condition]


def _backoff_remaining(
    failed_pods: Sequence[Mapping[str, Any]],
    succeeded_pods: Sequence[Mapping[str, Any]],
    now: datetime,
) -> float:
    last_success = max(
        (t for t in (_finish_time(p) for p in succeeded_pods) if t is not None), default=None
    )
    failures = [
        t
        for t in (_finish_time(p) for p in failed_pods)
        if t is not None and (last_success is None or t > last_success)
    ]
    if not failures:
        return 0.0
    delay = DEFAULT_POD_FAILURE_BACKOFF
    for _ in range(1, len(failures)):
        delay = min(delay * 2, MAX_POD_FAILURE_BACKOFF)
    elapsed = (now - max(failures)).total_seconds()
    return 0.0 if delay < elapsed else delay - elapsed


def _set_count(status: dict[str, Any], name: str, value: int) -> None:
    if value:
        status[name] = value
    else:
        status.pop(name, None)


def plan_job(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], now: datetime) -> JobPlan:
    """Plan one sync of ``job`` given the pods it controls."""
    status = copy.deepcopy(dict(job.get("status") or {}))
    plan = JobPlan(status=status)
    if finished_condition(job) is not None:
        plan.remove_finalizer = [p for p in pods if _has_finalizer(p)]
        return plan
    spec = job.get("spec") or {}

    # Count finished pods once: uid → uncounted (finalizer removed) → counters.
    uncounted = status.get("uncountedTerminatedPods") or {}
    pending_succeeded = list(uncounted.get("succeeded") or ())
    pending_failed = list(uncounted.get("failed") or ())
    by_uid = {str((p.get("metadata") or {}).get("uid")): p for p in pods}
    for uids, counter in ((pending_succeeded, "succeeded"), (pending_failed, "failed")):
        for uid in list(uids):
            pod = by_uid.get(uid)
            if pod is None or not _has_finalizer(pod):
                uids.remove(uid)
                status[counter] = int(status.get(counter) or 0) + 1
    succeeded_pods = [p for p in pods if pod_phase(p) == "Succeeded"]
    failed_pods = [p for p in pods if _is_failed(p, job) and match_pod_failure_policy(job, p)[1]]
    fail_job_message: str | None = None
    for pod in pods:
        if not _has_finalizer(pod):
            continue
        uid = str((pod.get("metadata") or {}).get("uid"))
        if uid in pending_succeeded or uid in pending_failed:
            plan.remove_finalizer.append(pod)
        elif pod_phase(pod) == "Succeeded":
            pending_succeeded.append(uid)
            plan.remove_finalizer.append(pod)
        elif _is_failed(pod, job):
            message, counted = match_pod_failure_policy(job, pod)
            # Pods stopped because the Job already succeeded are not failures.
            if counted and _find(status, "SuccessCriteriaMet") is None:
                pending_failed.append(uid)
            if message is not None and fail_job_message is None:
                fail_job_message = message
            plan.remove_finalizer.append(pod)
    status["uncountedTerminatedPods"] = {
        key: value
        for key, value in (("succeeded", pending_succeeded), ("failed", pending_failed))
        if value
    }
    succeeded = int(status.get("succeeded") or 0) + len(pending_succeeded)
    failed = int(status.get("failed") or 0) + len(pending_failed)
    indexed = spec.get("completionMode") == "Indexed"
    completed: set[int] = set()
    if indexed:
        # An index counts once however many of its pods succeeded.
        completed = parse_indexes(status.get("completedIndexes"))
        completed |= {
            i for p in succeeded_pods if (i := completion_index(p)) is not None and i >= 0
        }
        completions_total = int(spec.get("completions") or 0)
        completed = {i for i in completed if i < completions_total}
        succeeded = len(completed)
        status["completedIndexes"] = format_indexes(completed)
        _set_count(status, "succeeded", succeeded)
    per_index_limit = spec.get("backoffLimitPerIndex") if indexed else None
    failed_indexes: set[int] = set()
    if per_index_limit is not None:
        for pod in failed_pods:
            index = completion_index(pod)
            if index is not None:
                count = _index_failure_count(pod) + 1
                plan.index_failures[index] = max(plan.index_failures.get(index, 0), count)
        failed_indexes = parse_indexes(status.get("failedIndexes")) | {
            i for i, count in plan.index_failures.items() if count > int(per_index_limit)
        }
        failed_indexes -= completed
        status["failedIndexes"] = format_indexes(failed_indexes)

    active = [p for p in pods if pod_phase(p) not in ("Succeeded", "Failed") and not _deleting(p)]
    terminating = [p for p in pods if _deleting(p) and pod_phase(p) not in ("Succeeded", "Failed")]
    suspended = bool(spec.get("suspend"))
    _suspension(status, suspended, now, plan)
    if not status.get("startTime") and not suspended:
        status["startTime"] = format_time(now)

    failure = _find(status, "FailureTarget")
    if failure is None and fail_job_message is not None:
        failure = _condition("FailureTarget", "PodFailurePolicy", fail_job_message, now)
    if failure is None and per_index_limit is not None:
        max_failed = spec.get("maxFailedIndexes")
        total = int(spec.get("completions") or 0)
        if max_failed is not None and len(failed_indexes) > int(max_failed):
            failure = _condition(
                "FailureTarget", "MaxFailedIndexesExceeded", _MAX_FAILED_INDEXES_MESSAGE, now
            )
        elif failed_indexes and len(completed | failed_indexes) >= total:
            failure = _condition("FailureTarget", "FailedIndexes", "Job has failed indexes", now)
    if failure is None:
        deadline = spec.get("activeDeadlineSeconds")
        started = status.get("startTime")
        # With backoffLimitPerIndex the limit is per index (upstream defaults backoffLimit
        # to MaxInt32 then).
        over_limit = per_index_limit is None and failed > int(spec.get("backoffLimit", 6))
        if over_limit or _restarts_past_limit(spec, pods):
            failure = _condition("FailureTarget", "BackoffLimitExceeded", _BACKOFF_MESSAGE, now)
        elif deadline is not None and started:
            expires = parse_time(started) + timedelta(seconds=int(deadline))
            if now >= expires:
                failure = _condition("FailureTarget", "DeadlineExceeded", _DEADLINE_MESSAGE, now)
            elif not suspended:
                plan.requeue_after = (expires - now).total_seconds()
    completions = spec.get("completions")
    parallelism = int(spec.get("parallelism", 1))
    success = _find(status, "SuccessCriteriaMet")
    if failure is None and success is None:
        reached = (
            succeeded >= int(completions)
            if completions is not None
            else succeeded > 0 and not active
        )
        policy_message = _success_policy_match(spec, completed) if indexed else None
        if policy_message is not None:
            success = _condition("SuccessCriteriaMet", "SuccessPolicy", policy_message, now)
        elif reached:
            success = _condition(
                "SuccessCriteriaMet", "CompletionsReached", _COMPLETIONS_MESSAGE, now
            )

    settled = not terminating and not pending_succeeded and not pending_failed
    if failure is not None:
        _add(status, failure)
        plan.delete = list(active)
        if not active and settled:
            _add(status, _condition("Failed", failure["reason"], failure["message"], now))
            plan.events.append(("Warning", failure["reason"], failure["message"]))
    elif success is not None:
        _add(status, success)
        plan.delete = list(active)
        if not active and settled:
            _add(status, _condition("Complete", success["reason"], success["message"], now))
            status["completionTime"] = format_time(now)
            plan.events.append(("Normal", "Completed", "Job completed"))
    elif not suspended:
        if completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            left = int(completions) - succeeded - len(failed_indexes)
            want = max(0, min(parallelism, left))
        if len(active) > want:
            plan.delete = pods_to_delete(active, len(active) - want, now)
        elif len(active) < want:
            remaining = _backoff_remaining(failed_pods, succeeded_pods, now)
            if remaining > 0:
                plan.requeue_after = min(plan.requeue_after or remaining, remaining)
            elif indexed:
                busy = {completion_index(p) for p in active} | completed | failed_indexes
                free = [i for i in range(int(completions or 0)) if i not in busy]
                plan.create_indexes = free[: want - len(active)]
                plan.create = len(plan.create_indexes)
            else:
                plan.create = want - len(active)
    else:
        plan.delete = list(active)

    _set_count(status, "active", len(active) - len(plan.delete) + plan.create)
    status["ready"] = sum(1 for p in active if is_pod_ready(p) and p not in plan.delete)
    status["terminating"] = len(terminating)
    return plan
