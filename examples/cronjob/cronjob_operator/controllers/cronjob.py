"""Reconciles CronJobs: the kubebuilder tutorial's controller, step by step.

1. Read the CronJob and the Jobs it controls; sort them into active, successful and failed,
   and find the latest scheduled time (each Job carries it in an annotation).
2. Report ``status.active`` and ``status.lastScheduleTime``.
3. Delete the oldest finished Jobs beyond the history limits.
4. Unless suspended: find the run that is due (if any) and the next one; skip a run past
   ``startingDeadlineSeconds``; apply ``concurrencyPolicy`` (Forbid skips while a Job is
   active, Replace deletes the active Jobs); create the Job ``<name>-<unix time>``.
5. Run again at the next scheduled time (``requeue_at``), never polling.

A ``Ready`` condition (this port's addition) says when the next run is, or that the CronJob
is suspended.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import setpoint
from cronjob_operator.api.v1.cronjob import GROUP, CronJob
from cronjob_operator.operator import op
from cronjob_operator.schedule import CronSyntaxError, TooManyMissedRuns, next_schedule
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.api.times import format_time, parse_time
from setpoint.client import AlreadyExists
from setpoint.controller import set_controller_reference

#: The Job annotation holding the time the Job was scheduled for (the tutorial's).
SCHEDULED_TIME_ANNOTATION: Final = f"{GROUP}/scheduled-at"
#: Exactly what this reconciler does: less than the tutorial's RBAC markers, which also grant
#: writes of CronJobs and updates of Jobs it never makes.
PERMISSIONS: Final = [
    Permission(GROUP, "cronjobs", ["get", "list", "watch"]),
    Permission(GROUP, "cronjobs/status", ["get", "update", "patch"]),
    # The Jobs' owner reference blocks the CronJob's deletion (blockOwnerDeletion), which
    # clusters running the OwnerReferencesPermissionEnforcement admission plugin allow only to
    # this.
    Permission(GROUP, "cronjobs/finalizers", ["update"]),
    Permission("batch", "jobs", ["get", "list", "watch", "create", "delete"]),
]


def finished_type(job: dict[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` when the Job has finished (a True condition says so)."""
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def scheduled_time(job: dict[str, Any]) -> datetime | None:
    """The time the Job was scheduled for, from its annotation (None without one)."""
    text = ((job.get("metadata") or {}).get("annotations") or {}).get(SCHEDULED_TIME_ANNOTATION)
    return parse_time(text) if text else None


def job_for(cronjob: CronJob, scheduled: datetime) -> dict[str, Any]:
    """The Job of the run scheduled at ``scheduled``: the template, named ``<name>-<unix>``."""
    template = cronjob.spec.job_template
    metadata = template.get("metadata") or {}
    annotations = {**(metadata.get("annotations") or {})}
    annotations[SCHEDULED_TIME_ANNOTATION] = format_time(scheduled)
    job_metadata: dict[str, Any] = {
        "name": f"{cronjob.metadata.name}-{int(scheduled.timestamp())}",
        "namespace": cronjob.metadata.namespace,
        "annotations": annotations,
    }
    if metadata.get("labels"):
        job_metadata["labels"] = dict(metadata["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_metadata,
        "spec": template.get("spec") or {},
    }


def _reference(job: dict[str, Any]) -> dict[str, Any]:
    metadata = job["metadata"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": metadata["name"],
        "namespace": metadata.get("namespace"),
        "uid": metadata.get("uid"),
        "resourceVersion": metadata.get("resourceVersion"),
    }


def _start_time(job: dict[str, Any]) -> str:
    # Jobs that have not started sort first, as the tutorial's (nil start times first).
    return str((job.get("status") or {}).get("startTime") or "")


@op.reconciler(for_=CronJob, owns=[kinds.Job], infer_permissions=False, permissions=PERMISSIONS)
async def reconcile_cronjob(
    ctx: setpoint.Context, request: setpoint.Request
) -> setpoint.Result | None:
    cronjob: CronJob | None = await ctx.get()
    if cronjob is None:
        return None  # deleted: the garbage collector deletes its Jobs
    spec = cronjob.spec

    # 1. The Jobs this CronJob controls, by state.
    active: list[dict[str, Any]] = []
    successful: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    most_recent: datetime | None = None
    for job in await ctx.owned(kinds.Job):
        state = finished_type(job)
        (active if state is None else successful if state == "Complete" else failed).append(job)
        scheduled = scheduled_time(job)
        if scheduled is not None and (most_recent is None or scheduled > most_recent):
            most_recent = scheduled

    # The last schedule time survives its Jobs: the tutorial clears it when none is left, so
    # with a history limit of 0 it starts the deleted run again (from the creation time).
    previous = cronjob.status.last_schedule_time if cronjob.status is not None else None
    if previous is not None and (most_recent is None or previous > most_recent):
        most_recent = previous

    # 2. What is running, and when the last run was scheduled.
    await ctx.patch_status(
        {
            "active": [_reference(job) for job in active] or None,
            "lastScheduleTime": format_time(most_recent) if most_recent else None,
        }
    )

    # 3. Old finished Jobs beyond the history limits.
    for jobs, limit in (
        (failed, spec.failed_jobs_history_limit),
        (successful, spec.successful_jobs_history_limit),
    ):
        if limit is None:
            continue
        for job in sorted(jobs, key=_start_time)[: max(0, len(jobs) - limit)]:
            await ctx.client.delete(job, propagation_policy="Background", missing_ok=True)
            ctx.log.info("deleted old job %s", job["metadata"]["name"])

    # 4. Suspended: nothing more to do until the spec changes.
    if spec.suspend:
        await ctx.set_condition("Ready", "False", "Suspended", "the CronJob is suspended")
        return None

    now = ctx.now()
    created = cronjob.metadata.creation_timestamp
    earliest = most_recent or (parse_time(created) if created else now)
    try:
        missed, following = next_schedule(
            spec.schedule,
            earliest=earliest,
            now=now,
            starting_deadline_seconds=spec.starting_deadline_seconds,
        )
    except (CronSyntaxError, TooManyMissedRuns) as error:
        # Not retried: an edit of the spec wakes the reconcile again.
        await ctx.set_condition("Ready", "False", "InvalidSchedule", str(error))
        ctx.recorder.warning(cronjob, "InvalidSchedule", str(error))
        return None
    if missed is not None:
        await _run(ctx, cronjob, missed, active)
    # Written last: once it names the next run, this run's work is done.
    next_run = "never" if following is None else format_time(following)
    await ctx.set_condition("Ready", "True", "Scheduled", f"next run at {next_run}")
    return None if following is None else setpoint.Result(requeue_at=following)


async def _run(
    ctx: setpoint.Context, cronjob: CronJob, scheduled: datetime, active: list[dict[str, Any]]
) -> None:
    """Start the run scheduled at ``scheduled``, as ``concurrencyPolicy`` allows."""
    policy = cronjob.spec.concurrency_policy
    if policy == "Forbid" and active:
        ctx.log.info("concurrency policy blocks concurrent runs, skipping; %d active", len(active))
        return
    if policy == "Replace":
        for job in active:
            await ctx.client.delete(job, propagation_policy="Background", missing_ok=True)
    job = job_for(cronjob, scheduled)
    set_controller_reference(cronjob, job)
    try:
        await ctx.client.create(job)
    except AlreadyExists:
        return  # created by an earlier run whose write the cache has not seen yet
    ctx.recorder.normal(cronjob, "SuccessfulCreate", f"Created job {job['metadata']['name']}")
