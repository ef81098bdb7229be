"""Defaulting: fill in ``default`` values of a structural schema, recursively, in place.

Mirrors ``apiextensions-apiserver/pkg/apiserver/schema/defaulting.Default``: a property with a
default is set when it is absent, or null while the schema is not nullable; then every present
value is defaulted by its own schema (properties, ``additionalProperties``, array ``items``).
Defaults are deep-copied so stored objects never share structure with the schema. kube-apiserver
applies this on every request body and on every read from storage.
"""

from __future__ import annotations

import copy
from typing import Any

from setpoint.cluster.apiserver.schema.compiled import SchemaNode


def _is_non_nullable_null(value: Any, node: SchemaNode | None) -> bool:
    return value is None and node is not None and not node.nullable


def apply_defaults(node: SchemaNode | None, obj: Any) -> None:
    """Apply the schema's defaults to ``obj`` in place."""
    if node is None:
        return
    if isinstance(obj, dict):
        for name, child in node.properties.items():
            if child.has_default and (name not in obj or _is_non_nullable_null(obj[name], child)):
                obj[name] = copy.deepcopy(child.default)
        extra = node.additional_schema
        for key, value in obj.items():
            prop = node.properties.get(key)
            if prop is not None:
                apply_defaults(prop, value)
            elif extra is not None:
                if extra.has_default and _is_non_nullable_null(value, extra):
                    value = obj[key] = copy.deepcopy(extra.default)
                apply_defaults(extra, value)
    elif isinstance(obj, list):
        items = node.items
        if items is None:
            return
        for index, value in enumerate(obj):
            if items.has_default and _is_non_nullable_null(value, items):
                value = obj[index] = copy.deepcopy(items.default)
            apply_defaults(items, value)


def has_defaults(node: SchemaNode | None) -> bool:
    """Whether any ``default`` appears anywhere in the schema (to skip defaulting cheaply)."""
    if node is None:
        return False
    if node.has_default:
        return True
    if any(has_defaults(child) for child in node.properties.values()):
        return True
    return has_defaults(node.additional_schema) or has_defaults(node.items)
