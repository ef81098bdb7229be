"""Kubernetes schema markers for pydantic fields (kubebuilder's ``+kubebuilder:`` markers).

Each marker goes in ``Annotated[...]`` and adds its ``x-kubernetes-*`` keyword to the field's
schema in the generated CRD::

    ports: Annotated[list[Port], ListType("map", keys=("name",))]
    size: IntOrString = 1
    template: Annotated[dict[str, Any], EmbeddedResource()]
    replicas: Annotated[int, Rule("self >= 0", message="must not be negative")]

Class-level CEL rules go in the class statement: ``class Spec(BaseModel, ...)`` cannot take
them, so declare ``__rules__ = [Rule(...)]`` on the model class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = [
    "EmbeddedResource",
    "IntOrString",
    "ListType",
    "MapType",
    "PreserveUnknownFields",
    "Rule",
    "SchemaMarker",
]


class SchemaMarker:
    """Base of the markers: merges :meth:`keywords` into the field's JSON schema."""

    def keywords(self) -> dict[str, Any]:
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema = handler.resolve_ref_schema(schema) if "$ref" in schema else schema
        extra = self.keywords()
        rules = extra.pop("x-kubernetes-validations", None)
        schema.update(extra)
        if rules:
            schema.setdefault("x-kubernetes-validations", []).extend(rules)
        return schema


@dataclass(frozen=True)
class _IntOrStringMarker(SchemaMarker):
    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-int-or-string": True}


IntOrString = Annotated[int | str, _IntOrStringMarker()]
"""A value that is an integer or a string (``intstr.IntOrString``: ports, percentages)."""


@dataclass(frozen=True)
class PreserveUnknownFields(SchemaMarker):
    """Keep fields the schema does not name (``x-kubernetes-preserve-unknown-fields``)."""

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-preserve-unknown-fields": True}


@dataclass(frozen=True)
class EmbeddedResource(SchemaMarker):
    """The value is a whole Kubernetes object (apiVersion, kind, metadata are validated)."""

    def keywords(self) -> dict[str, Any]:
        return {
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }


@dataclass(frozen=True)
class ListType(SchemaMarker):
    """How server-side apply merges a list: ``atomic``, ``set`` or ``map`` keyed by ``keys``."""

    type: Literal["atomic", "set", "map"]
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type == "map" and not self.keys:
            raise ValueError("ListType('map') needs keys=(...) naming the map keys")
        if self.type != "map" and self.keys:
            raise ValueError(f"ListType({self.type!r}) takes no keys; only 'map' lists have keys")

    def keywords(self) -> dict[str, Any]:
        words: dict[str, Any] = {"x-kubernetes-list-type": self.type}
        if self.keys:
            words["x-kubernetes-list-map-keys"] = list(self.keys)
        return words


@dataclass(frozen=True)
class MapType(SchemaMarker):
    """How server-side apply merges an object: ``granular`` (per key) or ``atomic``."""

    type: Literal["granular", "atomic"]

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-map-type": self.type}


@dataclass(frozen=True)
class Rule(SchemaMarker):
    """A CEL validation rule (``x-kubernetes-validations``), checked by the API server."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_validation(self) -> dict[str, Any]:
        """The rule as one entry of ``x-kubernetes-validations``."""
        entry: dict[str, Any] = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("reason", self.reason),
            ("fieldPath", self.field_path),
            ("optionalOldSelf", self.optional_old_self),
        ):
            if value is not None:
                entry[key] = value
        entry.update(self.extra)
        return entry

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-validations": [self.as_validation()]}
