"""Turning call arguments into query parameters and URL path segments, safely."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from setpoint.api.selectors import FieldSelector, LabelSelector

__all__ = [
    "Selector",
    "check_path_segment",
    "field_selector_param",
    "is_path_segment",
    "label_selector_param",
]

# What callers may pass as a selector.
Selector: TypeAlias = "str | Mapping[str, str] | LabelSelector | FieldSelector"


def label_selector_param(value: Selector | None) -> str | None:
    """``labelSelector`` from a string, a ``{"key": "value"}`` mapping or a ``LabelSelector``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return ",".join(f"{key}={val}" for key, val in value.items())
    # Whoever made a selector object has imported its module: this import is a lookup.
    from setpoint.api.selectors import LabelSelector

    if isinstance(value, LabelSelector) and value.matches_nothing:
        raise ValueError("label_selector: this selector matches nothing; there is no query")
    return str(value)


def field_selector_param(value: Selector | None) -> str | None:
    """``fieldSelector`` from a string, a ``{"field": "value"}`` mapping (values escaped) or a
    ``FieldSelector``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        # The selector modules load with the first selector: most programs pass none.
        from setpoint.api.field_selectors import escape_field_value

        return ",".join(f"{key}={escape_field_value(str(val))}" for key, val in value.items())
    return str(value)


def is_path_segment(value: str) -> bool:
    """Whether ``value`` can be one URL path segment: not '.' or '..', no '/' or '%'."""
    # The API server rejects the others too (IsValidPathSegmentName); checking here keeps a
    # name like "x/status" from silently addressing another URL.
    return value not in (".", "..") and "/" not in value and "%" not in value


def check_path_segment(field_name: str, value: str | None) -> None:
    """Raise ``ValueError`` naming ``field_name`` if ``value`` cannot be one URL path segment."""
    if value is None:
        return
    if not is_path_segment(value):
        raise ValueError(f"{field_name}: {value!r} may not be '.', '..', or contain '/' or '%'")
