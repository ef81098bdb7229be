"""String formats a CRD schema may check (``format: date-time`` ...), as kube-apiserver checks them.

kube-apiserver keeps only the formats in apiextensions' ``supportedFormats`` list and silently
drops the rest (``int32``, ``int64``, ``float``, ``double``, ``quantity``... are accepted in a
schema but never checked). Names are compared without dashes, so ``date-time`` and ``datetime``
are the same format. Each checker mirrors the Go function upstream uses (kube-openapi ``strfmt``,
``govalidator``, ``net``) closely enough for everyday values.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from typing import Final

FormatChecker = Callable[[str], bool]


def normalize_format_name(name: str) -> str:
    """The registry key of a format: its name without dashes (go-openapi's normalizer)."""
    return name.replace("-", "")


# --- dates and times ---

_DATE_RE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME_RE: Final = re.compile(
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
)
_DAYS_IN_MONTH: Final = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_date(text: str) -> bool:
    """RFC 3339 full-date ``2006-01-02`` (Go ``time.Parse`` with that layout)."""
    match = _DATE_RE.match(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    limit = 29 if month == 2 and leap else (28 if month == 2 else _DAYS_IN_MONTH[month - 1])
    return day <= limit


def is_date_time(text: str) -> bool:
    """RFC 3339 date-time, as kube-openapi's ``IsDateTime`` checks it (case-insensitive ``T``)."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    match = _TIME_RE.match(parts[1])
    if match is None:
        return False
    return match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


_GO_DURATION_RE: Final = re.compile(r"^[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$")
_SCALA_DURATION_RE: Final = re.compile(r"((\d+)\s*([A-Za-zµ]+))")
_DURATION_UNITS: Final = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)


def is_duration(text: str) -> bool:
    """Go ``time.ParseDuration`` syntax (``1h30m``), or kube-openapi's Scala-like ``3 days``."""
    if text == "0" or _GO_DURATION_RE.match(text):
        return True
    for match in _SCALA_DURATION_RE.finditer(text):
        unit = match.group(3).strip().lower()
        for variants in _DURATION_UNITS:
            last = len(variants) - 1
            for index, variant in enumerate(variants):
                if (index == last and unit.startswith(variant)) or variant.lower() == unit:
                    return True
    return False


# --- network ---


def _parse_ip_sloppy(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``ParseIPSloppy``: like ``net.ParseIP`` but IPv4 parts may have leading zeros."""
    if ":" not in text:
        parts = text.split(".")
        if len(parts) != 4 or not all(p.isdigit() and p.isascii() and len(p) <= 3 for p in parts):
            return None
        octets = [int(p) for p in parts]
        if any(o > 255 for o in octets):
            return None
        return ipaddress.IPv4Address(".".join(str(o) for o in octets))
    if "%" in text:  # zones are not IPs to Go's ParseIP
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def is_ipv4(text: str) -> bool:
    """An IP with a dot in it (kube-openapi accepts an IPv4-mapped IPv6 like ``::ffff:1.2.3.4``)."""
    return _parse_ip_sloppy(text) is not None and "." in text


def is_ipv6(text: str) -> bool:
    """An IP with a colon in it (govalidator ``IsIPv6``)."""
    return ":" in text and _parse_ip_sloppy(text) is not None


def is_cidr(text: str) -> bool:
    """``address/prefix`` (Go ``ParseCIDRSloppy``)."""
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isdigit() or not prefix.isascii() or len(prefix) > 3:
        return False
    ip = _parse_ip_sloppy(address)
    if ip is None:
        return False
    limit = 32 if ":" not in address else 128
    return int(prefix) <= limit


_MAC_RES: Final = (
    re.compile(r"^[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2})(?:\1[0-9a-fA-F]{2}){4}$"),
    re.compile(r"^[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2})(?:\1[0-9a-fA-F]{2}){6}$"),
    re.compile(r"^[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2})(?:\1[0-9a-fA-F]{2}){18}$"),
    re.compile(r"^[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}$"),
    re.compile(r"^[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}$"),
    re.compile(r"^[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9}$"),
)


def is_mac(text: str) -> bool:
    """EUI-48, EUI-64 or 20-octet IPoIB address (Go ``net.ParseMAC``)."""
    return any(pattern.match(text) for pattern in _MAC_RES)


# Letters of any script count like ASCII letters (\p{L} upstream); symbols (\p{S}) are rare in
# host names and Python's re has no class for them, so they are not accepted here.
_HOST_CHAR: Final = r"[^\W_]"
_HOSTNAME_RE: Final = re.compile(
    rf"^({_HOST_CHAR}((-?{_HOST_CHAR}{{0,62}})?)|"
    rf"({_HOST_CHAR}(((?:{_HOST_CHAR}|-){{0,61}}{_HOST_CHAR})?)(\.)){{1,}}([^\W\d_]){{2,63}})$"
)
_MAX_HOSTNAME_LENGTH: Final = 255  # RFC 1034 limit checked by kube-openapi's IsHostname
_MAX_HOST_LABEL_LENGTH: Final = 63


def is_hostname(text: str) -> bool:
    """RFC 1034 host name (kube-openapi ``IsHostname``)."""
    if not _HOSTNAME_RE.match(text) or len(text.encode()) > _MAX_HOSTNAME_LENGTH:
        return False
    return all(len(part.encode()) <= _MAX_HOST_LABEL_LENGTH for part in text.split("."))


_EMAIL_ADDRESS_RE: Final = re.compile(
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$"
)
_EMAIL_NAMED_RE: Final = re.compile(r"^[^<>]*<([^<>]+)>$")


def is_email(text: str) -> bool:
    """An RFC 5322 address, optionally with a display name (Go ``net/mail.ParseAddress``)."""
    text = text.strip()
    named = _EMAIL_NAMED_RE.match(text)
    address = named.group(1) if named else text
    return bool(_EMAIL_ADDRESS_RE.match(address))


_URI_SCHEME_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def is_request_uri(text: str) -> bool:
    """An absolute URI or an absolute path (Go ``url.ParseRequestURI``)."""
    if not text or any(ord(char) < 0x20 or char in " \x7f" for char in text):
        return False
    return text.startswith("/") or bool(_URI_SCHEME_RE.match(text))


# --- identifiers and codes ---

_UUID_RES: Final = {
    "uuid": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.IGNORECASE
    ),
    "uuid3": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.IGNORECASE
    ),
    "uuid4": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
        re.IGNORECASE,
    ),
    "uuid5": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
        re.IGNORECASE,
    ),
}
_BSON_OBJECT_ID_RE: Final = re.compile(r"^[0-9a-fA-F]{24}$")
_BASE64_RE: Final = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
)
_SSN_RE: Final = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_HEX_COLOR_RE: Final = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_BYTE_VALUE: Final = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGB_COLOR_RE: Final = re.compile(rf"^rgb\({_BYTE_VALUE},{_BYTE_VALUE},{_BYTE_VALUE}\)$")
_CREDIT_CARD_RE: Final = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]"
    r"|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}"
    r"|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$"
)


def is_base64(text: str) -> bool:
    """Standard padded base64 (govalidator ``IsBase64``); line breaks are skipped, as Go's
    ``base64.StdEncoding`` decoder skips them (PEM-style wrapped values decode upstream)."""
    text = without_line_breaks(text)
    if not _BASE64_RE.match(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except binascii.Error:
        return False
    return True


def without_line_breaks(text: str) -> str:
    """``text`` without the ``\\r`` and ``\\n`` that Go's base64 decoder ignores."""
    if "\n" in text or "\r" in text:
        return text.replace("\r", "").replace("\n", "")
    return text


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def is_credit_card(text: str) -> bool:
    """A card number (separators ignored) that matches a known issuer and the Luhn check."""
    digits = re.sub(r"[^0-9]", "", text)
    return bool(_CREDIT_CARD_RE.match(digits)) and _luhn(digits)


def is_isbn10(text: str) -> bool:
    """ISBN-10 with its check digit; spaces and hyphens are ignored."""
    digits = re.sub(r"[\s-]", "", text)
    if not re.match(r"^(?:[0-9]{9}X|[0-9]{10})$", digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def is_isbn13(text: str) -> bool:
    """ISBN-13 with its check digit; spaces and hyphens are ignored."""
    digits = re.sub(r"[\s-]", "", text)
    if not re.match(r"^[0-9]{13}$", digits):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits[:12]))
    return (10 - total % 10) % 10 == int(digits[12])


def _always(_: str) -> bool:
    return True


# Keyed by normalized name (no dashes); the apiextensions ``supportedFormats`` list.
SUPPORTED_FORMATS: Final[dict[str, FormatChecker]] = {
    "bsonobjectid": lambda s: bool(_BSON_OBJECT_ID_RE.match(s)),
    "uri": is_request_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": lambda s: bool(_UUID_RES["uuid"].match(s)),
    "uuid3": lambda s: bool(_UUID_RES["uuid3"].match(s)),
    "uuid4": lambda s: bool(_UUID_RES["uuid4"].match(s)),
    "uuid5": lambda s: bool(_UUID_RES["uuid5"].match(s)),
    "isbn": lambda s: is_isbn10(s) or is_isbn13(s),
    "isbn10": is_isbn10,
    "isbn13": is_isbn13,
    "creditcard": is_credit_card,
    "ssn": lambda s: bool(_SSN_RE.match(s)),
    "hexcolor": lambda s: bool(_HEX_COLOR_RE.match(s)),
    "rgbcolor": lambda s: bool(_RGB_COLOR_RE.match(s)),
    "byte": is_base64,
    "password": _always,
    "date": is_date,
    "duration": is_duration,
    "datetime": is_date_time,
}


def format_checker(name: str) -> FormatChecker | None:
    """The checker kube-apiserver applies for ``format: name``, or None if it ignores it."""
    return SUPPORTED_FORMATS.get(normalize_format_name(name))
