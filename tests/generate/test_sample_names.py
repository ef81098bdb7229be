"""A model's ``sample()`` chooses the generated sample's name, else it is ``<singular>-sample``."""

from __future__ import annotations

from pydantic import BaseModel

from setpoint.api.resources import CustomResource
from setpoint.generate.samples import sample_object


class GizmoSpec(BaseModel):
    size: int = 1


class Gizmo(CustomResource, group="samples.example.com", version="v1", kind="Gizmo"):
    spec: GizmoSpec = GizmoSpec()

    @classmethod
    def sample(cls) -> Gizmo:
        metadata = {"name": "example-gizmo", "labels": {"dropped": "yes"}}
        return cls(metadata=metadata, spec=GizmoSpec(size=3))


class Gadget(CustomResource, group="samples.example.com", version="v1", kind="Gadget"):
    spec: GizmoSpec = GizmoSpec()

    @classmethod
    def sample(cls) -> Gadget:
        return cls(spec=GizmoSpec(size=2))


def test_sample_keeps_the_name_its_model_gives() -> None:
    assert sample_object(Gizmo) == {
        "apiVersion": "samples.example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "example-gizmo"},
        "spec": {"size": 3},
    }


def test_sample_without_a_name_is_named_after_the_singular() -> None:
    assert sample_object(Gadget)["metadata"] == {"name": "gadget-sample"}


class Plain(CustomResource, group="samples.example.com", version="v1", kind="Plain"):
    spec: GizmoSpec = GizmoSpec()


def test_a_sample_made_from_the_schema_is_named_after_the_singular() -> None:
    assert sample_object(Plain)["metadata"] == {"name": "plain-sample"}
