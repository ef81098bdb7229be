"""Two versions of kubebuilder's tutorial CronJob: v1 (the hub) has ``schedule`` as a cron
string; v2 (stored) has it as fields, as in kubebuilder's multi-version tutorial."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.resources import CustomResource

GROUP = "batch.tutorial.kubebuilder.io"


class CronJobSpecV1(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schedule: str = ""
    suspend: bool | None = None


class CronJobV1(CustomResource, group=GROUP, version="v1", kind="CronJob"):
    """The hub."""

    spec: CronJobSpecV1 = Field(default_factory=CronJobSpecV1)


class CronSchedule(BaseModel):
    minute: str | None = None
    hour: str | None = None
    day_of_month: str | None = Field(default=None, alias="dayOfMonth")
    month: str | None = None
    day_of_week: str | None = Field(default=None, alias="dayOfWeek")

    model_config = ConfigDict(populate_by_name=True)


class CronJobSpecV2(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schedule: CronSchedule = Field(default_factory=CronSchedule)
    suspend: bool | None = None


class CronJobV2(CustomResource, group=GROUP, version="v2", kind="CronJob", storage=True):
    """The stored version: the schedule as fields."""

    spec: CronJobSpecV2 = Field(default_factory=CronJobSpecV2)

    def convert_to(self) -> CronJobV1:
        s = self.spec.schedule
        parts = [s.minute, s.hour, s.day_of_month, s.month, s.day_of_week]
        schedule = " ".join(part or "*" for part in parts)
        return CronJobV1(spec=CronJobSpecV1(schedule=schedule, suspend=self.spec.suspend))

    @classmethod
    def convert_from(cls, hub: CronJobV1) -> CronJobV2:
        parts = hub.spec.schedule.split()
        if len(parts) != 5:
            raise ValueError(f"spec.schedule {hub.spec.schedule!r} must have 5 fields")
        minute, hour, day_of_month, month, day_of_week = parts
        schedule = CronSchedule(
            minute=minute,
            hour=hour,
            day_of_month=day_of_month,
            month=month,
            day_of_week=day_of_week,
        )
        return cls(spec=CronJobSpecV2(schedule=schedule, suspend=hub.spec.suspend))
