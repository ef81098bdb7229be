"""One term of a label selector (``Requirement``): key, operator, values; validation; matching.

Operators are spelled as apimachinery's ``selection`` package spells them, because they appear
in error messages: ``in``, ``notin``, ``=``, ``==``, ``!=``, ``exists``, ``!``, ``gt``, ``lt``.
Validation mirrors ``labels.NewRequirement``: the key must be a qualified name, values valid
label values, and the number of values must suit the operator.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError, aggregate_messages
from setpoint.api.go_format import go_string_slice
from setpoint.api.names import validate_label_value, validate_qualified_name
from setpoint.api.selector_error import SelectorError

__all__ = [
    "BINARY_OPERATORS",
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXISTS",
    "EXPRESSION_OPERATORS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOT_EQUALS",
    "NOT_IN",
    "Requirement",
    "child_path",
]

# Operators as apimachinery's selection package spells them (they appear in error messages).
IN: Final = "in"
NOT_IN: Final = "notin"
EQUALS: Final = "="
DOUBLE_EQUALS: Final = "=="
NOT_EQUALS: Final = "!="
EXISTS: Final = "exists"
DOES_NOT_EXIST: Final = "!"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"

BINARY_OPERATORS: Final = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_UNARY_OPERATORS: Final = (EXISTS, DOES_NOT_EXIST)
_ALL_OPERATORS: Final = BINARY_OPERATORS + _UNARY_OPERATORS

# matchExpressions operators (metav1.LabelSelectorOperator) and their selector equivalents.
EXPRESSION_OPERATORS: Final = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_GO_INT_RE: Final = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)


def _parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: optional sign, decimal digits, int64 range."""
    if not _GO_INT_RE.match(text):
        return None
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        return None
    return value


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a label selector: ``key``, an operator and a sorted set of values.

    ``operator`` is one of ``in``, ``notin``, ``=``, ``!=``, ``exists``, ``!`` (does not exist),
    ``gt``, ``lt``. ``==`` is read as ``=`` (they mean the same). Build with :meth:`create`,
    which validates; the constructor trusts its input.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, key: str, operator: str, values: Iterable[str] = (), *, path: str = ""
    ) -> Requirement:
        """Validate and build a requirement; raises :class:`SelectorError` listing every problem.

        ``path`` prefixes the field names in messages (e.g. ``spec.selector``).
        """
        values_list = sorted(set(values))
        errors = _requirement_errors(key, operator, values_list, path)
        if errors:
            raise SelectorError(aggregate_messages(errors))
        if operator == DOUBLE_EQUALS:
            operator = EQUALS
        return cls(key, operator, tuple(values_list))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(self.values)
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({joined})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{joined}"


def child_path(path: str, name: str) -> str:
    """``path.name``, or ``name`` at the root (how field paths print)."""
    return f"{path}.{name}" if path else name


def _requirement_errors(
    key: str, operator: str, values: Sequence[str], path: str
) -> list[FieldError]:
    """apimachinery ``NewRequirement`` checks, in its order and wording."""
    errors: list[FieldError] = []
    key_problems = validate_qualified_name(key)
    if key_problems:
        errors.append(fe.invalid(child_path(path, "key"), key, "; ".join(key_problems)))
    values_path = child_path(path, "values")
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(
                fe.invalid(
                    values_path,
                    go_string_slice(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errors.append(
                fe.invalid(
                    values_path,
                    go_string_slice(values),
                    "exact-match compatibility requires one single value",
                )
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(
                fe.invalid(
                    values_path,
                    go_string_slice(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errors.append(
                fe.invalid(
                    values_path,
                    go_string_slice(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for index, value in enumerate(values):
            if _parse_int64(value) is None:
                errors.append(
                    fe.invalid(
                        f"{values_path}[{index}]",
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        errors.append(fe.not_supported(child_path(path, "operator"), operator, _ALL_OPERATORS))
    for index, value in enumerate(values):
        value_problems = validate_label_value(value)
        if value_problems:
            errors.append(
                fe.invalid(f"{values_path}[{index}][{key}]", value, "; ".join(value_problems))
            )
    return errors
