"""The OpenAPI documents of the served resources, built on demand and cached by content hash.

A v3 document holds one group-version (``api/v1``, ``apis/apps/v1``): the paths of its
resources and the component schemas they reach. Each is rebuilt only when the resources of its
group-version change (a CRD created, updated or deleted) and named by the SHA-512 of its bytes,
as kube-apiserver names them; the index lists them with that hash in the URL so clients can
cache each one for good. The v2 document holds everything, for clients that still read it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from setpoint.cluster.apiserver.http.version_info import KUBERNETES_GIT_VERSION
from setpoint.cluster.apiserver.openapi import component_schemas as cs
from setpoint.cluster.apiserver.openapi.paths import (
    DELETE_OPTIONS_COMPONENT,
    PATCH_COMPONENT,
    STATUS_COMPONENT,
    ResourcePaths,
)
from setpoint.cluster.apiserver.openapi.v2_protobuf import encode_v2
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_ALWAYS_INCLUDED: Final = (PATCH_COMPONENT, STATUS_COMPONENT, DELETE_OPTIONS_COMPONENT)
_INFO: Final = {"title": "Kubernetes", "version": KUBERNETES_GIT_VERSION}


@dataclass(frozen=True, slots=True)
class Document:
    """An encoded document and its hash (upper-case hex SHA-512, as upstream)."""

    body: bytes
    hash: str


def _hash(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


def _document(content: Any) -> Document:
    body = msgspec.json.encode(content)
    return Document(body, _hash(body))


def group_version_path(resource: ServedResource) -> str:
    """``api/v1`` or ``apis/{group}/{version}``: the key of the resource's v3 document."""
    if resource.group:
        return f"apis/{resource.group}/{resource.version}"
    return f"api/{resource.version}"


def _kind_schemas(
    resources: list[ServedResource], prefix: str
) -> tuple[dict[str, dict[str, Any]], dict[int, str]]:
    """Components for custom resources, and each resource's component name (by id)."""
    builtin = cs.builtin_kind_components()
    custom: dict[str, dict[str, Any]] = {}
    names: dict[int, str] = {}
    for resource in resources:
        key = (resource.group, resource.version, resource.kind)
        if resource.is_custom:
            name = cs.custom_resource_component_name(*key)
            custom[name] = cs.custom_resource_component(*key, resource.openapi_schema, prefix)
            names[id(resource)] = name
        elif key in builtin:
            names[id(resource)] = builtin[key]
    return custom, names


def build_v3(resources: list[ServedResource]) -> dict[str, Any]:
    """The v3 document of the resources of one group-version."""
    prefix = cs.V3_PREFIX
    custom, names = _kind_schemas(resources, prefix)
    components: dict[str, Any] = {**cs.builtin_components(prefix), **custom}
    paths: dict[str, Any] = {}
    roots = list(_ALWAYS_INCLUDED)
    for resource in sorted(resources, key=lambda r: r.plural):
        name = names.get(id(resource))
        if name is None:
            continue
        roots.append(name)
        if not resource.is_custom and f"{name}List" in components:
            roots.append(f"{name}List")
        paths.update(ResourcePaths(resource, name, prefix).path_items())
    included = cs.closure(roots, components, prefix)
    return {
        "openapi": "3.0.0",
        "info": dict(_INFO),
        "paths": paths,
        "components": {"schemas": {name: components[name] for name in included}},
    }


def _v2_operation(operation: dict[str, Any]) -> dict[str, Any]:
    converted = {k: v for k, v in operation.items() if k not in ("requestBody", "responses")}
    parameters = []
    for parameter in operation.get("parameters", []):
        parameters.append(_v2_parameter(parameter))
    body = operation.get("requestBody")
    if body is not None:
        media = list(body["content"])
        converted["consumes"] = media
        schema = body["content"][media[0]]["schema"]
        parameters.append({"name": "body", "in": "body", "required": True, "schema": schema})
    converted["parameters"] = parameters
    converted["produces"] = ["application/json", "application/yaml"]
    converted["schemes"] = ["https"]
    responses: dict[str, Any] = {}
    for code, response in operation.get("responses", {}).items():
        content: dict[str, Any] = response.get("content", {})
        first: dict[str, Any] = next(iter(content.values()), {})
        schema = first.get("schema")
        responses[code] = {"description": response.get("description", "OK")}
        if schema is not None:
            responses[code]["schema"] = schema
    converted["responses"] = responses
    return converted


def _v2_parameter(parameter: dict[str, Any]) -> dict[str, Any]:
    converted = {k: v for k, v in parameter.items() if k != "schema"}
    converted.update(parameter.get("schema", {}))
    return converted


def build_v2(resources: list[ServedResource]) -> dict[str, Any]:
    """The Swagger 2.0 document of every served resource."""
    prefix = cs.V2_PREFIX
    custom, names = _kind_schemas(resources, prefix)
    definitions: dict[str, Any] = {**cs.builtin_components(prefix), **custom}
    paths: dict[str, Any] = {}
    roots = list(_ALWAYS_INCLUDED)
    for resource in sorted(resources, key=lambda r: (r.group, r.version, r.plural)):
        name = names.get(id(resource))
        if name is None:
            continue
        roots.append(name)
        for path, item in ResourcePaths(resource, name, prefix).path_items().items():
            paths[path] = {
                method: (
                    [_v2_parameter(p) for p in value]
                    if method == "parameters"
                    else _v2_operation(value)
                )
                for method, value in item.items()
            }
    included = cs.closure(roots, definitions, prefix)
    return {
        "swagger": "2.0",
        "info": dict(_INFO),
        "paths": paths,
        "definitions": {name: _v2_refs(definitions[name]) for name in included},
    }


def _v2_refs(node: Any) -> Any:
    """Swagger 2.0 form of a schema: ``allOf: [{$ref}]`` (OpenAPI v3's way to describe a
    reference) becomes ``$ref`` with its siblings, as kube-apiserver publishes v2. kubectl 1.27
    and 1.28 read v2 with kube-openapi's parser, which does not follow ``allOf``: a field
    behind it has no schema and client-side apply dereferences nil (a panic)."""
    if isinstance(node, list):
        return [_v2_refs(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _v2_refs(value) for key, value in node.items()}
    all_of = converted.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        del converted["allOf"]
        converted = {"$ref": all_of[0]["$ref"], **converted}
    return converted


class OpenAPIDocuments:
    """The documents of a registry's resources, rebuilt only when those resources change."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self._registry = registry
        self._generation = -1
        self._by_group_version: dict[str, list[ServedResource]] = {}
        # path → (the resources it was built from, the document)
        self._v3: dict[str, tuple[tuple[ServedResource, ...], Document]] = {}
        self._v2: tuple[int, Document] | None = None
        self._v2_protobuf: tuple[int, Document] | None = None
        self._index: Document | None = None

    def _refresh(self) -> None:
        if self._generation == self._registry.generation:
            return
        grouped: dict[str, list[ServedResource]] = {}
        for resource in self._registry:
            grouped.setdefault(group_version_path(resource), []).append(resource)
        self._by_group_version = grouped
        for path in list(self._v3):
            if path not in grouped:
                del self._v3[path]
        self._index = None
        self._generation = self._registry.generation

    def group_version(self, path: str) -> Document | None:
        """The v3 document at ``path`` (``apis/apps/v1``), or None if nothing is served there."""
        self._refresh()
        resources = self._by_group_version.get(path)
        if resources is None:
            return None
        cached = self._v3.get(path)
        if cached is not None and _same(cached[0], resources):
            return cached[1]
        document = _document(build_v3(resources))
        self._v3[path] = (tuple(resources), document)
        return document

    def index(self, url: Callable[[str, str], str]) -> Document:
        """The v3 index: every group-version path with its ``serverRelativeURL``."""
        self._refresh()
        if self._index is None:
            paths = {}
            for path in sorted(self._by_group_version):
                document = self.group_version(path)
                assert document is not None
                paths[path] = {"serverRelativeURL": url(path, document.hash)}
            self._index = _document({"paths": paths})
        return self._index

    def v2(self) -> Document:
        """The v2 (Swagger) document."""
        self._refresh()
        if self._v2 is None or self._v2[0] != self._generation:
            self._v2 = (self._generation, _document(build_v2(list(self._registry))))
        return self._v2[1]

    def v2_protobuf(self) -> Document:
        """The v2 document in gnostic's protobuf form (kubectl 1.27 and 1.28 read it)."""
        document = self.v2()
        if self._v2_protobuf is None or self._v2_protobuf[0] != self._generation:
            encoded = encode_v2(msgspec.json.decode(document.body))
            self._v2_protobuf = (self._generation, Document(encoded, _hash(encoded)))
        return self._v2_protobuf[1]


def _same(built_from: tuple[ServedResource, ...], resources: list[ServedResource]) -> bool:
    return len(built_from) == len(resources) and all(
        a is b for a, b in zip(built_from, resources, strict=True)
    )
