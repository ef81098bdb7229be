"""CronJob (batch.tutorial.kubebuilder.io/v1): run a Job on a cron schedule.

The kubebuilder tutorial's types: ``schedule`` (cron syntax), ``startingDeadlineSeconds``,
``concurrencyPolicy`` (Allow, Forbid, Replace), ``suspend``, ``jobTemplate`` and the two history
limits; ``status`` lists the active Jobs and the last schedule time. This version is the
*hub* of conversion and the storage version (the tutorial's ``+kubebuilder:storageversion``).

One addition: a ``Ready`` condition saying when the next run is (or that the CronJob is
suspended), so that ``kubectl wait --for=condition=Ready`` and the demo can tell it scheduled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PreserveUnknownFields, PrinterColumn
from setpoint.models import ObjectReference

GROUP = "batch.tutorial.kubebuilder.io"

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]


class CronJobSpec(BaseModel):
    """When to run which Job, and what to keep."""

    schedule: str = Field(
        min_length=0,
        description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    )
    starting_deadline_seconds: int | None = Field(
        default=None,
        ge=0,
        description="Optional deadline in seconds for starting the job if it misses scheduled "
        "time for any reason. Missed jobs executions will be counted as failed ones.",
    )
    concurrency_policy: ConcurrencyPolicy | None = Field(
        default=None,
        description='Specifies how to treat concurrent executions of a Job: "Allow" (default) '
        'runs them concurrently; "Forbid" skips a run while the previous one is running; '
        '"Replace" cancels the running one and replaces it with a new one.',
    )
    suspend: bool | None = Field(
        default=None,
        description="Suspend subsequent executions (not the ones already started). "
        "Defaults to false.",
    )
    job_template: Annotated[dict[str, Any], PreserveUnknownFields()] = Field(
        description="The Job (a batch/v1 JobTemplateSpec: metadata and spec) to create."
    )
    successful_jobs_history_limit: int | None = Field(
        default=None, ge=0, description="The number of successful finished jobs to retain."
    )
    failed_jobs_history_limit: int | None = Field(
        default=None, ge=0, description="The number of failed finished jobs to retain."
    )


class CronJobStatus(BaseModel):
    """What the controller last saw."""

    active: list[ObjectReference] | None = Field(
        default=None, description="A list of pointers to currently running jobs."
    )
    last_schedule_time: datetime | None = Field(
        default=None, description="When the job was last successfully scheduled."
    )
    conditions: list[dict[str, Any]] | None = Field(
        default=None, description="Ready: the CronJob is scheduled (the message says when next)."
    )


class CronJob(
    CustomResource,
    group=GROUP,
    version="v1",
    kind="CronJob",
    storage=True,
    printer_columns=[
        PrinterColumn("Schedule", ".spec.schedule"),
        PrinterColumn("Suspend", ".spec.suspend", "boolean"),
        PrinterColumn("Last Schedule", ".status.lastScheduleTime", "date"),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """CronJob is the Schema for the cronjobs API."""

    spec: CronJobSpec
    status: CronJobStatus | None = None

    @classmethod
    def sample(cls) -> CronJob:
        """The tutorial's sample: busybox saying hello every minute."""
        return cls.model_validate(
            {
                "metadata": {"name": "cronjob-sample"},
                "spec": {
                    "schedule": "*/1 * * * *",
                    "startingDeadlineSeconds": 60,
                    "concurrencyPolicy": "Allow",
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "containers": [
                                        {
                                            "name": "hello",
                                            "image": "busybox",
                                            "args": [
                                                "/bin/sh",
                                                "-c",
                                                "date; echo Hello from the Kubernetes cluster",
                                            ],
                                        }
                                    ],
                                    "restartPolicy": "OnFailure",
                                }
                            }
                        }
                    },
                },
            }
        )
