"""Memcached (cache.example.com/v1alpha1): operator-sdk's v4 sample, plus a version field.

``spec.size`` (1 to 3) and ``spec.containerPort`` are the original's; ``spec.version`` is this
example's Day-2 knob: it replaces the tag of the ``MEMCACHED_IMAGE`` image, and changing it
rolls the Deployment one pod at a time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PrinterColumn

# A container image tag, as the registry grammar allows it.
TAG_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"


class MemcachedSpec(BaseModel):
    """MemcachedSpec defines the desired state of Memcached."""

    size: int = Field(default=1, ge=1, le=3, description="The number of memcached pods (1 to 3).")
    container_port: int = Field(
        default=11211,
        ge=1,
        le=65535,
        alias="containerPort",
        description="The port memcached listens on in its container.",
    )
    version: str | None = Field(
        default=None,
        pattern=TAG_PATTERN,
        description=(
            "The memcached version: the tag given to the MEMCACHED_IMAGE image. Changing it "
            "rolls the pods one at a time. Unset: the image as MEMCACHED_IMAGE names it."
        ),
    )


class MemcachedStatus(BaseModel):
    """MemcachedStatus defines the observed state of Memcached."""

    conditions: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Available (the Deployment runs size available pods) and Degraded.",
    )


class Memcached(
    CustomResource,
    group="cache.example.com",
    version="v1alpha1",
    kind="Memcached",
    printer_columns=[
        PrinterColumn("Size", ".spec.size", "integer"),
        PrinterColumn("Version", ".spec.version"),
        PrinterColumn("Available", '.status.conditions[?(@.type=="Available")].status'),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """Memcached is the Schema for the memcacheds API."""

    spec: MemcachedSpec = Field(default_factory=MemcachedSpec)
    status: MemcachedStatus | None = None

    @classmethod
    def sample(cls) -> Memcached:
        """The sample of config/samples: three pods on memcached's usual port."""
        return cls.model_validate(
            {"metadata": {"name": "memcached-sample"}, "spec": {"size": 3, "containerPort": 11211}}
        )
