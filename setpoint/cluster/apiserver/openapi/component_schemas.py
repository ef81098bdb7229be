"""Component schemas: the upstream definitions of built-in kinds, and those of custom resources.

``kubernetes-validate`` ships the 1.32 definitions as JSON Schema (``type: [T, "null"]``,
``$ref: #/$defs/X``). OpenAPI components say ``type: T`` and point at
``#/components/schemas/X`` (v3) or ``#/definitions/X`` (v2); a reference with siblings (a field
description) is wrapped in ``allOf`` as kube-openapi writes it. Every ``x-kubernetes-*``
extension (group-version-kind, patch strategy and merge key, list type and map keys) is kept.

A custom resource's component is its CRD version's ``openAPIV3Schema`` with ``apiVersion``,
``kind`` and ``metadata`` (a reference to ``ObjectMeta``) filled in, named as kube-apiserver
names it: the reversed group, the version and the kind (``com.example.v1.Widget``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import msgspec

from setpoint.cluster.apiserver.upstream_schema_files import kubernetes_json_schema_root
from setpoint.cluster.apiserver.validation.builtin_schemas import OPTIONAL_IN_UPSTREAM

#: The set of definitions matching the version /version reports (non-strict: no
#: ``additionalProperties: false`` added by the packager).
SCHEMA_SET: Final = "v1.32.0-local"
V3_PREFIX: Final = "#/components/schemas/"
V2_PREFIX: Final = "#/definitions/"
_SOURCE_PREFIX: Final = "#/$defs/"
OBJECT_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_API_VERSION_DESCRIPTION: Final = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources"
)
_KIND_DESCRIPTION: Final = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds"
)
_METADATA_DESCRIPTION: Final = (
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
#: Wrapper types whose upstream OpenAPI form is a plain string with a format.
_STRING_TYPES: Final = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "",
}


def _definitions_file() -> Path:
    return kubernetes_json_schema_root() / SCHEMA_SET / "_definitions.json"


@functools.cache
def _source_definitions() -> dict[str, Any]:
    document = msgspec.json.decode(_definitions_file().read_bytes())
    definitions: dict[str, Any] = document["$defs"]
    for name, optional in OPTIONAL_IN_UPSTREAM.items():
        schema = definitions.get(name)
        if isinstance(schema, dict) and isinstance(schema.get("required"), list):
            schema["required"] = [field for field in schema["required"] if field not in optional]
    return definitions


def _convert(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_convert(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    converted: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, list):
            kinds = [kind for kind in value if kind != "null"]
            if len(kinds) == 1:
                converted["type"] = kinds[0]
            continue
        if key == "$ref" and isinstance(value, str):
            converted["$ref"] = prefix + value.removeprefix(_SOURCE_PREFIX)
            continue
        converted[key] = _convert(value, prefix)
    if isinstance(converted.get("$ref"), str) and len(converted) > 1:
        reference = converted.pop("$ref")
        return {"allOf": [{"$ref": reference}], **converted}
    return converted


@functools.cache
def builtin_components(prefix: str = V3_PREFIX) -> dict[str, dict[str, Any]]:
    """Every upstream definition as a component schema (references use ``prefix``)."""
    components: dict[str, dict[str, Any]] = {}
    for name, definition in _source_definitions().items():
        if name in _STRING_TYPES:
            schema: dict[str, Any] = {"type": "string"}
            if _STRING_TYPES[name]:
                schema["format"] = _STRING_TYPES[name]
            if "description" in definition:
                schema["description"] = definition["description"]
            components[name] = schema
            continue
        schema = _convert(definition, prefix)
        if "x-kubernetes-group-version-kind" in schema:
            # The packager pins apiVersion/kind with an enum; upstream does not.
            for field_name in ("apiVersion", "kind"):
                field = schema.get("properties", {}).get(field_name)
                if isinstance(field, dict):
                    field.pop("enum", None)
        components[name] = schema
    return components


@functools.cache
def builtin_kind_components() -> dict[tuple[str, str, str], str]:
    """(group, version, kind) → the name of its upstream component."""
    found: dict[tuple[str, str, str], str] = {}
    for name, definition in _source_definitions().items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            found.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return found


def references(schema: Any, prefix: str) -> Iterable[str]:
    """The component names ``schema`` refers to (directly)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith(prefix):
                yield reference[len(prefix) :]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def closure(
    roots: Iterable[str], components: Mapping[str, Mapping[str, Any]], prefix: str
) -> list[str]:
    """``roots`` and every component they refer to, transitively, sorted."""
    seen: set[str] = set()
    todo = [root for root in roots if root in components]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(ref for ref in references(components[name], prefix) if ref in components)
    return sorted(seen)


def custom_resource_component_name(group: str, version: str, kind: str) -> str:
    """``com.example.v1.Widget`` for ``widgets.example.com/v1``."""
    reversed_group = ".".join(reversed(group.split(".")))
    return f"{reversed_group}.{version}.{kind}"


def custom_resource_component(
    group: str, version: str, kind: str, schema: Mapping[str, Any] | None, prefix: str
) -> dict[str, Any]:
    """The component schema of a custom resource version."""
    component: dict[str, Any] = copy.deepcopy(dict(schema)) if schema else {"type": "object"}
    component.setdefault("type", "object")
    properties = component.setdefault("properties", {})
    properties["apiVersion"] = {"description": _API_VERSION_DESCRIPTION, "type": "string"}
    properties["kind"] = {"description": _KIND_DESCRIPTION, "type": "string"}
    properties["metadata"] = {
        "allOf": [{"$ref": prefix + OBJECT_META}],
        "description": _METADATA_DESCRIPTION,
    }
    component["x-kubernetes-group-version-kind"] = [
        {"group": group, "kind": kind, "version": version}
    ]
    return component
