"""A CRD's OpenAPI v3 schema, parsed once into a tree of :class:`SchemaNode`.

The API server validates, prunes and defaults every write, so each keyword is read from the
JSON schema exactly once here: patterns are compiled (RE2), formats resolved to their checkers,
``x-kubernetes-int-or-string`` turned into the types ``integer,string`` (as apiextensions does
before handing the schema to kube-openapi), unsupported formats dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from setpoint.cluster.apiserver.schema.formats import FormatChecker, format_checker
from setpoint.cluster.apiserver.schema.re2_pattern import CompiledPattern, compile_pattern

# Marks "no default" (a default may legitimately be null).
NO_DEFAULT: Final = object()


class SchemaError(ValueError):
    """The schema itself is malformed (a keyword has the wrong JSON type)."""


@dataclass(slots=True, eq=False)
class SchemaNode:
    """One schema object of a structural schema, with every keyword pre-parsed."""

    types: tuple[str, ...] = ()
    nullable: bool = False
    format: str = ""
    format_check: FormatChecker | None = None
    # A fixed detail for format failures (built-in quantities); empty: kube-openapi's message.
    format_error: str = ""
    enum: list[Any] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str = ""
    pattern_re: CompiledPattern | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    items: SchemaNode | None = None
    properties: dict[str, SchemaNode] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    # Built-in (Go-typed) objects: null means "not set", so it is never checked against enum.
    null_means_unset: bool = False
    # None: not given (anything allowed, nothing kept by pruning); True/False; or a schema.
    additional_properties: SchemaNode | bool | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    all_of: tuple[SchemaNode, ...] = ()
    any_of: tuple[SchemaNode, ...] = ()
    one_of: tuple[SchemaNode, ...] = ()
    not_: SchemaNode | None = None
    int_or_string: bool = False
    preserve_unknown_fields: bool = False
    embedded_resource: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    default: Any = NO_DEFAULT
    # Whether this node or any below it is a set/map list or an embedded resource; lets the
    # list-type and embedded-resource passes skip whole subtrees. Set by compile_node.
    has_list_types: bool = True
    has_embedded_resources: bool = True

    @property
    def has_default(self) -> bool:
        """Whether the schema declares a ``default`` (possibly null)."""
        return self.default is not NO_DEFAULT

    @property
    def additional_schema(self) -> SchemaNode | None:
        """The schema of properties not listed in ``properties``, if given as a schema."""
        extra = self.additional_properties
        return extra if isinstance(extra, SchemaNode) else None

    def child(self, key: str) -> SchemaNode | None:
        """The schema of property ``key``: a listed property, else ``additionalProperties``."""
        node = self.properties.get(key)
        return node if node is not None else self.additional_schema


def _number(schema: Mapping[str, Any], key: str) -> float | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SchemaError(f"{key} must be a number")
    return value


def _count(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise SchemaError(f"{key} must be an integer")
    return value


def _subschemas(schema: Mapping[str, Any], key: str) -> tuple[SchemaNode, ...]:
    value = schema.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SchemaError(f"{key} must be a list of schemas")
    return tuple(compile_node(item) for item in value)


def compile_node(schema: Mapping[str, Any]) -> SchemaNode:
    """Parse one JSON schema object (and everything below it) into a :class:`SchemaNode`."""
    if not isinstance(schema, Mapping):
        raise SchemaError("a schema must be an object")
    node = SchemaNode()
    type_value = schema.get("type")
    if isinstance(type_value, str) and type_value:
        node.types = (type_value,)
    elif isinstance(type_value, list):
        node.types = tuple(str(t) for t in type_value)
    node.int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    if node.int_or_string:
        node.types = ("integer", "string")
    node.nullable = bool(schema.get("nullable"))
    format_name = schema.get("format")
    if isinstance(format_name, str) and format_name:
        node.format_check = format_checker(format_name)
        # Unsupported formats are dropped before validation (StripUnsupportedFormatsPostProcess).
        node.format = format_name if node.format_check is not None else ""
    enum = schema.get("enum")
    if enum is not None:
        if not isinstance(enum, list):
            raise SchemaError("enum must be a list")
        node.enum = list(enum)
    node.minimum = _number(schema, "minimum")
    node.maximum = _number(schema, "maximum")
    node.exclusive_minimum = bool(schema.get("exclusiveMinimum"))
    node.exclusive_maximum = bool(schema.get("exclusiveMaximum"))
    node.multiple_of = _number(schema, "multipleOf")
    node.min_length = _count(schema, "minLength")
    node.max_length = _count(schema, "maxLength")
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        node.pattern = pattern
        node.pattern_re = compile_pattern(pattern)
    node.min_items = _count(schema, "minItems")
    node.max_items = _count(schema, "maxItems")
    node.unique_items = bool(schema.get("uniqueItems"))
    items = schema.get("items")
    if isinstance(items, Mapping):
        node.items = compile_node(items)
    elif isinstance(items, list) and len(items) == 1:
        node.items = compile_node(items[0])
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, Mapping):
            raise SchemaError("properties must be an object")
        node.properties = {str(k): compile_node(v) for k, v in properties.items()}
    required = schema.get("required")
    if required is not None:
        if not isinstance(required, list):
            raise SchemaError("required must be a list")
        node.required = tuple(str(r) for r in required)
    extra = schema.get("additionalProperties")
    if isinstance(extra, bool):
        node.additional_properties = extra
    elif isinstance(extra, Mapping):
        node.additional_properties = compile_node(extra)
    node.min_properties = _count(schema, "minProperties")
    node.max_properties = _count(schema, "maxProperties")
    node.all_of = _subschemas(schema, "allOf")
    node.any_of = _subschemas(schema, "anyOf")
    node.one_of = _subschemas(schema, "oneOf")
    not_schema = schema.get("not")
    if isinstance(not_schema, Mapping):
        node.not_ = compile_node(not_schema)
    node.preserve_unknown_fields = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    node.embedded_resource = bool(schema.get("x-kubernetes-embedded-resource"))
    list_type = schema.get("x-kubernetes-list-type")
    node.list_type = list_type if isinstance(list_type, str) else None
    keys = schema.get("x-kubernetes-list-map-keys")
    if isinstance(keys, list):
        node.list_map_keys = tuple(str(k) for k in keys)
    if "default" in schema:
        node.default = schema["default"]
    children = [*node.properties.values(), node.items, node.additional_schema]
    below = [child for child in children if child is not None]
    node.has_list_types = node.list_type in ("set", "map") or any(
        child.has_list_types for child in below
    )
    node.has_embedded_resources = node.embedded_resource or any(
        child.has_embedded_resources for child in below
    )
    return node
