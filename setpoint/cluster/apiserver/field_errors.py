"""Field-level validation errors, rendered exactly as kube-apiserver 1.32 renders them.

A :class:`FieldError` is the Python twin of apimachinery's ``field.Error``: a cause type
(``FieldValueInvalid`` ...), a field path (``spec.items[0].name``), the offending value and a
detail. ``.message`` mirrors ``field.Error.Error()``; ``.body`` mirrors ``ErrorBody()`` (what goes
into a Status cause). :func:`invalid_status` builds the 422 ``Invalid`` Status the way
``errors.NewInvalid`` does, including the ``[a, b]`` aggregation of several errors.

Values are printed the way Go's ``fmt`` prints the decoded JSON value: strings ``%q``-quoted,
integers and floats bare (floats in Go's ``%v`` style, e.g. ``1e+06``), ``null`` as ``"null"``,
maps and lists in Go's ``%#v`` form (``map[string]interface {}{"a":1}``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

# Cause types (metav1.CauseType values), as sent in Status.details.causes[].reason.
FIELD_VALUE_NOT_FOUND: Final = "FieldValueNotFound"
FIELD_VALUE_REQUIRED: Final = "FieldValueRequired"
FIELD_VALUE_DUPLICATE: Final = "FieldValueDuplicate"
FIELD_VALUE_INVALID: Final = "FieldValueInvalid"
FIELD_VALUE_NOT_SUPPORTED: Final = "FieldValueNotSupported"
FIELD_VALUE_FORBIDDEN: Final = "FieldValueForbidden"
FIELD_VALUE_TOO_LONG: Final = "FieldValueTooLong"
FIELD_VALUE_TOO_MANY: Final = "FieldValueTooMany"
FIELD_VALUE_TYPE_INVALID: Final = "FieldValueTypeInvalid"
INTERNAL_ERROR: Final = "InternalError"

# The human words of each type (field.ErrorType.String()).
_TYPE_WORDS: Final[dict[str, str]] = {
    FIELD_VALUE_NOT_FOUND: "Not found",
    FIELD_VALUE_REQUIRED: "Required value",
    FIELD_VALUE_DUPLICATE: "Duplicate value",
    FIELD_VALUE_INVALID: "Invalid value",
    FIELD_VALUE_NOT_SUPPORTED: "Unsupported value",
    FIELD_VALUE_FORBIDDEN: "Forbidden",
    FIELD_VALUE_TOO_LONG: "Too long",
    FIELD_VALUE_TOO_MANY: "Too many",
    FIELD_VALUE_TYPE_INVALID: "Invalid value",
    INTERNAL_ERROR: "Internal error",
}

# These types never print the value (ErrorBody's first switch arms).
_VALUELESS_TYPES: Final = frozenset(
    {FIELD_VALUE_REQUIRED, FIELD_VALUE_FORBIDDEN, FIELD_VALUE_TOO_LONG, INTERNAL_ERROR}
)


class GoValue:
    """A bad value whose Go rendering is given verbatim (e.g. ``GoValue("0x0")`` for a uint64).

    Use it where upstream passes a Go type whose ``fmt`` output differs from the JSON value,
    such as the ``uint64`` resourceVersion of ``metadata.resourceVersion: Invalid value: 0x0``.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"GoValue({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


# Sentinel: the value is omitted from the message (apimachinery's omitValue).
OMIT_VALUE: Final = GoValue("")


@dataclass(frozen=True, slots=True)
class FieldError:
    """One invalid field: cause ``type``, ``field`` path, the ``bad_value`` and a ``detail``."""

    type: str
    field: str
    bad_value: object = ""
    detail: str = ""

    @property
    def body(self) -> str:
        """The message without the field path (``field.Error.ErrorBody()``)."""
        words = _TYPE_WORDS.get(self.type, f"<unknown error {go_quote(self.type)}>")
        if self.type in _VALUELESS_TYPES or self.bad_value is OMIT_VALUE:
            text = words
        else:
            text = f"{words}: {go_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    @property
    def message(self) -> str:
        """The full message, ``<field>: <body>`` (``field.Error.Error()``)."""
        return f"{self.field}: {self.body}"

    def cause(self) -> dict[str, str]:
        """The Status cause kube-apiserver sends for this error (``details.causes[]``)."""
        return {"reason": self.type, "message": self.body, "field": self.field}

    def __str__(self) -> str:
        return self.message


# --- constructors (mirroring apimachinery's field.Required, field.Invalid, ...) ---


def required(field: str, detail: str = "") -> FieldError:
    """``<field>: Required value[: detail]``."""
    return FieldError(FIELD_VALUE_REQUIRED, field, "", detail)


def invalid(field: str, value: object, detail: str) -> FieldError:
    """``<field>: Invalid value: <value>: <detail>``."""
    return FieldError(FIELD_VALUE_INVALID, field, value, detail)


def type_invalid(field: str, value: object, detail: str) -> FieldError:
    """Like :func:`invalid` but with cause ``FieldValueTypeInvalid`` (schema type mismatch)."""
    return FieldError(FIELD_VALUE_TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: object, valid: Iterable[object]) -> FieldError:
    """``<field>: Unsupported value: <value>: supported values: "a", "b"``."""
    quoted = [go_quote(v if isinstance(v, str) else go_value(v)) for v in valid]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(FIELD_VALUE_NOT_SUPPORTED, field, value, detail)


def duplicate(field: str, value: object) -> FieldError:
    """``<field>: Duplicate value: <value>``."""
    return FieldError(FIELD_VALUE_DUPLICATE, field, value, "")


def forbidden(field: str, detail: str) -> FieldError:
    """``<field>: Forbidden: <detail>``."""
    return FieldError(FIELD_VALUE_FORBIDDEN, field, "", detail)


def too_long(field: str, max_length: int) -> FieldError:
    """``<field>: Too long: may not be more than <n> bytes`` (the value is never printed)."""
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else "value is too long"
    return FieldError(FIELD_VALUE_TOO_LONG, field, "<value omitted>", detail)


def too_many(field: str, actual: int, max_quantity: int) -> FieldError:
    """``<field>: Too many: <actual>: must have at most <n> items``."""
    detail = (
        f"must have at most {max_quantity} items" if max_quantity >= 0 else "has too many items"
    )
    return FieldError(FIELD_VALUE_TOO_MANY, field, actual if actual >= 0 else OMIT_VALUE, detail)


def not_found(field: str, value: object) -> FieldError:
    """``<field>: Not found: <value>``."""
    return FieldError(FIELD_VALUE_NOT_FOUND, field, value, "")


def internal_error(field: str, detail: str) -> FieldError:
    """``<field>: Internal error: <detail>``."""
    return FieldError(INTERNAL_ERROR, field, None, detail)


# --- aggregation and the 422 Status ---


def aggregate_message(errors: Sequence[FieldError]) -> str:
    """Join messages like ``ErrorList.ToAggregate().Error()``: one bare, several in ``[a, b]``."""
    seen: list[str] = []
    for error in errors:
        text = error.message
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def qualified_kind(kind: str, group: str) -> str:
    """``Kind.group`` or just ``Kind`` for the core group (``schema.GroupKind.String()``)."""
    return f"{kind}.{group}" if group else kind


def invalid_status(kind_with_group: str, name: str, errors: Sequence[FieldError]) -> dict[str, Any]:
    """The 422 ``Invalid`` Status for ``errors`` (``apierrors.NewInvalid``).

    ``kind_with_group`` is ``Widget.example.com`` (or ``ConfigMap`` for the core group); the
    kind and group are split at the first dot.
    """
    kind, _, group = kind_with_group.partition(".")
    message = f"{kind_with_group} {go_quote(name)} is invalid"
    if errors:
        message += f": {aggregate_message(errors)}"
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [error.cause() for error in errors],
        },
        "code": 422,
    }


# --- Go fmt rendering of JSON values ---

_GO_ESCAPES: Final[dict[str, str]] = {
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
    """Quote ``text`` like Go's ``strconv.Quote`` / ``%q``."""
    out = ['"']
    for char in text:
        escaped = _GO_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable() or char == " ":
            out.append(char)
        else:
            code = ord(char)
            if code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


# fmt's %v on a float64 is strconv's shortest 'g', which switches to %e when the decimal exponent
# is below -4 or at least 6 (strconv/ftoa.go: "if precision was the shortest possible, use
# precision 6 for this decision"), so 1e6 prints as 1e+06.
_GO_SHORTEST_EXP_LIMIT: Final = 6


def go_float(value: float) -> str:
    """Format a float64 like Go's ``%v``: shortest digits, ``%e`` for exponents < -4 or >= 6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    digits = repr(value)  # Python's repr is the shortest round-tripping form, like Go's.
    mantissa, _, exp_text = digits.partition("e")
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    int_part, _, frac_part = mantissa.partition(".")
    exponent = int(exp_text) if exp_text else 0
    # Normalise to digits d1d2d3... with decimal exponent of the first digit.
    all_digits = (int_part + frac_part).lstrip("0")
    if int_part.strip("0"):
        first_exp = len(int_part.lstrip("0")) - 1 + exponent
    else:
        first_exp = -(len(frac_part) - len(frac_part.lstrip("0"))) - 1 + exponent
    all_digits = all_digits.rstrip("0") or "0"
    if first_exp < -4 or first_exp >= _GO_SHORTEST_EXP_LIMIT:
        head, tail = all_digits[0], all_digits[1:]
        exp_sign = "-" if first_exp < 0 else "+"
        return f"{sign}{head}{'.' + tail if tail else ''}e{exp_sign}{abs(first_exp):02d}"
    if first_exp >= len(all_digits) - 1:
        return sign + all_digits + "0" * (first_exp - len(all_digits) + 1)
    if first_exp >= 0:
        return f"{sign}{all_digits[: first_exp + 1]}.{all_digits[first_exp + 1 :]}"
    return f"{sign}0.{'0' * (-first_exp - 1)}{all_digits}"


def go_value(value: object) -> str:
    """Render a decoded JSON value as ``field.Error`` prints a bad value (``%v``/``%q``/``%#v``)."""
    if value is None:
        return '"null"'  # upstream replaces nil with the string "null", then %q-quotes it
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, str):
        return go_quote(value)
    return _go_sharp_v(value, top=True)


def _go_sharp_v(value: object, *, top: bool = False) -> str:
    """Go ``%#v`` of a value held in an ``interface{}`` (maps sorted by key, like fmt)."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        items = ", ".join(
            f"{go_quote(str(k))}:{_go_sharp_v(v)}" for k, v in sorted(value.items(), key=_key)
        )
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list | tuple):
        return "[]interface {}{" + ", ".join(_go_sharp_v(v) for v in value) + "}"
    return go_quote(str(value))


def _key(item: tuple[object, object]) -> str:
    return str(item[0])


def go_json(value: object) -> str:
    """Encode a decoded JSON value like Go's ``json.Marshal``: compact, sorted keys, ``1`` not
    ``1.0``, and ``<``, ``>``, ``&`` escaped as ``\\u003c`` ... (Go's HTML-safe default)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=_key)
        return "{" + ",".join(f"{_go_json_string(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _go_json_string(str(value))


def _go_json_float(value: float) -> str:
    # encoding/json: 'f' formatting for 1e-6 <= |v| < 1e21, else 'e' with a trimmed exponent.
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        power = int(exponent)
        # Go pads to two digits, then trims "e-07" back to "e-7" (but keeps "e+21").
        return f"{mantissa}e-{-power}" if power < 0 else f"{mantissa}e+{power:02d}"
    return format(Decimal(repr(value)), "f")


def _go_json_string(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or char in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)
