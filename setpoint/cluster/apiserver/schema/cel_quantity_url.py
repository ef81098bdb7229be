"""Kubernetes' CEL ``quantity`` and ``url`` libraries, for ``x-kubernetes-validations``.

The values are CEL maps holding one private key (``__quantity__``: the exact decimal value,
normalised, so ``quantity("1Gi") == quantity("1024Mi")`` as upstream; ``__url__``: the text),
with the upstream member functions declared on them: ``isInteger``, ``asInteger``,
``asApproximateFloat``, ``sign``, ``add``, ``sub``, ``isLessThan``, ``isGreaterThan``,
``compareTo`` for quantities, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
``getEscapedPath``, ``getQuery`` for URLs, and ``isQuantity``/``isURL`` to test a string.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

QUANTITY_KEY: Final = "__quantity__"
URL_KEY: Final = "__url__"
_INT64_MAX: Final = 2**63 - 1
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)")
_SUFFIXES: Final = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")


def parse_quantity(text: str) -> Decimal | None:
    """The exact value of a Kubernetes quantity string, or None when it is not one."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    if suffix in _SUFFIXES:
        return value * _SUFFIXES[suffix]
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None or len(exponent.group(1).lstrip("+-")) > 4:
        return None
    return value.scaleb(int(exponent.group(1)))


def _quantity(value: Decimal) -> dict[str, str]:
    return {QUANTITY_KEY: str(value.normalize())}


def _value(quantity: Any) -> Decimal:
    if isinstance(quantity, dict) and QUANTITY_KEY in quantity:
        return Decimal(quantity[QUANTITY_KEY])
    if isinstance(quantity, int) and not isinstance(quantity, bool):
        return Decimal(quantity)
    raise ValueError("no such overload")


def _make_quantity(text: str) -> dict[str, str]:
    value = parse_quantity(text)
    if value is None:
        raise ValueError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    return _quantity(value)


def _as_integer(quantity: Any) -> int:
    value = _value(quantity)
    if value != value.to_integral_value() or abs(value) > _INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return int(value)


def _compare(a: Any, b: Any) -> int:
    left, right = _value(a), _value(b)
    return (left > right) - (left < right)


def _url(text: str) -> dict[str, str]:
    if not _is_url(text):
        raise ValueError(f"URL parse error during conversion from string: {text}")
    return {URL_KEY: text}


def _is_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    # Go's url.ParseRequestURI: absolute URLs or absolute paths.
    return bool(parts.scheme) or text.startswith("/")


def _part(url: Any) -> Any:
    if not (isinstance(url, dict) and URL_KEY in url):
        raise ValueError("no such overload")
    return urlsplit(url[URL_KEY])


def _host(url: Any) -> str:
    return str(_part(url).netloc.rpartition("@")[2])


def _hostname(url: Any) -> str:
    return str(_part(url).hostname or "")


def _port(url: Any) -> str:
    host = _host(url)
    if host.startswith("["):
        _, _, rest = host.partition("]")
        return rest[1:] if rest.startswith(":") else ""
    return host.rpartition(":")[2] if ":" in host else ""


def _query(url: Any) -> dict[str, list[str]]:
    return {k: list(v) for k, v in parse_qs(_part(url).query, keep_blank_values=True).items()}


def _decl(name: str, overload: str, params: list[Any], result: Any, impl: Any, member: bool) -> Any:
    from cel_expr_python import cel  # type: ignore[import-untyped]

    return cel.FunctionDecl(
        name,
        [
            cel.Overload(
                overload, return_type=result, parameters=params, is_member=member, impl=impl
            )
        ],
    )


def quantity_and_url_functions() -> list[Any]:
    """The declarations to add to a CEL environment."""
    from cel_expr_python import cel

    # Quantities and URLs are maps at run time: overloads dispatch on the value's kind.
    dyn, string, boolean = (
        cel.Type.Map(cel.Type.STRING, cel.Type.STRING),
        cel.Type.STRING,
        cel.Type.BOOL,
    )
    integer, double = cel.Type.INT, cel.Type.DOUBLE
    return [
        _decl("quantity", "k8s_quantity", [string], dyn, _make_quantity, False),
        _decl(
            "isQuantity",
            "k8s_is_quantity",
            [string],
            boolean,
            lambda t: parse_quantity(t) is not None,
            False,
        ),
        _decl(
            "isInteger",
            "k8s_quantity_is_integer",
            [dyn],
            boolean,
            lambda q: _value(q) == _value(q).to_integral_value(),
            True,
        ),
        _decl("asInteger", "k8s_quantity_as_integer", [dyn], integer, _as_integer, True),
        _decl(
            "asApproximateFloat",
            "k8s_quantity_as_float",
            [dyn],
            double,
            lambda q: float(_value(q)),
            True,
        ),
        _decl("sign", "k8s_quantity_sign", [dyn], integer, lambda q: _compare(q, 0), True),
        _decl(
            "add",
            "k8s_quantity_add",
            [dyn, dyn],
            dyn,
            lambda a, b: _quantity(_value(a) + _value(b)),
            True,
        ),
        _decl(
            "sub",
            "k8s_quantity_sub",
            [dyn, dyn],
            dyn,
            lambda a, b: _quantity(_value(a) - _value(b)),
            True,
        ),
        _decl(
            "isLessThan",
            "k8s_quantity_less",
            [dyn, dyn],
            boolean,
            lambda a, b: _compare(a, b) < 0,
            True,
        ),
        _decl(
            "isGreaterThan",
            "k8s_quantity_greater",
            [dyn, dyn],
            boolean,
            lambda a, b: _compare(a, b) > 0,
            True,
        ),
        _decl("compareTo", "k8s_quantity_compare", [dyn, dyn], integer, _compare, True),
        _decl("url", "k8s_url", [string], dyn, _url, False),
        _decl("isURL", "k8s_is_url", [string], boolean, _is_url, False),
        _decl("getScheme", "k8s_url_scheme", [dyn], string, lambda u: str(_part(u).scheme), True),
        _decl("getHost", "k8s_url_host", [dyn], string, _host, True),
        _decl("getHostname", "k8s_url_hostname", [dyn], string, _hostname, True),
        _decl("getPort", "k8s_url_port", [dyn], string, _port, True),
        _decl("getEscapedPath", "k8s_url_path", [dyn], string, lambda u: str(_part(u).path), True),
        _decl(
            "getQuery",
            "k8s_url_query",
            [dyn],
            cel.Type.Map(string, cel.Type.List(string)),
            _query,
            True,
        ),
    ]
