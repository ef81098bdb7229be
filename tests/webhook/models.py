"""A typed custom resource for the webhook tests (an older copy of its CRD: it knows fewer
fields than the objects sent to it, as in controller-runtime #2931)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.resources import CustomResource


class WidgetPort(BaseModel):
    """A port (this version knows ``target`` and ``port``)."""

    target: int
    port: int | None = None


class WidgetSpec(BaseModel):
    """The spec as this version of the operator knows it (no ``color``)."""

    model_config = ConfigDict(populate_by_name=True)

    size: int | None = None
    mode: str = "fast"
    ports: list[WidgetPort] = Field(default_factory=list)


class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    """A widget."""

    spec: WidgetSpec = Field(default_factory=WidgetSpec)


def widget(**spec: object) -> dict[str, object]:
    """A Widget as the API server would send it."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "annotations": {"a": "b"}},
        "spec": dict(spec),
    }
