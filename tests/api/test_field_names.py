"""Custom resources' JSON field names: camelCase without Field(alias=...), as kubebuilder's
JSON tags; names that would silently be wrong in a CRD are an error naming the field."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.resources import CustomResource, SchemaError


class Window(BaseModel):
    start_hour: int = 0
    end_hour: int = 24


class ScheduleSpec(BaseModel):
    container_image: str
    time_windows: list[Window] = []
    by_name: dict[str, Window] = {}
    legacy_name: str = Field(default="", alias="LEGACY")


class ScheduleStatus(BaseModel):
    observed_generation: int | None = None


class Schedule(CustomResource, group="t.example.com", version="v1", kind="Schedule"):
    spec: ScheduleSpec
    status: ScheduleStatus | None = None


def _properties(model: type[CustomResource], *path: str) -> dict[str, Any]:
    node: dict[str, Any] = model.crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for name in path:
        node = node["properties"][name]
        node = node.get("items", node)
    return node["properties"]  # type: ignore[no-any-return]


def test_fields_without_an_alias_are_camel_case_in_the_crd_and_on_the_wire() -> None:
    assert sorted(_properties(Schedule, "spec")) == [
        "LEGACY", "byName", "containerImage", "timeWindows"
    ]  # fmt: skip
    assert sorted(_properties(Schedule, "spec", "timeWindows")) == ["endHour", "startHour"]
    assert sorted(_properties(Schedule, "status")) == ["observedGeneration"]
    wire = {
        "metadata": {"name": "s"},
        "spec": {"containerImage": "busybox", "timeWindows": [{"startHour": 9}],
                 "byName": {"a": {"endHour": 3}}},
    }  # fmt: skip
    parsed = Schedule.model_validate(wire)
    assert parsed.spec.container_image == "busybox"
    assert parsed.spec.time_windows[0].start_hour == 9
    assert parsed.spec.by_name["a"].end_hour == 3
    # Python code builds models with the attribute names; they leave as camelCase.
    built = Schedule(metadata={"name": "s"}, spec=ScheduleSpec(container_image="busybox"))
    dumped = built.model_dump(by_alias=True, exclude_none=True)
    assert dumped["apiVersion"] == "t.example.com/v1"
    assert dumped["spec"] == {"containerImage": "busybox", "timeWindows": [], "byName": {},
                              "LEGACY": ""}  # fmt: skip


class PlainSpec(BaseModel):
    max_size: int = 1


class Plain(CustomResource, group="t.example.com", version="v1", kind="Plain",
            camel_case=False):  # fmt: skip
    spec: PlainSpec = PlainSpec()


class OwnNamesSpec(BaseModel):
    model_config = ConfigDict(alias_generator=None)

    max_size: int = 1


class OwnNames(CustomResource, group="t.example.com", version="v1", kind="OwnNames"):
    spec: OwnNamesSpec = OwnNamesSpec()


class Cron(BaseModel):
    day_of_week: str | None = None


class CronSpec(BaseModel):
    # "schedule" needs no new name, so only the model it uses changes.
    schedule: Cron


class CronHolder(CustomResource, group="t.example.com", version="v1", kind="CronHolder"):
    spec: CronSpec


def test_a_model_is_rebuilt_when_only_a_model_it_uses_was_renamed() -> None:
    obj = CronHolder.model_validate({"spec": {"schedule": {"dayOfWeek": "1-5"}}})
    assert obj.spec.schedule.day_of_week == "1-5"
    dumped = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["spec"] == {"schedule": {"dayOfWeek": "1-5"}}
    assert list(_properties(CronHolder, "spec", "schedule")) == ["dayOfWeek"]


def test_opting_out_keeps_the_python_names() -> None:
    assert list(_properties(Plain, "spec")) == ["max_size"]
    assert list(_properties(OwnNames, "spec")) == ["max_size"]


def _resource(spec: type[BaseModel]) -> type[CustomResource]:
    class Odd(CustomResource, group="t.example.com", version="v1", kind="Odd"):
        spec: spec  # type: ignore[valid-type]

    return Odd


def test_a_private_field_name_is_an_error_naming_it() -> None:
    class PrivateSpec(BaseModel):
        _image: str = "busybox"
        replicas: int = 1

    with pytest.raises(SchemaError) as raised:
        _resource(PrivateSpec).crd()
    message = str(raised.value)
    assert "PrivateSpec._image: a name starting with '_' is a private attribute" in message
    assert "\n" not in message


def test_a_name_shadowing_basemodel_is_an_error_naming_it() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic's own warning, at class creation

        class ShadowSpec(BaseModel):
            schema: str = "v1"  # type: ignore[assignment]

    with pytest.raises(SchemaError, match=r"ShadowSpec\.schema: the name shadows pydantic's"):
        _resource(ShadowSpec).crd()


def test_an_alias_that_is_no_json_field_name_is_an_error_naming_it() -> None:
    class SpacedSpec(BaseModel):
        display_name: str = Field(default="", alias="display name")

    with pytest.raises(SchemaError, match=r"SpacedSpec\.display_name: JSON name 'display name'"):
        _resource(SpacedSpec).crd()
