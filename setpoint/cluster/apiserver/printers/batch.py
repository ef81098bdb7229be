"""Tables of the ``batch`` group: jobs and cron jobs, as ``printers.go`` prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    CONTAINERS_DESCRIPTION,
    IMAGES_DESCRIPTION,
    NAME_COLUMN,
    NONE,
    Column,
    Printer,
    between,
    bool_pointer,
    field,
    format_label_selector,
    integer,
    items,
    mapping,
    meta,
    name_and_age,
    since,
    template_containers,
    text,
)

_CONTAINERS: Final = Column("Containers", priority=1, description=CONTAINERS_DESCRIPTION)
_IMAGES: Final = Column("Images", priority=1, description=IMAGES_DESCRIPTION)
_SELECTOR: Final = Column("Selector", priority=1, doc="batch.v1.JobSpec/selector")


def _has_condition(job: dict[str, Any], kind: str) -> bool:
    for condition in items(job, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def job_status(job: dict[str, Any]) -> str:
    """The STATUS column of a Job (``printJob``)."""
    if _has_condition(job, "Complete"):
        return "Complete"
    if _has_condition(job, "Failed"):
        return "Failed"
    if meta(job).get("deletionTimestamp"):
        return "Terminating"
    if _has_condition(job, "Suspended"):
        return "Suspended"
    if _has_condition(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _job_cells(job: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(job, now)
    spec = mapping(job, "spec")
    status = mapping(job, "status")
    succeeded = integer(status.get("succeeded"))
    completions = spec.get("completions")
    if isinstance(completions, int):
        shown = f"{succeeded}/{completions}"
    elif integer(spec.get("parallelism")) > 1:
        shown = f"{succeeded}/1 of {integer(spec.get('parallelism'))}"
    else:
        shown = f"{succeeded}/1"
    start = text(status.get("startTime"))
    end = text(status.get("completionTime"))
    if not start:
        duration = ""
    elif not end:
        duration = since(start, now)
    else:
        duration = between(start, end)
    names, images = template_containers(job, "spec", "template")
    return [
        name,
        job_status(job),
        shown,
        duration,
        age,
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


JOBS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Status", description="Status of the job."),
        Column("Completions", doc="batch.v1.JobStatus/succeeded"),
        Column("Duration", description="Time required to complete the job."),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _job_cells,
)


def _cron_job_cells(cron_job: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(cron_job, now)
    spec = mapping(cron_job, "spec")
    last = field(cron_job, "status", "lastScheduleTime")
    job_spec = mapping(spec, "jobTemplate", "spec")
    names, images = template_containers(job_spec, "template")
    return [
        name,
        text(spec.get("schedule")),
        text(spec.get("timeZone")) or NONE,
        bool_pointer(spec.get("suspend")),
        len(items(cron_job, "status", "active")),
        since(last, now) if last else NONE,
        age,
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


CRON_JOBS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Schedule", doc="batch.v1.CronJobSpec/schedule"),
        Column("Timezone", doc="batch.v1.CronJobSpec/timeZone"),
        Column("Suspend", type="boolean", doc="batch.v1.CronJobSpec/suspend"),
        Column("Active", type="integer", doc="batch.v1.CronJobStatus/active"),
        Column("Last Schedule", doc="batch.v1.CronJobStatus/lastScheduleTime"),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _cron_job_cells,
)

BATCH_PRINTERS: Final = {"jobs": JOBS, "cronjobs": CRON_JOBS}
