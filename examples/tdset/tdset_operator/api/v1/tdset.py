"""TDSet (schedule.rs/v1): a Deployment whose replicas follow time-of-day ranges.

Fields are snake_case in Python and camelCase in the CRD (``default_replica`` is
``defaultReplica``), as every custom resource's. The CRD keeps the original's validation:
hours 0-23, ``replica`` >= 0, ``defaultReplica`` >= 1, ``intervalMint`` 1-1440, and
``container``, ``schedulingConfig`` and ``defaultReplica`` required. ``timeZone`` is new (an
IANA name); the operator checks it, as the CRD cannot.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PrinterColumn


class ContainerSpec(BaseModel):
    """The one container of the Deployment's pods."""

    image: str = Field(description="The container image.")
    port: int = Field(description="The container port (named `tdset`).")


class ServiceSpec(BaseModel):
    """Accepted as in the original, which never created a Service."""

    port: int


class SchedulingRange(BaseModel):
    """A replica count for the hours from startTime to endTime (exclusive)."""

    start_time: int = Field(ge=0, le=23, description="First hour, 0-23.")
    end_time: int = Field(
        ge=0,
        le=23,
        description="Hour the range ends (exclusive), 0-23; at or before startTime, the range "
        "crosses midnight (22 to 2 is 22:00-01:59, 23 to 0 is 23:00-23:59, 5 to 5 the whole day).",
    )
    replica: int = Field(ge=0, description="Replicas during the range.")


class TDSetSpec(BaseModel):
    """What the Deployment runs, and how many replicas at which hours."""

    container: ContainerSpec
    service: ServiceSpec | None = None
    scheduling_config: list[SchedulingRange] = Field(
        description="Ranges of hours; the first that matches wins."
    )
    default_replica: int = Field(ge=1, description="Replicas outside every range.")
    interval_mint: int | None = Field(
        default=None,
        ge=1,
        le=1440,
        description="Accepted for compatibility with the original, which polled every "
        "intervalMint minutes; this operator wakes exactly at range boundaries instead.",
    )
    time_zone: str | None = Field(
        default=None,
        description='The IANA time zone of the hours, e.g. "Europe/Paris" (default UTC).',
    )


class TDSetStatus(BaseModel):
    """What the operator last did and saw."""

    desired_replicas: int | None = None
    available_replicas: int | None = None
    conditions: list[dict[str, Any]] = []


class TDSet(
    CustomResource,
    group="schedule.rs",
    version="v1",
    kind="TDSet",
    printer_columns=[
        PrinterColumn("Desired", ".status.desiredReplicas", "integer"),
        PrinterColumn("Available", ".status.availableReplicas", "integer"),
        PrinterColumn("Ready", '.status.conditions[?(@.type=="Available")].status'),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """TDSet keeps Deployment <name> at the replica count of the current hour's range."""

    spec: TDSetSpec
    status: TDSetStatus | None = None

    @classmethod
    def sample(cls) -> TDSet:
        """nginx with more replicas in the evening, 2 otherwise."""
        return cls.model_validate(
            {
                "metadata": {"name": "example-tdset"},
                "spec": {
                    "container": {"image": "nginx", "port": 80},
                    "schedulingConfig": [
                        {"startTime": 18, "endTime": 19, "replica": 5},
                        {"startTime": 19, "endTime": 21, "replica": 3},
                    ],
                    "defaultReplica": 2,
                },
            }
        )
