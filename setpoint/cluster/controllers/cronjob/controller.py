"""CronJob sync (``cronjob_controllerv2.go`` ``syncCronJob`` and ``cleanupFinishedJobs``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from setpoint.api.clock import FakeClock
from setpoint.api.owners import controller_of, controller_reference
from setpoint.api.times import format_time, parse_time
from setpoint.cluster.controllers.cronjob.cron_schedule import CronSyntaxError, parse_schedule
from setpoint.cluster.controllers.cronjob.schedule_times import (
    NEXT_SCHEDULE_DELTA,
    job_name,
    next_sync_delay,
    unmet_schedule_times,
)
from setpoint.cluster.controllers.job.job_accounting import finished_condition
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid

__all__ = ["COMPONENT", "RESOURCE", "SCHEDULED_TIMESTAMP_ANNOTATION", "CronJobController"]

COMPONENT = "cronjob-controller"
RESOURCE = "batch/cronjobs"
_JOBS = "batch/jobs"
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_TOO_MANY_MISSED = 100


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _reference(job: Mapping[str, Any]) -> dict[str, Any]:
    meta = _meta(job)
    return {
        "kind": "Job",
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "apiVersion": "batch/v1",
        "resourceVersion": meta.get("resourceVersion"),
    }


def _rfc3339(moment: datetime) -> str:
    """Go's ``time.RFC3339`` in the moment's own zone (``Z`` for UTC, else ``+hh:mm``)."""
    offset = moment.utcoffset()
    if not offset:
        return format_time(moment)
    return moment.replace(microsecond=0).isoformat()


class CronJobController:
    """Creates each CronJob's Jobs on schedule and keeps its history within the limits."""

    resource = RESOURCE
    watches = (_JOBS,)

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The CronJob that controls a Job."""
        reference = controller_of(obj)
        if reference is None or reference.get("kind") != "CronJob":
            return []
        return [(str(_meta(obj).get("namespace") or ""), str(reference.get("name")))]

    def _event(self, cronjob: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self._context.event(cronjob, type, reason, message, COMPONENT)

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one CronJob; returns seconds until the next scheduled time."""
        found = self._context.get(RESOURCE, namespace, name)
        if found is None:
            return None
        cronjob = copy.deepcopy(dict(found))
        uid = _meta(cronjob).get("uid")
        jobs = [
            copy.deepcopy(dict(job))
            for job in self._context.list(_JOBS, namespace)
            if controller_uid(job) == uid
        ]
        status = cronjob.setdefault("status", {})
        before = copy.deepcopy(status)
        try:
            delay = await self._sync(cronjob, jobs)
        except WriteError as error:
            if error.code in (404, 409):
                return None  # the watch brings the change that caused it
            raise
        await self._cleanup(cronjob, jobs)
        if not status.get("active"):
            status.pop("active", None)
        if status != before:
            try:
                await self._context.update_status(RESOURCE, cronjob)
            except WriteError as error:
                if error.code in (404, 409):
                    return None  # the watch brings the change that caused it
                raise
        return delay

    async def _sync(self, cronjob: dict[str, Any], jobs: list[dict[str, Any]]) -> float | None:
        status = cronjob["status"]
        active: list[dict[str, Any]] = status.setdefault("active", [])
        active_uids = {ref.get("uid") for ref in active}
        children = set()
        for job in jobs:
            job_uid = _meta(job).get("uid")
            children.add(job_uid)
            finished = finished_condition(job)
            if job_uid not in active_uids and finished is None:
                self._event(
                    cronjob,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {_meta(job)['name']}",
                )
            elif job_uid in active_uids and finished is not None:
                active[:] = [ref for ref in active if ref.get("uid") != job_uid]
                self._event(
                    cronjob,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {_meta(job)['name']}, condition: {finished}",
                )
            if finished == "Complete":
                completed = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if completed and (not last or parse_time(completed) > parse_time(last)):
                    status["lastSuccessfulTime"] = completed
        for ref in list(active):
            if ref.get("uid") not in children:
                active.remove(ref)
                self._event(
                    cronjob, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}"
                )
        if _meta(cronjob).get("deletionTimestamp"):
            return None
        spec = cronjob.get("spec") or {}
        zone: tzinfo = UTC
        if spec.get("timeZone"):
            try:
                zone = ZoneInfo(str(spec["timeZone"]))
            except (ZoneInfoNotFoundError, ValueError):
                name = spec["timeZone"]
                self._event(
                    cronjob,
                    "Warning",
                    "UnknownTimeZone",
                    f'invalid timeZone: "{name}": unknown time zone {name}',
                )
                return None
        if spec.get("suspend"):
            return None
        try:
            schedule = parse_schedule(str(spec.get("schedule") or ""))
        except CronSyntaxError as error:
            self._event(
                cronjob,
                "Warning",
                "UnparseableSchedule",
                f'unparseable schedule: "{spec.get("schedule")}" : {error}',
            )
            return None
        now = self._context.clock.now()
        unmet = unmet_schedule_times(cronjob, schedule, zone, now)
        # The 100 ms margin guards against timers that wake early; a manual clock (FakeClock)
        # fires exactly, and a user who advances it to 02:00 expects the 02:00 Job.
        margin = 0.0 if isinstance(self._context.clock, FakeClock) else NEXT_SCHEDULE_DELTA
        next_delay = next_sync_delay(cronjob, schedule, zone, now, margin)
        scheduled = unmet.most_recent
        if scheduled is None:
            return next_delay
        if unmet.missed > _TOO_MANY_MISSED:
            self._event(
                cronjob,
                "Warning",
                "TooManyMissedTimes",
                f"too many missed start times: {unmet.missed}. Set or decrease "
                ".spec.startingDeadlineSeconds or check clock skew",
            )
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and (now - scheduled).total_seconds() > int(deadline):
            self._event(
                cronjob,
                "Warning",
                "MissSchedule",
                "Missed scheduled time to start a job: "
                + scheduled.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000"),
            )
            return next_delay
        name = job_name(str(_meta(cronjob)["name"]), scheduled)
        last = status.get("lastScheduleTime")
        if any(ref.get("name") == name for ref in active) or (
            last and parse_time(last) == scheduled.astimezone(UTC)
        ):
            return next_delay
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self._event(
                cronjob,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy "
                "is Forbid",
            )
            return next_delay
        if policy == "Replace":
            for ref in list(active):
                running = self._context.get(_JOBS, str(ref.get("namespace")), str(ref.get("name")))
                if running is not None:
                    await self._delete_job(cronjob, running)
        job = self._job_from_template(cronjob, name, scheduled)
        try:
            created = await self._context.create(_JOBS, job)
        except WriteError as error:
            if error.reason != "AlreadyExists":
                if error.code == 403:
                    return None
                self._event(cronjob, "Warning", "FailedCreate", f"Error creating job: {error}")
                raise
            existing = self._context.get(_JOBS, str(_meta(cronjob).get("namespace")), name)
            if existing is None or controller_uid(existing) != _meta(cronjob).get("uid"):
                return next_delay
            if any(ref.get("uid") == _meta(existing).get("uid") for ref in active):
                return next_delay
            created = dict(existing)
        else:
            self._event(cronjob, "Normal", "SuccessfulCreate", f"Created job {name}")
        active.append(_reference(created))
        status["lastScheduleTime"] = format_time(scheduled)
        return next_delay

    def _job_from_template(
        self, cronjob: Mapping[str, Any], name: str, scheduled: datetime
    ) -> dict[str, Any]:
        template = copy.deepcopy((cronjob.get("spec") or {}).get("jobTemplate") or {})
        template_meta = template.get("metadata") or {}
        metadata: dict[str, Any] = {
            "name": name,
            "namespace": _meta(cronjob).get("namespace"),
            "labels": dict(template_meta.get("labels") or {}),
            "annotations": {
                **(template_meta.get("annotations") or {}),
                SCHEDULED_TIMESTAMP_ANNOTATION: _rfc3339(scheduled),
            },
            "ownerReferences": [controller_reference(cronjob)],
        }
        if not metadata["labels"]:
            del metadata["labels"]
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": metadata,
            "spec": template.get("spec") or {},
        }

    async def _delete_job(self, cronjob: dict[str, Any], job: Mapping[str, Any]) -> bool:
        name = str(_meta(job)["name"])
        try:
            await self._context.delete(
                _JOBS, str(_meta(job).get("namespace")), name, propagation="Background"
            )
        except WriteError as error:
            if error.code != 404:
                self._event(cronjob, "Warning", "FailedDelete", f"Deleted job: {error}")
                return False
        status = cronjob["status"]
        status["active"] = [
            ref for ref in status.get("active") or () if ref.get("uid") != _meta(job).get("uid")
        ]
        self._event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {name}")
        return True

    async def _cleanup(self, cronjob: dict[str, Any], jobs: list[dict[str, Any]]) -> None:
        """Delete the oldest finished Jobs beyond the history limits."""
        if _meta(cronjob).get("deletionTimestamp"):
            return
        spec = cronjob.get("spec") or {}
        for condition, field, default in (
            ("Complete", "successfulJobsHistoryLimit", 3),
            ("Failed", "failedJobsHistoryLimit", 1),
        ):
            limit = spec.get(field, default)
            if limit is None:
                continue
            finished = [j for j in jobs if finished_condition(j) == condition]
            surplus = len(finished) - int(limit)
            if surplus <= 0:
                continue
            finished.sort(
                key=lambda j: (
                    (j.get("status") or {}).get("startTime") is None,
                    (j.get("status") or {}).get("startTime") or "",
                    _meta(j).get("name"),
                )
            )
            for job in finished[:surplus]:
                await self._delete_job(cronjob, job)
