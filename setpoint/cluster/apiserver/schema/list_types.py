"""``x-kubernetes-list-type`` invariants: ``set`` items and ``map`` keys must be unique.

Mirrors apiextensions' ``listtype.ValidateListSetsAndMaps``: for every value seen more than
once, the index of its *second* occurrence is reported as ``Duplicate value``; for a map list
the reported value is the key map (``{"name":"a"}``), and an item that is not an object is
``must be an object for an array of list-type map``.
"""

from __future__ import annotations

from typing import Any

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema.compiled import SchemaNode
from setpoint.cluster.apiserver.schema.value_validation import canonical_json


def _join(parent: str, child: str) -> str:
    return f"{parent}.{child}" if parent else child


def validate_list_types(node: SchemaNode, obj: Any, path: str = "") -> list[FieldError]:
    """All list-type violations in ``obj`` (an object validated by ``node``) under ``path``."""
    errors: list[FieldError] = []
    if isinstance(obj, dict):
        _walk_object(node, obj, path, errors)
    return errors


def _walk_object(
    node: SchemaNode, obj: dict[str, Any], path: str, errors: list[FieldError]
) -> None:
    extra = node.additional_schema
    if extra is not None:
        for key, value in obj.items():
            _walk(extra, value, f"{path}[{key}]", errors)
    if node.properties:
        for key, value in obj.items():
            child = node.properties.get(key)
            if child is not None:
                _walk(child, value, _join(path, key), errors)


def _walk(node: SchemaNode, value: Any, path: str, errors: list[FieldError]) -> None:
    if not node.has_list_types:
        return
    if isinstance(value, list):
        _walk_list(node, value, path, errors)
    elif isinstance(value, dict):
        _walk_object(node, value, path, errors)


def _walk_list(node: SchemaNode, items: list[Any], path: str, errors: list[FieldError]) -> None:
    if node.list_type == "set":
        for index in _second_occurrences(items):
            errors.append(fe.duplicate(f"{path}[{index}]", items[index]))
    elif node.list_type == "map":
        errors.extend(_map_list_errors(node, items, path))
    if node.items is not None:
        for index, item in enumerate(items):
            _walk(node.items, item, f"{path}[{index}]", errors)


def _second_occurrences(values: list[Any]) -> list[int]:
    """Indices where a value is seen for the second time (later repeats are not reported)."""
    counts: dict[str, int] = {}
    found: list[int] = []
    for index, value in enumerate(values):
        key = canonical_json(value)
        seen = counts.get(key, 0)
        counts[key] = seen + 1
        if seen == 1:
            found.append(index)
    return found


def _map_list_errors(node: SchemaNode, items: list[Any], path: str) -> list[FieldError]:
    for index, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            detail = "must be an object for an array of list-type map"
            return [fe.invalid(f"{path}[{index}]", item, detail)]
    if len(items) <= 1:
        return []
    key_fields = node.list_map_keys
    keys: list[dict[str, Any]] = []
    for item in items:
        key: dict[str, Any] = {}
        if isinstance(item, dict):
            for name in key_fields:
                if name in item:
                    key[name] = item[name]
        keys.append(key)
    return [fe.duplicate(f"{path}[{i}]", keys[i]) for i in _second_occurrences(keys)]
