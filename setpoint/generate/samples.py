"""One valid sample object per custom resource, for ``config/samples/``.

A model may define ``sample()`` (a classmethod returning an instance) to choose its sample,
including its name (``metadata.name``; other metadata is dropped); otherwise the sample is
made from the CRD schema: defaults where the schema has them, and for required fields without
a default the smallest value the schema accepts (the first enum value, the minimum, a string
of the minimum length ...).
"""

from __future__ import annotations

from typing import Any

from setpoint.api.resources.custom_resource import CustomResource
from setpoint.api.resources.definition import openapi_schema

__all__ = ["sample_object"]


def sample_object(model: type[CustomResource]) -> dict[str, Any]:
    """A sample object of ``model``, named as its ``sample()`` says, else ``<singular>-sample``."""
    declaration = model.declaration()
    name = f"{declaration.singular}-sample"
    sample = getattr(model, "sample", None)
    if callable(sample):
        instance = sample()
        body = instance.model_dump(mode="json", by_alias=True, exclude_none=True)
        name = (body.pop("metadata", None) or {}).get("name") or name
    else:
        schema = openapi_schema(model)
        body = {}
        for field in ("spec",):
            child = schema.get("properties", {}).get(field)
            if child is not None:
                body[field] = _value(child, field)
    body.pop("status", None)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    return {
        "apiVersion": declaration.api_version,
        "kind": declaration.kind,
        "metadata": {"name": name},
        **body,
    }


def _value(schema: dict[str, Any], name: str) -> Any:
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("x-kubernetes-int-or-string"):
        return 1
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {key: _value(properties[key], key) for key in required if key in properties}
    if kind == "array":
        count = schema.get("minItems", 0)
        return [_value(schema.get("items", {}), name) for _ in range(count)]
    if kind == "integer" or kind == "number":
        minimum = schema.get("minimum", 1)
        value = minimum + 1 if schema.get("exclusiveMinimum") else minimum
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "string":
        text = f"example-{name.lower()}"
        minimum, maximum = schema.get("minLength", 0), schema.get("maxLength")
        if len(text) < minimum:
            text = text + "x" * (minimum - len(text))
        if maximum is not None:
            text = text[:maximum]
        return text
    return {}
