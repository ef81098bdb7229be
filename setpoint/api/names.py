"""Validators for names, label keys and label values, worded exactly as apimachinery's.

Each validator returns a list of problems (empty when the value is valid), because upstream
reports every problem at once, e.g. both "too long" and "bad characters". The API server puts
these texts after ``Invalid value: "<value>": `` in its 422 responses; the runtime uses the same
functions to reject bad input before it is sent.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = [
    "DNS1035_LABEL_MAX_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "EMPTY_MESSAGE",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "is_dns1123_subdomain",
    "max_length_message",
    "regex_message",
    "validate_dns1035_label",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_label_value",
    "validate_qualified_name",
]

DNS1123_LABEL_MAX_LENGTH: Final = 63  # RFC 1123 label (one DNS component)
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253  # RFC 1123 full DNS name
DNS1035_LABEL_MAX_LENGTH: Final = 63  # RFC 1035 label
QUALIFIED_NAME_MAX_LENGTH: Final = 63  # the name part of a label/annotation key
LABEL_VALUE_MAX_LENGTH: Final = 63  # label values share the DNS label limit

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)


@functools.cache
def _full_match(pattern: str) -> re.Pattern[str]:
    """``pattern`` anchored at both ends, compiled on first use (most programs check one or two
    kinds of name, and importing this module should not compile them all).

    re.ASCII: Go's regexp classes are ASCII; \\Z rather than $ so a trailing newline never
    matches."""
    return re.compile(f"(?:{pattern})\\Z", re.ASCII)


def max_length_message(length: int) -> str:
    """Upstream ``MaxLenError``: ``must be no more than N characters``."""
    return f"must be no more than {length} characters"


def regex_message(message: str, regex: str, *examples: str) -> str:
    """Upstream ``RegexError``: the rule, examples, and the regex used."""
    if not examples:
        return f"{message} (regex used for validation is '{regex}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{regex}')"


EMPTY_MESSAGE: Final = "must be non-empty"


def _length(value: str) -> int:
    # Upstream limits count bytes of the UTF-8 encoding, not characters.
    return len(value.encode("utf-8", "surrogatepass"))


def validate_dns1123_label(value: str) -> list[str]:
    """Problems with ``value`` as an RFC 1123 label (e.g. namespace names); empty if valid."""
    errors: list[str] = []
    if _length(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(max_length_message(DNS1123_LABEL_MAX_LENGTH))
    if not _full_match(_DNS1123_LABEL_FMT).match(value):
        errors.append(regex_message(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def validate_dns1123_subdomain(value: str) -> list[str]:
    """Problems with ``value`` as an RFC 1123 subdomain (most object names); empty if valid."""
    errors: list[str] = []
    if _length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_length_message(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _full_match(_DNS1123_SUBDOMAIN_FMT).match(value):
        errors.append(regex_message(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def is_dns1123_subdomain(value: str) -> bool:
    """Whether :func:`validate_dns1123_subdomain` finds no problem, without building messages."""
    # The pattern matches ASCII only: a match's length in characters is its length in bytes.
    return (
        len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH
        and _full_match(_DNS1123_SUBDOMAIN_FMT).match(value) is not None
    )


def validate_dns1035_label(value: str) -> list[str]:
    """Problems with ``value`` as an RFC 1035 label (e.g. Service names); empty if valid."""
    errors: list[str] = []
    if _length(value) > DNS1035_LABEL_MAX_LENGTH:
        errors.append(max_length_message(DNS1035_LABEL_MAX_LENGTH))
    if not _full_match(_DNS1035_LABEL_FMT).match(value):
        errors.append(regex_message(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errors


def validate_qualified_name(value: str) -> list[str]:
    """Problems with ``value`` as a qualified name (label and annotation keys, finalizers).

    A qualified name is ``[prefix/]name``: the optional prefix a DNS-1123 subdomain, the name at
    most 63 characters of alphanumerics, ``-``, ``_`` and ``.``, starting and ending alphanumeric.
    """
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part " + EMPTY_MESSAGE)
        else:
            errors.extend("prefix part " + msg for msg in validate_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_message(
                _QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part " + EMPTY_MESSAGE)
    elif _length(name) > QUALIFIED_NAME_MAX_LENGTH:
        errors.append("name part " + max_length_message(QUALIFIED_NAME_MAX_LENGTH))
    if not _full_match(_QUALIFIED_NAME_FMT).match(name):
        errors.append(
            "name part "
            + regex_message(
                _QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
            )
        )
    return errors


def validate_label_value(value: str) -> list[str]:
    """Problems with ``value`` as a label value (may be empty; at most 63 characters)."""
    errors: list[str] = []
    if _length(value) > LABEL_VALUE_MAX_LENGTH:
        errors.append(max_length_message(LABEL_VALUE_MAX_LENGTH))
    if not _full_match(_LABEL_VALUE_FMT).match(value):
        errors.append(
            regex_message(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errors
