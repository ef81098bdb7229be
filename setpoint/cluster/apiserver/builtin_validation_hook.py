"""Validation of built-in objects against the upstream schemas (``kubernetes-validate``).

The schema work lives in :mod:`setpoint.cluster.apiserver.builtin_validation`; this adapts it to
the server's :data:`BuiltinValidator` signature (field errors plus unknown-field paths). Unknown
fields are pruned, as decoding into the Go types does upstream.
"""

from __future__ import annotations

from typing import Any

from setpoint.cluster.apiserver.builtin_validation import validate_builtin
from setpoint.cluster.apiserver.field_errors import FieldError
from setpoint.cluster.apiserver.kind_behaviour import BuiltinValidator
from setpoint.cluster.apiserver.served_resources import ServedResource


def _validate(resource: ServedResource, obj: dict[str, Any]) -> tuple[list[FieldError], list[str]]:
    result = validate_builtin(obj)
    return result.errors, result.unknown_fields


def builtin_validator() -> BuiltinValidator:
    """The validator of built-in kinds."""
    return _validate
