"""Field-level validation errors, worded exactly as apimachinery's ``field.Error``.

The API server reports invalid input as ``<field>: <Type text>: <bad value>: <detail>``, e.g.
``metadata.name: Invalid value: "A": a lowercase RFC 1123 subdomain must ...``, and lists the same
errors as ``causes`` of a 422 ``Status``. Clients show these messages to users, so the local
cluster and the client-side validators share this one formatter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "ERROR_TYPE_DUPLICATE",
    "ERROR_TYPE_FORBIDDEN",
    "ERROR_TYPE_INTERNAL",
    "ERROR_TYPE_INVALID",
    "ERROR_TYPE_NOT_FOUND",
    "ERROR_TYPE_NOT_SUPPORTED",
    "ERROR_TYPE_REQUIRED",
    "ERROR_TYPE_TOO_LONG",
    "ERROR_TYPE_TOO_MANY",
    "ERROR_TYPE_TYPE_INVALID",
    "FieldError",
    "aggregate_messages",
    "go_quote",
]

# Machine-readable error types; they double as Status cause reasons (``FieldValueInvalid``...).
ERROR_TYPE_NOT_FOUND: Final = "FieldValueNotFound"
ERROR_TYPE_REQUIRED: Final = "FieldValueRequired"
ERROR_TYPE_DUPLICATE: Final = "FieldValueDuplicate"
ERROR_TYPE_INVALID: Final = "FieldValueInvalid"
ERROR_TYPE_NOT_SUPPORTED: Final = "FieldValueNotSupported"
ERROR_TYPE_FORBIDDEN: Final = "FieldValueForbidden"
ERROR_TYPE_TOO_LONG: Final = "FieldValueTooLong"
ERROR_TYPE_TOO_MANY: Final = "FieldValueTooMany"
ERROR_TYPE_INTERNAL: Final = "InternalError"
ERROR_TYPE_TYPE_INVALID: Final = "FieldValueTypeInvalid"

_TYPE_TEXT: Final[dict[str, str]] = {
    ERROR_TYPE_NOT_FOUND: "Not found",
    ERROR_TYPE_REQUIRED: "Required value",
    ERROR_TYPE_DUPLICATE: "Duplicate value",
    ERROR_TYPE_INVALID: "Invalid value",
    ERROR_TYPE_NOT_SUPPORTED: "Unsupported value",
    ERROR_TYPE_FORBIDDEN: "Forbidden",
    ERROR_TYPE_TOO_LONG: "Too long",
    ERROR_TYPE_TOO_MANY: "Too many",
    ERROR_TYPE_INTERNAL: "Internal error",
    ERROR_TYPE_TYPE_INVALID: "Invalid value",
}

# Upstream prints no bad value for these types, only the type text and the detail.
_TYPES_WITHOUT_VALUE: Final = frozenset(
    {ERROR_TYPE_REQUIRED, ERROR_TYPE_FORBIDDEN, ERROR_TYPE_TOO_LONG, ERROR_TYPE_INTERNAL}
)

_OMITTED: Final = object()

_GO_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """Quote ``text`` like Go's ``%q``: double quotes, backslash escapes, printable Unicode kept."""
    out = ['"']
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _format_float(value: float) -> str:
    # Go's %v for floats: shortest representation, exponent form only for large/small numbers.
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _format_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        # Go prints a []string bad value with %#v; selector errors carry such values.
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation problem: its type, the field path, the bad value and a detail text.

    ``str(error)`` is the full upstream message ``"<field>: <body>"``; ``body`` is the message
    without the field, which upstream puts into ``Status.details.causes[].message``.
    """

    type: str
    field: str
    bad_value: Any = _OMITTED
    detail: str = ""

    @classmethod
    def invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        """``<field>: Invalid value: <value>: <detail>``."""
        return cls(ERROR_TYPE_INVALID, field, value, detail)

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        """``<field>: Required value[: <detail>]``."""
        return cls(ERROR_TYPE_REQUIRED, field, _OMITTED, detail)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        """``<field>: Forbidden: <detail>``."""
        return cls(ERROR_TYPE_FORBIDDEN, field, _OMITTED, detail)

    @classmethod
    def duplicate(cls, field: str, value: Any) -> FieldError:
        """``<field>: Duplicate value: <value>``."""
        return cls(ERROR_TYPE_DUPLICATE, field, value)

    @classmethod
    def not_found(cls, field: str, value: Any) -> FieldError:
        """``<field>: Not found: <value>``."""
        return cls(ERROR_TYPE_NOT_FOUND, field, value)

    @classmethod
    def too_long(cls, field: str, max_length: int) -> FieldError:
        """``<field>: Too long: may not be more than <n> bytes`` (upstream wording)."""
        return cls(ERROR_TYPE_TOO_LONG, field, _OMITTED, f"may not be more than {max_length} bytes")

    @classmethod
    def not_supported(cls, field: str, value: Any, supported: Sequence[str]) -> FieldError:
        """``<field>: Unsupported value: <value>: supported values: "a", "b"``."""
        detail = ""
        if supported:
            detail = "supported values: " + ", ".join(go_quote(v) for v in supported)
        return cls(ERROR_TYPE_NOT_SUPPORTED, field, value, detail)

    @classmethod
    def type_invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        """``<field>: Invalid value: <value>: <detail>`` with the type-invalid cause."""
        return cls(ERROR_TYPE_TYPE_INVALID, field, value, detail)

    @property
    def body(self) -> str:
        """The message without the field path (upstream ``ErrorBody``)."""
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _TYPES_WITHOUT_VALUE and self.bad_value is not _OMITTED:
            text = f"{text}: {_format_value(self.bad_value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def as_cause(self) -> dict[str, str]:
        """This error as a ``Status`` cause: ``{"reason", "message", "field"}``."""
        return {"reason": self.type, "message": self.body, "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def aggregate_messages(messages: Iterable[str | FieldError]) -> str:
    """Join messages like apimachinery's aggregate error.

    One message is returned as is; several (duplicates dropped) become ``"[a, b]"``.
    """
    seen: list[str] = []
    for message in messages:
        text = str(message)
        if text not in seen:
            seen.append(text)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
