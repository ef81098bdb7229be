"""CronJob (batch.tutorial.kubebuilder.io/v2): the schedule as fields instead of a cron string.

kubebuilder's multi-version tutorial: ``spec.schedule`` is an object of the five cron fields
(``minute``, ``hour``, ``dayOfMonth``, ``month``, ``dayOfWeek``), each optional and ``*`` when
absent. Everything else is as in v1. v2 is a *spoke*: it converts to and from the hub (v1),
and the webhook server's ``/convert`` answers the API server with these two functions.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cronjob_operator.api.v1 import cronjob as v1
from setpoint.api.resources import CustomResource, PrinterColumn

#: A cron field left out means every value.
EVERY = "*"


class ConversionFailed(ValueError):
    """A v1 schedule that v2 cannot hold (not five fields)."""


class CronSchedule(BaseModel):
    """A cron schedule, one field each; an absent field is ``*``."""

    minute: str | None = Field(default=None, description="The minute, 0-59.")
    hour: str | None = Field(default=None, description="The hour, 0-23.")
    day_of_month: str | None = Field(default=None, description="The day of the month, 1-31.")
    month: str | None = Field(default=None, description="The month, 1-12.")
    day_of_week: str | None = Field(default=None, description="The day of the week, 0-6.")

    def as_cron(self) -> str:
        """The five fields as a cron string (``*`` for each absent one)."""
        parts = (self.minute, self.hour, self.day_of_month, self.month, self.day_of_week)
        return " ".join(part if part is not None else EVERY for part in parts)

    @classmethod
    def from_cron(cls, schedule: str) -> CronSchedule:
        """The fields of a five-field cron string; ``*`` fields are left out."""
        parts = schedule.split(" ")
        if len(parts) != 5:
            raise ConversionFailed("invalid schedule: not a standard 5-field schedule")
        minute, hour, day_of_month, month, day_of_week = (
            None if part == EVERY else part for part in parts
        )
        return cls(
            minute=minute,
            hour=hour,
            day_of_month=day_of_month,
            month=month,
            day_of_week=day_of_week,
        )


class CronJobSpec(v1.CronJobSpec):
    """v1's spec with a structured schedule."""

    schedule: CronSchedule = Field(description="The schedule, one cron field at a time.")  # type: ignore[assignment]


class CronJob(
    CustomResource,
    group=v1.GROUP,
    version="v2",
    kind="CronJob",
    printer_columns=[
        PrinterColumn("Suspend", ".spec.suspend", "boolean"),
        PrinterColumn("Last Schedule", ".status.lastScheduleTime", "date"),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """CronJob is the Schema for the cronjobs API (v2: a structured schedule)."""

    spec: CronJobSpec
    status: v1.CronJobStatus | None = None

    def convert_to(self) -> v1.CronJob:
        """This object as the hub version: the schedule joined into a cron string."""
        spec = self.spec.model_dump(exclude={"schedule"})
        return v1.CronJob(
            spec=v1.CronJobSpec(schedule=self.spec.schedule.as_cron(), **spec), status=self.status
        )

    @classmethod
    def convert_from(cls, hub: v1.CronJob) -> CronJob:
        """The hub object in v2: its cron string split into fields."""
        spec = hub.spec.model_dump(exclude={"schedule"})
        return cls(
            spec=CronJobSpec(schedule=CronSchedule.from_cron(hub.spec.schedule), **spec),
            status=hub.status,
        )

    @classmethod
    def sample(cls) -> CronJob:
        """v1's sample in v2 (its own name: both versions' samples are one kind's objects)."""
        sample = cls.convert_from(v1.CronJob.sample())
        sample.metadata.name = "cronjob-sample-v2"
        return sample
