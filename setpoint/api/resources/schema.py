"""From pydantic's JSON Schema to the structural OpenAPI v3 schema a CRD requires.

pydantic writes JSON Schema 2020-12; kube-apiserver accepts a subset of OpenAPI v3 and requires
it to be *structural*: a ``type`` on every node (unless int-or-string or preserve-unknown-
fields), no ``$ref``, ``additionalProperties`` never beside ``properties``, and ``anyOf``/
``oneOf`` only to add validation. The translation:

- ``$ref`` into ``$defs`` is inlined (a recursive model cannot be expressed and is an error);
- ``Optional[X]`` (``anyOf`` with ``null``) becomes ``X`` with ``nullable: true``;
- ``const`` becomes a one-value ``enum``; numeric ``exclusiveMinimum: n`` becomes
  ``minimum: n, exclusiveMinimum: true`` (OpenAPI v3.0);
- ``dict[str, Any]`` and untyped fields keep unknown fields
  (``x-kubernetes-preserve-unknown-fields``);
- ``title`` and formats Kubernetes does not know are dropped; descriptions, defaults,
  bounds, lengths, patterns and item counts are kept.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["KUBERNETES_FORMATS", "SchemaError", "structural_schema"]

#: Formats kube-apiserver validates (``k8s.io/kube-openapi/pkg/validation/strfmt``).
KUBERNETES_FORMATS = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn",
        "hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
        "date-time", "int32", "int64", "float", "double",
    }
)  # fmt: skip

# Keywords of JSONSchemaProps that pass through unchanged.
_KEPT = frozenset(
    {
        "description", "type", "format", "default", "maximum", "minimum", "maxLength",
        "minLength", "pattern", "maxItems", "minItems", "multipleOf", "enum",
        "maxProperties", "minProperties", "required", "nullable", "example",
    }
)  # fmt: skip


class SchemaError(TypeError):
    """A model that cannot become a structural schema; the message names the field."""


def structural_schema(json_schema: dict[str, Any]) -> dict[str, Any]:
    """The structural OpenAPI v3 schema of a pydantic ``model_json_schema()`` document."""
    definitions = json_schema.get("$defs", {})
    return _convert(json_schema, definitions, path="", expanding=())


def _resolve(
    node: dict[str, Any], definitions: dict[str, Any], path: str, expanding: tuple[str, ...]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Inline a ``$ref`` (keywords beside it win, as pydantic puts descriptions there)."""
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in expanding:
            raise SchemaError(
                f"{path or 'the resource'}: model {name} contains itself; a CRD schema "
                "cannot be recursive (use dict[str, Any] with PreserveUnknownFields there)"
            )
        if name not in definitions:
            raise SchemaError(f"{path}: unresolved reference {node['$ref']}")
        merged = copy.deepcopy(definitions[name])
        merged.update({key: value for key, value in node.items() if key != "$ref"})
        node, expanding = merged, (*expanding, name)
    return node, expanding


def _convert(
    node: dict[str, Any], definitions: dict[str, Any], path: str, expanding: tuple[str, ...]
) -> dict[str, Any]:
    node, expanding = _resolve(node, definitions, path, expanding)
    if "allOf" in node and len(node["allOf"]) == 1:  # older pydantic wraps a described $ref
        inner = dict(node["allOf"][0])
        inner.update({key: value for key, value in node.items() if key != "allOf"})
        return _convert(inner, definitions, path, expanding)

    out: dict[str, Any] = {}
    nullable = False
    variants = node.get("anyOf") or node.get("oneOf")
    int_or_string = bool(node.get("x-kubernetes-int-or-string"))
    if variants is not None and not int_or_string:
        non_null = [variant for variant in variants if variant.get("type") != "null"]
        nullable = len(non_null) < len(variants)
        if len(non_null) != 1:
            kinds = sorted(
                str(_resolve(variant, definitions, path, expanding)[0].get("type", "object"))
                for variant in non_null
            )
            raise SchemaError(
                f"{path or 'the resource'}: a union of {' | '.join(kinds)} is not structural; "
                "use one type, IntOrString, or a dict with PreserveUnknownFields"
            )
        rest = {key: value for key, value in node.items() if key not in ("anyOf", "oneOf")}
        single = _convert(non_null[0], definitions, path, expanding)
        rest_converted = _convert(rest, definitions, path, expanding) if rest else {}
        rest_converted.pop("x-kubernetes-preserve-unknown-fields", None)
        if "type" not in rest:
            rest_converted.pop("type", None)
        out = {**single, **rest_converted}
        if nullable:
            out["nullable"] = True
            if out.get("default", 0) is None:
                del out["default"]
        return out

    for key, value in node.items():
        if key in _KEPT or key.startswith("x-kubernetes-"):
            out[key] = copy.deepcopy(value)
    if int_or_string:
        out.pop("type", None)
        out.pop("format", None)
        return out
    if "const" in node:
        out["enum"] = [node["const"]]
    for bound, flag in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(node.get(bound), int | float) and not isinstance(node[bound], bool):
            out[flag] = node[bound]
            out[bound] = True
    if out.get("format") not in KUBERNETES_FORMATS:
        out.pop("format", None)
    if "enum" in out and "type" not in out:
        out["type"] = _type_of_values(out["enum"], path)
    if node.get("uniqueItems"):
        # Kubernetes forbids uniqueItems: true; a set-typed list says the same to the server.
        out.setdefault("x-kubernetes-list-type", "set")

    kind = out.get("type")
    if kind == "object" or "properties" in node or "additionalProperties" in node:
        out["type"] = "object"
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        if properties:
            out["properties"] = {
                name: _convert(child, definitions, _join(path, name), expanding)
                for name, child in properties.items()
            }
        elif isinstance(additional, dict) and additional:
            out["additionalProperties"] = _convert(
                additional, definitions, _join(path, "*"), expanding
            )
        elif (additional is True or additional == {} or not properties) and (
            not out.get("x-kubernetes-embedded-resource") or additional is not None
        ):
            out["x-kubernetes-preserve-unknown-fields"] = True
        if not out.get("required"):
            out.pop("required", None)
    elif kind == "array":
        items = node.get("items")
        if not isinstance(items, dict):
            raise SchemaError(f"{path}: a list needs one item type (tuples are not structural)")
        out["items"] = _convert(items, definitions, _join(path, "[]"), expanding)
    elif kind is None:
        if not out.get("x-kubernetes-preserve-unknown-fields"):
            out["x-kubernetes-preserve-unknown-fields"] = True
    elif kind == "null":
        raise SchemaError(f"{path}: a field that is always null cannot be declared")
    return out


def _type_of_values(values: list[Any], path: str) -> str:
    kinds = {type(value) for value in values if value is not None}
    if kinds <= {str}:
        return "string"
    if kinds <= {int}:
        return "integer"
    if kinds <= {int, float}:
        return "number"
    if kinds <= {bool}:
        return "boolean"
    raise SchemaError(f"{path}: enum values of several types {sorted(k.__name__ for k in kinds)}")


def _join(path: str, name: str) -> str:
    if name == "[]":
        return f"{path}[]"
    return f"{path}.{name}" if path else name
