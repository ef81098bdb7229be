"""``IndexedJob`` (``ctl.enisoc.com/v1``, the group of Metacontroller's example): a Job whose
Pods are numbered ``<name>-0`` .. ``<name>-<completions - 1>``, each told its index."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PrinterColumn


class IndexedJobSpec(BaseModel):
    """How many Pods must succeed, how many may run at once, and the Pod to run."""

    completions: int = Field(default=1, ge=0, description="Pods (indexes) that must succeed.")
    parallelism: int = Field(default=1, ge=1, description="Pods running at the same time.")
    template: dict[str, Any] = Field(description="The Pod template (metadata and spec).")


class IndexedJobStatus(BaseModel):
    """Pods by phase, and the ``Complete`` condition."""

    active: int = 0
    succeeded: int = 0
    failed: int = 0
    conditions: list[dict[str, Any]] = Field(default_factory=list)


class IndexedJob(
    CustomResource,
    group="ctl.enisoc.com",
    version="v1",
    kind="IndexedJob",
    printer_columns=[
        PrinterColumn("Completions", ".spec.completions", "integer"),
        PrinterColumn("Succeeded", ".status.succeeded", "integer"),
    ],
):
    """IndexedJob runs ``completions`` numbered Pods, ``parallelism`` at a time."""

    spec: IndexedJobSpec
    status: IndexedJobStatus | None = None

    @classmethod
    def sample(cls) -> IndexedJob:
        """Metacontroller's ``print-index``, with 4 completions."""
        container = {
            "name": "print-index",
            "image": "busybox",
            "command": ["sh", "-c", "echo $JOB_INDEX"],
        }
        return cls(
            metadata={"name": "print-index"},
            spec=IndexedJobSpec(
                completions=4,
                parallelism=2,
                template={
                    "metadata": {"labels": {"app": "print-index"}},
                    "spec": {"restartPolicy": "OnFailure", "containers": [container]},
                },
            ),
        )
