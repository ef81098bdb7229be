"""``resource.Quantity`` values that keep their format, added and printed as Go prints them.

Go's ``Quantity.String()`` writes the canonical form of a value in the format it was parsed
in: binary (``Ki`` ... ``Ei``) values as the largest binary unit that divides them, decimal
ones as an integer times a power of 1000 (``1k``, ``1500``, ``500m``), exponent ones as an
integer and an exponent that is a multiple of 3 (``1e3``), and a binary value below 1024 or not
a whole number as a decimal one. A sum keeps the format of its first term. kube-apiserver
stores every quantity field of a built-in object in this form (``1000m`` is stored as ``1``),
see :func:`canonical_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext
from typing import Final

from setpoint.cluster.apiserver.schema.cel_quantity_url import parse_quantity

DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
#: The schema format of the built-in kinds' ``resource.Quantity`` fields.
QUANTITY_FORMAT: Final = "quantity"

_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
_NANO: Final = Decimal("1e-9")
#: Enough digits that no quantity a client can write is rounded (the default keeps 28).
_EXACT: Final = Context(prec=80)
_EXPONENT_SUFFIX: Final = re.compile(r"[0-9.][eE][+-]?[0-9]+$")


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact value and the format Go keeps with it."""

    value: Decimal
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: object) -> Quantity | None:
        """A quantity from its string (or a JSON number); None when it is not one."""
        if isinstance(text, bool):
            return None
        if isinstance(text, int | float):
            return cls(Decimal(str(text)))
        if not isinstance(text, str):
            return None
        with localcontext(_EXACT):
            value = parse_quantity(text.strip())
        if value is None:
            return None
        return cls(value, _format_of(text.strip()))

    @classmethod
    def count(cls, number: int) -> Quantity:
        """An object count (``resource.NewQuantity(n, DecimalSI)``)."""
        return cls(Decimal(number))

    def __add__(self, other: Quantity) -> Quantity:
        with localcontext(_EXACT):
            return Quantity(self.value + other.value, self.format)

    def __str__(self) -> str:
        with localcontext(_EXACT):
            return canonical(self.value, self.format)


ZERO: Final = Quantity(Decimal(0))


def _format_of(text: str) -> str:
    if text.endswith("i"):
        return BINARY_SI
    return DECIMAL_EXPONENT if _EXPONENT_SUFFIX.search(text) else DECIMAL_SI


def canonical(value: Decimal, format: str = DECIMAL_SI) -> str:
    """``value`` as Go's ``Quantity.String()`` writes it in ``format``."""
    if value == 0:
        return "0"
    if format == BINARY_SI and abs(value) >= 1024 and value == value.to_integral_value():
        number = int(value)
        power = 0
        while power < len(_BINARY_SUFFIXES) - 1 and number % 1024 == 0:
            number //= 1024
            power += 1
        return f"{number}{_BINARY_SUFFIXES[power]}"
    # Below a nano Go rounds up to a whole nano.
    exponent = value.normalize().as_tuple().exponent
    if isinstance(exponent, int) and exponent < -9:
        value = value.quantize(_NANO, rounding="ROUND_CEILING")
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)))
    # Lower the exponent to a multiple of 3 (Go's AsCanonicalBytes).
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    while exponent > 18 and format != DECIMAL_EXPONENT:
        mantissa *= 1000
        exponent -= 3
    text = f"{'-' if sign else ''}{mantissa}"
    if format == DECIMAL_EXPONENT:
        return text + (f"e{exponent}" if exponent else "")
    return text + _DECIMAL_SUFFIXES[exponent]


def pretty(values: dict[str, Quantity]) -> str:
    """``a=1,b=500m``: sorted by name (upstream's ``prettyPrint`` of a ResourceList)."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


#: Canonical forms already worked out (clients repeat the same few quantities); bounded.
_CANONICAL_TEXTS: dict[str, str | None] = {}
_CANONICAL_TEXTS_SIZE: Final = 4096


def canonical_text(value: object) -> str | None:
    """The string kube-apiserver stores for a quantity field holding ``value`` (a string or a
    JSON number), or None when it is not a quantity."""
    if isinstance(value, str):
        known = _CANONICAL_TEXTS.get(value, "")
        if known != "":
            return known
    quantity = Quantity.parse(value)
    result = None if quantity is None else str(quantity)
    if isinstance(value, str) and len(_CANONICAL_TEXTS) < _CANONICAL_TEXTS_SIZE:
        _CANONICAL_TEXTS[value] = result
    return result
