"""Typed custom resources: declarations, objects, and the structural CRD schema they generate."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from setpoint.api.resources import (
    CustomResource,
    EmbeddedResource,
    IntOrString,
    ListType,
    PrinterColumn,
    Rule,
    ScaleSubresource,
    SchemaError,
    crd_manifest,
    crd_manifests,
)
from setpoint.api.resources.custom_resource import default_plural
from setpoint.client.typed_objects import as_dict, static_type_fields
from setpoint.cluster.apiserver.crds.validation import validate_crd


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


class Port(BaseModel):
    name: str
    port: int = Field(ge=1, le=65535)


class WidgetSpec(BaseModel):
    """What a widget should be."""

    size: int = Field(ge=0, le=10, description="How big.")
    name_prefix: str = Field(default="w", alias="namePrefix", min_length=1, max_length=8)
    color: Color = Color.RED
    mode: Literal["fast", "slow"] = "fast"
    target: IntOrString = 1
    ports: Annotated[list[Port], ListType("map", keys=("name",))] = []
    labels: dict[str, str] = {}
    extra: dict[str, Any] | None = None
    template: Annotated[dict[str, Any], EmbeddedResource()] | None = None
    ratio: float = Field(default=0.5, gt=0)
    tags: list[str] = Field(default=[], max_length=3)
    replicas: Annotated[int, Rule("self <= 100", message="at most 100")] = 1


class WidgetStatus(BaseModel):
    ready: bool = False
    observed_generation: int | None = Field(default=None, alias="observedGeneration")


class Widget(
    CustomResource,
    group="example.com",
    version="v1",
    kind="Widget",
    short_names=["wd"],
    categories=["all"],
    printer_columns=[PrinterColumn("Size", ".spec.size", "integer")],
    selectable_fields=[".spec.mode"],
    scale=ScaleSubresource(spec_replicas_path=".spec.replicas"),
):
    """A widget of some size."""

    spec: WidgetSpec
    status: WidgetStatus | None = None


def _stored(crd: dict[str, Any]) -> dict[str, Any]:
    # What the server stores: storedVersions is filled in on create.
    versions = [v["name"] for v in crd["spec"]["versions"] if v["storage"]]
    return {**crd, "status": {"storedVersions": versions}}


def test_the_class_is_a_kind_wherever_the_runtime_takes_one() -> None:
    assert static_type_fields(Widget) == ("example.com/v1", "Widget")
    widget = Widget(spec=WidgetSpec(size=3), metadata={"name": "a", "namespace": "ns"})
    body = as_dict(widget)
    assert body["apiVersion"] == "example.com/v1"
    assert body["kind"] == "Widget"
    assert body["spec"]["namePrefix"] == "w"
    assert body["metadata"] == {"name": "a", "namespace": "ns"}


def test_objects_round_trip_and_keep_unknown_metadata() -> None:
    data = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "a", "resourceVersion": "7", "managedFields": [{"manager": "x"}]},
        "spec": {"size": 2, "namePrefix": "p"},
    }
    widget = Widget.model_validate(data)
    assert widget.metadata.resource_version == "7"
    assert as_dict(widget)["metadata"]["managedFields"] == [{"manager": "x"}]


def test_a_wrong_kind_is_refused_with_the_field_named() -> None:
    with pytest.raises(ValidationError, match="kind: expected 'Widget', got 'Gadget'"):
        Widget.model_validate({"kind": "Gadget", "spec": {"size": 1}})


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"version": "v1", "kind": "X"}, "must give group=..."),
        ({"group": "nodot", "version": "v1", "kind": "X"}, "DNS subdomain with a dot"),
        ({"group": "a.io", "version": "1", "kind": "X"}, "must look like v1"),
        ({"group": "a.io", "version": "v1", "kind": "lower"}, "must be CamelCase"),
        ({"group": "a.io", "version": "v1", "kind": "X", "plural": "Xs"}, "plural='Xs'"),
        ({"group": "a.io", "version": "v1", "kind": "X", "scope": "Global"}, "scope='Global'"),
    ],
)
def test_bad_declarations_name_the_keyword(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        type("Bad", (CustomResource,), {"__annotations__": {}}, **keywords)


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("Foo", "foos"), ("Policy", "policies"), ("Class", "classes"), ("Day", "days"),
     ("Match", "matches"), ("PodSet", "podsets")],
)  # fmt: skip
def test_plurals_follow_the_usual_rules(kind: str, plural: str) -> None:
    assert default_plural(kind) == plural


def test_the_crd_is_structural_and_accepted_by_the_server_rules() -> None:
    crd = crd_manifest(Widget)
    assert validate_crd(_stored(crd)) == []
    assert crd["metadata"]["name"] == "widgets.example.com"
    assert crd["spec"]["names"] == {
        "kind": "Widget",
        "listKind": "WidgetList",
        "plural": "widgets",
        "singular": "widget",
        "shortNames": ["wd"],
        "categories": ["all"],
    }
    (version,) = crd["spec"]["versions"]
    assert version["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    assert version["additionalPrinterColumns"] == [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
    ]
    assert version["selectableFields"] == [{"jsonPath": ".spec.mode"}]


def test_schema_translation_of_each_python_construct() -> None:
    root = crd_manifest(Widget)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert root["description"] == "A widget of some size."
    assert root["required"] == ["spec"]
    assert "nullable" not in root["properties"]["status"]
    spec = root["properties"]["spec"]
    props = spec["properties"]
    assert spec["description"] == "What a widget should be."
    assert spec["required"] == ["size"]
    assert props["size"] == {
        "description": "How big.", "maximum": 10, "minimum": 0, "type": "integer"
    }  # fmt: skip
    assert props["namePrefix"]["minLength"] == 1 and props["namePrefix"]["maxLength"] == 8
    assert props["color"]["enum"] == ["red", "blue"] and props["color"]["type"] == "string"
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["target"] == {"default": 1, "x-kubernetes-int-or-string": True}
    assert props["ports"]["x-kubernetes-list-type"] == "map"
    assert props["ports"]["x-kubernetes-list-map-keys"] == ["name"]
    assert props["ports"]["items"]["required"] == ["name", "port"]
    assert props["labels"]["additionalProperties"] == {"type": "string"}
    assert props["extra"]["x-kubernetes-preserve-unknown-fields"] is True
    assert props["extra"]["nullable"] is True
    assert props["template"]["x-kubernetes-embedded-resource"] is True
    assert props["ratio"]["minimum"] == 0 and props["ratio"]["exclusiveMinimum"] is True
    assert props["tags"]["maxItems"] == 3
    assert props["replicas"]["x-kubernetes-validations"] == [
        {"rule": "self <= 100", "message": "at most 100"}
    ]
    status = root["properties"]["status"]["properties"]
    assert status["observedGeneration"] == {"type": "integer", "nullable": True}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            assert "$ref" not in node and "title" not in node and "anyOf" not in node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(root)


def test_groups_under_k8s_io_get_the_approval_annotation() -> None:
    class Foo(CustomResource, group="samplecontroller.k8s.io", version="v1alpha1", kind="Foo"):
        spec: dict[str, Any] = {}

    crd = crd_manifest(Foo)
    assert crd["metadata"]["annotations"]["api-approved.kubernetes.io"].startswith("unapproved")
    assert validate_crd(_stored(crd)) == []


def test_several_versions_make_one_crd_with_one_storage_version() -> None:
    class Spec(BaseModel):
        size: int = 0

    class GadgetV1(CustomResource, group="g.example.com", version="v1", kind="Gadget",
                   storage=True):  # fmt: skip
        spec: Spec

    class GadgetV1beta1(CustomResource, group="g.example.com", version="v1beta1",
                        kind="Gadget", deprecated=True, deprecation_warning="use v1"):  # fmt: skip
        spec: Spec

    crd = crd_manifest(GadgetV1beta1, GadgetV1)
    versions = crd["spec"]["versions"]
    assert [(v["name"], v["storage"]) for v in versions] == [("v1", True), ("v1beta1", False)]
    assert versions[1]["deprecated"] is True and versions[1]["deprecationWarning"] == "use v1"
    assert validate_crd(_stored(crd)) == []
    assert crd_manifests([GadgetV1, GadgetV1beta1, Widget, GadgetV1]) == [
        crd,
        crd_manifest(Widget),
    ]

    class GadgetV2(CustomResource, group="g.example.com", version="v2", kind="Gadget"):
        spec: Spec

    with pytest.raises(TypeError, match="exactly one version must be the storage version"):
        crd_manifest(GadgetV2, GadgetV1beta1)


def test_what_cannot_be_structural_is_an_error_naming_the_field() -> None:
    class Node(BaseModel):
        children: list[Node] = []

    class Tree(CustomResource, group="t.example.com", version="v1", kind="Tree"):
        spec: Node

    with pytest.raises(SchemaError, match=r"Tree: spec\.children.*contains itself"):
        crd_manifest(Tree)

    class Mixed(BaseModel):
        value: int | list[str]

    class Odd(CustomResource, group="t.example.com", version="v1", kind="Odd"):
        spec: Mixed

    with pytest.raises(SchemaError, match=r"spec.value: a union of array \| integer"):
        crd_manifest(Odd)


def test_a_base_class_without_a_declaration_says_how_to_declare() -> None:
    with pytest.raises(TypeError, match=r"class CustomResource\(CustomResource, group="):
        CustomResource.declaration()
