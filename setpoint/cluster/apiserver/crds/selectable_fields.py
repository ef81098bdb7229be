"""``selectableFields``: the custom-resource fields that field selectors may use, and the checks
on their JSON paths against the version's schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.crds.definition import (
    as_list,
    as_mapping,
    as_text,
    has_openapi_schema,
)
from setpoint.cluster.apiserver.crds.versions import find_version

# Upstream limit on selectable fields per version (MaxSelectableFields).
MAX_SELECTABLE_FIELDS: Final = 8


def _walk_json_path(schema: Mapping[str, Any], json_path: str) -> tuple[Any, str, str]:
    """Follow a selectable field's ``.a.b`` path (``cel.ValidFieldPath`` without arrays).

    Returns the schema found, the problem (empty if none) and the canonical field path.
    """
    tokens = [token for token in re.split(r"([.\[\]])", json_path) if token]
    current: Any = schema
    canonical = ""
    position = 0
    while position < len(tokens):
        token = tokens[position]
        if token == "[":
            return None, "array notation is not allowed", canonical
        if token != ".":
            return None, f"expected [ or . but got: {token}", canonical
        if position + 1 >= len(tokens):
            return None, "unexpected end of JSON path", canonical
        name = tokens[position + 1]
        position += 2
        properties = current.get("properties") if isinstance(current, Mapping) else None
        extra = current.get("additionalProperties") if isinstance(current, Mapping) else None
        if isinstance(properties, Mapping) and properties:
            if name not in properties:
                return None, "does not refer to a valid field", canonical
            current = properties[name]
            canonical = f"{canonical}.{name}" if canonical else name
        elif extra is not None:
            current = extra if isinstance(extra, Mapping) else None
            canonical = f"{canonical}[{name}]"
        else:
            return None, "does not refer to a valid field", canonical
    return current, "", canonical


def selectable_field_errors(
    fields: list[Any], schema_holder: Any, path: str, missing_schema: str
) -> list[FieldError]:
    """``ValidateCustomResourceSelectableFields``: simple paths to scalar fields, at most 8."""
    if not has_openapi_schema(schema_holder):
        return [fe.invalid(path, "", missing_schema)]
    schema = schema_holder["openAPIV3Schema"]
    if not isinstance(schema, Mapping):
        return []
    errors: list[FieldError] = []
    unique: list[str] = []
    for index, selectable in enumerate(fields):
        field_path = f"{path}[{index}].jsonPath"
        json_path = as_text(as_mapping(selectable).get("jsonPath"))
        if not json_path:
            errors.append(fe.required(field_path, ""))
            continue
        found, problem, canonical = _walk_json_path(schema, json_path)
        if problem:
            errors.append(fe.invalid(field_path, json_path, f"is an invalid path: {problem}"))
            continue
        if canonical.split(".")[0].split("[")[0] == "metadata":
            detail = "must not point to fields in metadata"
            errors.append(fe.invalid(field_path, json_path, detail))
        if as_mapping(found).get("type") not in ("string", "boolean", "integer"):
            detail = (
                "must point to a field of type string, boolean or integer. Enum string fields "
                "and strings with formats are allowed."
            )
            errors.append(fe.invalid(field_path, json_path, detail))
        if canonical in unique:
            errors.append(fe.duplicate(field_path, json_path))
        else:
            unique.append(canonical)
    if len(unique) > MAX_SELECTABLE_FIELDS:
        errors.append(fe.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errors


def selectable_fields(crd: Mapping[str, Any], version: str) -> list[str]:
    """The ``jsonPath``s of ``version``'s selectable fields (usable in field selectors)."""
    entry = find_version(crd, version)
    if entry is None:
        return []
    return [
        path
        for item in as_list(entry.get("selectableFields"))
        if (path := as_text(as_mapping(item).get("jsonPath")))
    ]
