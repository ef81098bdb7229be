"""Field selectors: ``field=value`` / ``field!=value`` terms, comma-ANDed, with escapes.

``\\,``, ``\\=`` and ``\\\\`` escape those characters inside values; field names are
not escaped. A field that an object does not have reads as the empty string, so
``spec.nodeName=`` selects unscheduled pods. Errors use apimachinery's wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from setpoint.api.selector_error import SelectorError

__all__ = ["FieldRequirement", "FieldSelector", "escape_field_value", "unescape_field_value"]

_FIELD_OPERATORS: Final = ("!=", "==", "=")  # tried in this order at each position, as upstream


def escape_field_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so that a value can be embedded in a field selector."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """Undo :func:`escape_field_value`; raises :class:`SelectorError` on a bad escape."""
    if not any(ch in value for ch in "\\,="):
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped by a backslash."""
    terms: list[str] = []
    start = 0
    escaped = False
    for index, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """Split at the first operator occurrence: ``(field, operator, raw value)``."""
    for index in range(len(term)):
        for operator in _FIELD_OPERATORS:
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator) :]
    return None


FieldRequirement = tuple[str, str, str]
"""``(field, operator, value)`` with operator ``"="`` or ``"!="``."""


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """An AND of ``field=value`` / ``field!=value`` terms; the empty selector matches everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def __post_init__(self) -> None:
        for field, operator, value in self.requirements:
            if operator not in ("=", "!="):
                raise SelectorError(
                    f"invalid field selector: operator {operator!r} for {field!r} "
                    "is not supported: use '=', '==' or '!='"
                )
            if not isinstance(value, str):
                raise SelectorError(f"invalid field selector: value of {field!r} must be a string")
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements)))

    @classmethod
    def everything(cls) -> FieldSelector:
        """The selector that matches every object."""
        return cls()

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse ``a=b,c!=d`` (with ``\\,``, ``\\=``, ``\\\\`` escapes in values)."""
        if not isinstance(text, str):
            raise SelectorError(f"field selector must be a string, not {type(text).__name__}")
        requirements: list[FieldRequirement] = []
        for part in _split_terms(text):
            if not part:
                continue
            split = _split_term(part)
            if split is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
            field, operator, raw_value = split
            operator = "=" if operator == "==" else operator
            requirements.append((field, operator, unescape_field_value(raw_value)))
        return cls(tuple(requirements))

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> FieldSelector:
        """A selector requiring each ``field=value`` of ``fields``."""
        return cls(tuple((field, "=", value) for field, value in fields.items()))

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object with these field values is selected (a missing field is ``""``)."""
        for field, operator, value in self.requirements:
            have = fields.get(field, "")
            if (have == value) != (operator == "="):
                return False
        return True

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if the selector has a ``field=value`` term."""
        for name, operator, value in self.requirements:
            if name == field and operator == "=":
                return value
        return None

    def __str__(self) -> str:
        return ",".join(
            f"{field}{operator}{escape_field_value(value)}"
            for field, operator, value in self.requirements
        )
