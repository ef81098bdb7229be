"""Pruning: drop fields a structural schema does not specify, and report where they were.

Mirrors ``apiextensions-apiserver/pkg/apiserver/schema/pruning``: a field survives if its schema
lists it in ``properties`` or has ``additionalProperties``; below
``x-kubernetes-preserve-unknown-fields: true`` nothing is dropped (but listed properties below
are still pruned); ``apiVersion``, ``kind`` and ``metadata`` of the resource itself and of
embedded resources are kept (embedded ``metadata`` is coerced to ObjectMeta instead). Paths are
reported sorted, as ``spec.foo``, ``spec.items[0].bar`` — what ``fieldValidation=Strict`` names in
``unknown field "spec.foo"`` and ``Warn`` puts in ``Warning`` headers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from setpoint.cluster.apiserver.schema.compiled import SchemaNode
from setpoint.cluster.apiserver.schema.embedded import coerce_object_meta, embedded_resources
from setpoint.cluster.apiserver.schema.quantities import QUANTITY_FORMAT, canonical_text

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


def _key(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def prune(node: SchemaNode | None, obj: Any, *, resource_root: bool = True) -> list[str]:
    """Remove unknown fields from ``obj`` in place; return their paths, sorted.

    With ``resource_root`` the object is a whole resource: its ``apiVersion``, ``kind`` and
    ``metadata`` are kept whatever the schema says (pass a node from :func:`as_resource_root`
    and ``resource_root=False`` to skip re-deriving it on every call).
    """
    unknown: list[str] = []
    _prune(obj, as_resource_root(node) if resource_root else node, "", unknown)
    unknown.sort()
    return unknown


def as_resource_root(node: SchemaNode | None) -> SchemaNode:
    """The schema of a whole resource: like an embedded resource, its meta fields are kept."""
    if node is None:
        return SchemaNode(embedded_resource=True)
    return node if node.embedded_resource else replace(node, embedded_resource=True)


def _prune(value: Any, node: SchemaNode | None, path: str, unknown: list[str]) -> None:
    if node is not None and node.preserve_unknown_fields:
        _skip_prune(value, node, path, unknown)
        return
    if isinstance(value, dict):
        if node is None:
            unknown.extend(_key(path, key) for key in value)
            value.clear()
            return
        properties = node.properties
        extra = node.additional_schema
        # Any additionalProperties (even a bare true/false) keeps the key; without a schema its
        # value is pruned against nothing, so nested objects are emptied, as upstream does.
        has_extra = node.additional_properties is not None
        for key in list(value):
            if node.embedded_resource and key in _META_FIELDS:
                continue
            child = properties.get(key)
            if child is not None:
                if child.format == QUANTITY_FORMAT:
                    value[key] = _stored_quantity(value[key])
                _prune(value[key], child, _key(path, key), unknown)
            elif has_extra:
                if extra is not None and extra.format == QUANTITY_FORMAT:
                    value[key] = _stored_quantity(value[key])
                _prune(value[key], extra, _key(path, key), unknown)
            else:
                if key not in _META_FIELDS or path:
                    unknown.append(_key(path, key))
                del value[key]
    elif isinstance(value, list):
        items = node.items if node is not None else None
        if items is not None and items.format == QUANTITY_FORMAT:
            value[:] = [_stored_quantity(item) for item in value]
        for index, item in enumerate(value):
            _prune(item, items, f"{path}[{index}]", unknown)


def _stored_quantity(value: Any) -> Any:
    """A built-in quantity field as kube-apiserver stores it: Go decodes it into a
    ``resource.Quantity`` and encodes it back in canonical form (``1000m`` → ``"1"``, a number
    → a string). A value that is not a quantity is left for validation to report."""
    text = canonical_text(value)
    return value if text is None else text


def _skip_prune(value: Any, node: SchemaNode, path: str, unknown: list[str]) -> None:
    """Below preserve-unknown-fields: keep unknown fields, still prune specified ones."""
    if isinstance(value, dict):
        extra = node.additional_schema
        for key, item in value.items():
            if node.embedded_resource and key in _META_FIELDS:
                continue
            child = node.properties.get(key)
            if child is not None:
                _prune(item, child, _key(path, key), unknown)
            elif node.additional_properties is not None:
                _prune(item, extra, _key(path, key), unknown)
    elif isinstance(value, list) and node.items is not None:
        for index, item in enumerate(value):
            _skip_prune(item, node.items, f"{path}[{index}]", unknown)


def prune_nulls(node: SchemaNode | None, obj: Any) -> None:
    """Drop nulls where the schema is neither nullable nor has a default (in place).

    Mirrors ``PruneNonNullableNullsWithoutDefaults``: ``{"spec": {"size": null}}`` loses
    ``size`` unless the schema allows null or would default it.
    """
    if node is None:
        return  # nothing below a value without a schema is ever dropped (metadata, say)
    if isinstance(obj, dict):
        for key in list(obj):
            child = node.child(key)
            if child is None:
                continue
            value = obj[key]
            if value is None:
                if not child.nullable and not child.has_default:
                    del obj[key]
            elif isinstance(value, dict | list):
                prune_nulls(child, value)
    elif isinstance(obj, list):
        items = node.items
        if items is not None:
            for item in obj:
                prune_nulls(items, item)


def coerce_embedded_metadata(node: SchemaNode | None, obj: Any) -> list[str]:
    """Coerce the ``metadata`` of every embedded resource below ``obj`` to ObjectMeta.

    Returns the unknown metadata field paths dropped (``spec.template.metadata.foo``), sorted.
    The resource's own ``metadata`` is not touched (that is the server's, as for built-ins).
    """
    unknown: list[str] = []
    for path, resource in embedded_resources(node, obj):
        metadata = resource.get("metadata")
        if isinstance(metadata, dict):
            unknown.extend(coerce_object_meta(metadata, _key(path, "metadata")))
    unknown.sort()
    return unknown
