"""Field-level validation errors, rendered exactly as kube-apiserver 1.32 renders them.

A :class:`FieldError` is the Python twin of apimachinery's ``field.Error``: a cause type
(``FieldValueInvalid`` ...), a field path (``spec.items[0].name``), the offending value and a
detail. ``str(error)`` / ``.message`` is ``field.Error.Error()``, e.g.
``metadata.name: Invalid value: "A": a lowercase RFC 1123 subdomain must ...``; ``.body`` is
``ErrorBody()``, what goes into ``Status.details.causes[].message``. The constructors mirror
``field.Required``, ``field.Invalid`` ... and :func:`aggregate_messages` joins several errors as
``ErrorList.ToAggregate()`` does. The 422 ``Status`` itself is :func:`setpoint.api.status.invalid`.

Bad values print the way Go's ``fmt`` prints the decoded JSON value (:func:`go_value`): strings
``%q``-quoted, numbers bare (floats in ``%v`` style, e.g. ``1e+06``), ``null`` as ``"null"``, maps
and lists in ``%#v`` form. Both the local cluster and client-side validators use this one module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from setpoint.api.go_format import GoValue, go_float, go_json, go_quote, go_string_slice, go_value

__all__ = [
    "FIELD_VALUE_DUPLICATE",
    "FIELD_VALUE_FORBIDDEN",
    "FIELD_VALUE_INVALID",
    "FIELD_VALUE_NOT_FOUND",
    "FIELD_VALUE_NOT_SUPPORTED",
    "FIELD_VALUE_REQUIRED",
    "FIELD_VALUE_TOO_LONG",
    "FIELD_VALUE_TOO_MANY",
    "FIELD_VALUE_TYPE_INVALID",
    "INTERNAL_ERROR",
    "OMIT_VALUE",
    "FieldError",
    "GoValue",
    "aggregate_messages",
    "duplicate",
    "forbidden",
    "go_float",
    "go_json",
    "go_quote",
    "go_string_slice",
    "go_value",
    "internal_error",
    "invalid",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]

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

# The value is left out of the message (apimachinery's omitValue).
OMIT_VALUE: Final = GoValue("")


@dataclass(frozen=True, slots=True)
class FieldError:
    """One invalid field: cause ``type``, ``field`` path, the ``bad_value`` and a ``detail``."""

    type: str
    field: str
    bad_value: object = OMIT_VALUE
    detail: str = ""

    @property
    def body(self) -> str:
        """The message without the field path (``field.Error.ErrorBody()``)."""
        words = _TYPE_WORDS.get(self.type, f"<unknown error {go_quote(self.type)}>")
        if self.type in _VALUELESS_TYPES or self.bad_value == OMIT_VALUE:
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
        """This error as a ``Status`` cause: ``{"reason", "message", "field"}``."""
        return {"reason": self.type, "message": self.body, "field": self.field}

    def __str__(self) -> str:
        return self.message


# --- constructors (mirroring apimachinery's field.Required, field.Invalid, ...) ---


def required(field: str, detail: str = "") -> FieldError:
    """``<field>: Required value[: <detail>]``."""
    return FieldError(FIELD_VALUE_REQUIRED, field, OMIT_VALUE, detail)


def invalid(field: str, value: object, detail: str) -> FieldError:
    """``<field>: Invalid value: <value>: <detail>``."""
    return FieldError(FIELD_VALUE_INVALID, field, value, detail)


def type_invalid(field: str, value: object, detail: str) -> FieldError:
    """Like :func:`invalid` but with cause ``FieldValueTypeInvalid`` (schema type mismatch)."""
    return FieldError(FIELD_VALUE_TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: object, supported: Iterable[object]) -> FieldError:
    """``<field>: Unsupported value: <value>: supported values: "a", "b"``."""
    quoted = [go_quote(v if isinstance(v, str) else go_value(v)) for v in supported]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(FIELD_VALUE_NOT_SUPPORTED, field, value, detail)


def duplicate(field: str, value: object) -> FieldError:
    """``<field>: Duplicate value: <value>``."""
    return FieldError(FIELD_VALUE_DUPLICATE, field, value)


def forbidden(field: str, detail: str) -> FieldError:
    """``<field>: Forbidden: <detail>``."""
    return FieldError(FIELD_VALUE_FORBIDDEN, field, OMIT_VALUE, detail)


def too_long(field: str, max_length: int) -> FieldError:
    """``<field>: Too long: may not be more than <n> bytes`` (the value is never printed)."""
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else "value is too long"
    return FieldError(FIELD_VALUE_TOO_LONG, field, OMIT_VALUE, detail)


def too_many(field: str, actual: int, max_quantity: int) -> FieldError:
    """``<field>: Too many: <actual>: must have at most <n> items`` (a negative actual: omitted)."""
    detail = (
        f"must have at most {max_quantity} items" if max_quantity >= 0 else "has too many items"
    )
    return FieldError(FIELD_VALUE_TOO_MANY, field, actual if actual >= 0 else OMIT_VALUE, detail)


def not_found(field: str, value: object) -> FieldError:
    """``<field>: Not found: <value>``."""
    return FieldError(FIELD_VALUE_NOT_FOUND, field, value)


def internal_error(field: str, detail: str) -> FieldError:
    """``<field>: Internal error: <detail>``."""
    return FieldError(INTERNAL_ERROR, field, OMIT_VALUE, detail)


def aggregate_messages(messages: Iterable[str | FieldError]) -> str:
    """Join messages like ``ErrorList.ToAggregate().Error()``.

    No message gives ``""``; one is returned as is; several (duplicates dropped, order kept)
    become ``"[a, b]"``.
    """
    seen: dict[str, None] = {}
    for message in messages:
        seen.setdefault(str(message), None)
    if len(seen) <= 1:
        return next(iter(seen), "")
    return "[" + ", ".join(seen) + "]"
