"""CustomResourceDefinition manifests from :class:`CustomResource` models."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from setpoint.api.resources.declaration import ResourceDeclaration
from setpoint.api.resources.field_names import field_name_problems
from setpoint.api.resources.schema import SchemaError, structural_schema

__all__ = ["crd_manifest", "crd_manifests", "openapi_schema", "version_priority"]

API_APPROVAL = "api-approved.kubernetes.io"
#: The value sample-controller uses for a group under k8s.io that was never reviewed.
UNAPPROVED = (
    "unapproved, experimental-only; please use https://github.com/kubernetes/enhancements/pull/1111"
)


def declaration_of(model: type[BaseModel]) -> ResourceDeclaration:
    """What ``model`` (a ``CustomResource`` subclass) declares; ``TypeError`` for another model."""
    declare = getattr(model, "declaration", None)
    declared = declare() if callable(declare) else None
    if not isinstance(declared, ResourceDeclaration):
        raise TypeError(
            f"{model.__name__} is not a custom resource model: derive it from "
            "setpoint.CustomResource with group=..., version=..., kind=..."
        )
    return declared


def _protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version order as a sort key: v2 > v1 > v1beta2 > v1beta1 > v1alpha1."""
    match = _VERSION.match(version)
    if match is None:
        return (0, 0, 0)
    major, stage, minor = match.groups()
    rank = {"alpha": 1, "beta": 2, None: 3}[stage]
    return (rank, int(major), int(minor or 0))


def openapi_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of one resource version."""
    declaration = declaration_of(model)
    problems = field_name_problems(model)
    if problems:
        raise SchemaError(f"{model.__name__}: {'; '.join(problems)}")
    try:
        document = model.model_json_schema(by_alias=True, mode="validation")
        schema = structural_schema(document)
    except SchemaError as error:
        raise SchemaError(f"{model.__name__}: {error}") from None
    properties = dict(schema.get("properties", {}))
    properties["apiVersion"] = {
        "description": "APIVersion defines the versioned schema of this representation of "
        "an object.",
        "type": "string",
    }
    properties["kind"] = {
        "description": "Kind is a string value representing the REST resource this object "
        "represents.",
        "type": "string",
    }
    properties["metadata"] = {"type": "object"}
    for top in ("spec", "status"):
        # Optional at the top means "may be absent", never "may be null".
        if top in properties:
            properties[top] = {k: v for k, v in properties[top].items() if k != "nullable"}
    root: dict[str, Any] = {"type": "object"}
    description = (model.__doc__ or "").strip()
    if description:
        root["description"] = description
    root["properties"] = {name: properties[name] for name in sorted(properties)}
    required = [name for name in schema.get("required", []) if name not in ("apiVersion", "kind")]
    if required:
        root["required"] = sorted(required)
    rules = [rule.as_validation() for rule in declaration.rules]
    if rules:
        root["x-kubernetes-validations"] = rules
    return root


def _version_entry(model: type[BaseModel], storage: bool) -> dict[str, Any]:
    declaration = declaration_of(model)
    entry: dict[str, Any] = {"name": declaration.version, "served": declaration.served}
    entry["storage"] = storage
    if declaration.deprecated:
        entry["deprecated"] = True
        if declaration.deprecation_warning:
            entry["deprecationWarning"] = declaration.deprecation_warning
    entry["schema"] = {"openAPIV3Schema": openapi_schema(model)}
    subresources: dict[str, Any] = {}
    status = declaration.status_subresource
    if status is None:
        status = "status" in model.model_fields
    if status:
        subresources["status"] = {}
    if declaration.scale is not None:
        subresources["scale"] = declaration.scale.as_manifest()
    if subresources:
        entry["subresources"] = subresources
    if declaration.printer_columns:
        entry["additionalPrinterColumns"] = [
            column.as_manifest() for column in declaration.printer_columns
        ]
    if declaration.selectable_fields:
        entry["selectableFields"] = [{"jsonPath": path} for path in declaration.selectable_fields]
    return entry


def _same_names(first: ResourceDeclaration, other: ResourceDeclaration) -> list[str]:
    return [
        name
        for name in ("plural", "singular", "scope", "short_names", "categories")
        if getattr(first, name) != getattr(other, name)
    ]


def crd_manifest(*models: type[BaseModel]) -> dict[str, Any]:
    """One CRD for every version of one resource: the models share group and kind.

    With several versions exactly one is the storage version: the one declared
    ``storage=True``, else an error. Versions are listed in Kubernetes' priority order.
    """
    if not models:
        raise TypeError("crd_manifest needs at least one CustomResource model")
    declarations = [declaration_of(model) for model in models]
    first = declarations[0]
    for model, declaration in zip(models, declarations, strict=True):
        if (declaration.group, declaration.kind) != (first.group, first.kind):
            raise TypeError(
                f"{model.__name__} is {declaration.kind}.{declaration.group}, not "
                f"{first.kind}.{first.group}: one CRD holds the versions of one resource"
            )
        differing = _same_names(first, declaration)
        if differing:
            raise TypeError(
                f"{model.__name__}: every version of {first.kind} must declare the same "
                + ", ".join(differing)
            )
    versions = [declaration.version for declaration in declarations]
    duplicates = sorted({version for version in versions if versions.count(version) > 1})
    if duplicates:
        raise TypeError(f"{first.kind}: version {duplicates[0]} is declared twice")
    storage = [d.version for d in declarations if d.storage]
    if len(models) == 1 and first.storage is not False:
        storage = [first.version]
    if len(storage) != 1:
        raise TypeError(
            f"{first.kind}: exactly one version must be the storage version "
            f"(declare storage=True on one of {', '.join(sorted(versions))})"
        )
    ordered = sorted(
        zip(models, declarations, strict=True),
        key=lambda pair: version_priority(pair[1].version),
        reverse=True,
    )
    names: dict[str, Any] = {
        "kind": first.kind,
        "listKind": f"{first.kind}List",
        "plural": first.plural,
        "singular": first.singular,
    }
    if first.short_names:
        names["shortNames"] = list(first.short_names)
    if first.categories:
        names["categories"] = list(first.categories)
    metadata: dict[str, Any] = {"name": first.crd_name}
    if first.api_approval is not None or _protected(first.group):
        # kube-apiserver refuses CRDs in *.k8s.io / *.kubernetes.io without this annotation.
        metadata["annotations"] = {
            API_APPROVAL: first.api_approval or UNAPPROVED,
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": first.group,
            "names": names,
            "scope": first.scope,
            "versions": [
                _version_entry(model, declaration.version == storage[0])
                for model, declaration in ordered
            ],
        },
    }


def crd_manifests(models: Iterable[type[BaseModel]]) -> list[dict[str, Any]]:
    """One CRD per resource among ``models`` (versions grouped), sorted by CRD name."""
    grouped: dict[tuple[str, str], list[type[BaseModel]]] = {}
    for model in models:
        declaration = declaration_of(model)
        grouped.setdefault((declaration.group, declaration.kind), [])
        if model not in grouped[(declaration.group, declaration.kind)]:
            grouped[(declaration.group, declaration.kind)].append(model)
    crds = [crd_manifest(*versions) for versions in grouped.values()]
    return sorted(crds, key=lambda crd: crd["metadata"]["name"])
