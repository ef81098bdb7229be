"""Label selectors and labels of workload specs (apimachinery ``ValidateLabelSelector``,
``ValidateLabels``; ``LabelSelectorAsSelector`` semantics for matching)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver.validation.object_meta import (
    label_value_problems,
    qualified_name_problems,
)

_ENCODER: Final = msgspec.json.Encoder(order="sorted")
NON_NEGATIVE: Final = "must be greater than or equal to 0"
IMMUTABLE: Final = "field is immutable"
_OPERATORS_WITH_VALUES: Final = ("In", "NotIn")
_OPERATORS_WITHOUT_VALUES: Final = ("Exists", "DoesNotExist")


def validate_labels(labels: object, path: str) -> list[FieldError]:
    """``ValidateLabels``: keys are qualified names, values label values (sorted by key)."""
    errors: list[FieldError] = []
    if not isinstance(labels, Mapping):
        return errors
    for key in sorted(labels):
        errors.extend(fe.invalid(path, key, problem) for problem in qualified_name_problems(key))
        value = labels[key]
        if isinstance(value, str):
            errors.extend(fe.invalid(path, value, p) for p in label_value_problems(value))
    return errors


def validate_label_selector(selector: object, path: str) -> list[FieldError]:
    """``ValidateLabelSelector`` (label values in selectors must be valid)."""
    if not isinstance(selector, Mapping):
        return []
    errors = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    expressions = selector.get("matchExpressions")
    for index, expression in enumerate(expressions if isinstance(expressions, list) else []):
        if not isinstance(expression, Mapping):
            continue
        item = f"{path}.matchExpressions[{index}]"
        operator = expression.get("operator")
        values = expression.get("values") or []
        if operator in _OPERATORS_WITH_VALUES:
            if not values:
                errors.append(
                    fe.required(
                        f"{item}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif operator in _OPERATORS_WITHOUT_VALUES:
            if values:
                errors.append(
                    fe.forbidden(
                        f"{item}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errors.append(fe.invalid(f"{item}.operator", operator, "not a valid selector operator"))
        key = expression.get("key")
        key_text = key if isinstance(key, str) else ""
        errors.extend(
            fe.invalid(f"{item}.key", key_text, p) for p in qualified_name_problems(key_text)
        )
        for value_index, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str):
                errors.extend(
                    fe.invalid(f"{item}.values[{value_index}]", value, p)
                    for p in label_value_problems(value)
                )
    return errors


#: Parsed selectors by their JSON form: workloads repeat theirs on every write.
_PARSED: dict[bytes, LabelSelector | None] = {}
_NOTHING: Final = LabelSelector.nothing()
_PARSED_LIMIT: Final = 4096


def as_selector(selector: object) -> LabelSelector | None:
    """``LabelSelectorAsSelector``: None when it fails (nil selects nothing)."""
    if not isinstance(selector, Mapping):
        return _NOTHING
    try:
        key = _ENCODER.encode(selector)
    except (TypeError, msgspec.EncodeError):
        key = b""
    if key and key in _PARSED:
        return _PARSED[key]
    try:
        parsed: LabelSelector | None = LabelSelector.from_dict(selector)
    except (SelectorError, ValueError, TypeError):
        parsed = None
    if key:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        _PARSED[key] = parsed
    return parsed


def is_empty_selector(selector: Mapping[str, Any]) -> bool:
    """No matchLabels and no matchExpressions."""
    return not selector.get("matchLabels") and not selector.get("matchExpressions")


def same_selector(new: object, old: object) -> bool:
    """Semantic equality of two selectors (nil and empty maps/lists are equal)."""

    def normal(selector: object) -> object:
        if not isinstance(selector, Mapping):
            return None
        expressions = selector.get("matchExpressions") or []
        return (
            dict(selector.get("matchLabels") or {}),
            [dict(e) if isinstance(e, Mapping) else e for e in expressions],
        )

    return normal(new) == normal(old)


def non_negative(value: object, path: str) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [fe.invalid(path, value, NON_NEGATIVE)]
    return []
