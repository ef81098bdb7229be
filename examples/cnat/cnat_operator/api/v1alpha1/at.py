"""At (cnat.programming-kubernetes.info/v1alpha1): a command to run once, at a UTC time.

As in the original, the spec's two strings are not validated by the CRD: a schedule that is
not a time reaches the operator, which reports it in ``status`` and in a Warning Event.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PrinterColumn

#: The phases an At goes through, in order.
PENDING: Final = "PENDING"
RUNNING: Final = "RUNNING"
DONE: Final = "DONE"

#: ``status.result`` once DONE: the pod's own phase.
SUCCEEDED: Final = "Succeeded"
FAILED: Final = "Failed"


class AtSpec(BaseModel):
    """When to run what."""

    schedule: str = Field(
        default="",
        description='When to run the command, in UTC, as "2019-04-12T10:12:00Z".',
    )
    command: str = Field(
        default="",
        description="The command to run in a busybox container, split as a shell would "
        "(quotes group words), but run without a shell.",
    )


class AtStatus(BaseModel):
    """Where the At is in its life."""

    phase: str = Field(default="", description="PENDING, RUNNING or DONE.")
    result: str | None = Field(
        default=None, description="Once DONE: Succeeded or Failed (the pod's phase)."
    )
    message: str | None = Field(default=None, description="Why the At waits, or how its pod ended.")


class At(
    CustomResource,
    group="cnat.programming-kubernetes.info",
    version="v1alpha1",
    kind="At",
    printer_columns=[
        PrinterColumn("Schedule", ".spec.schedule"),
        PrinterColumn("Command", ".spec.command"),
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("Result", ".status.result"),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """At runs spec.command once, in pod <name>-pod, when spec.schedule has come."""

    spec: AtSpec = AtSpec()
    status: AtStatus | None = None

    @classmethod
    def sample(cls) -> At:
        """A past schedule, so the sample runs at once."""
        return cls(
            metadata={"name": "example-at"},
            spec=AtSpec(schedule="2019-04-12T10:12:00Z", command="echo YAY"),
        )
