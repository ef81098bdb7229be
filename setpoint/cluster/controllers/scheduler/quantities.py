"""Resource quantities (``resource.Quantity``) as numbers: CPU in millicores, the rest in units."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: Final = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY: Final = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)$")


def quantity(value: object) -> Decimal:
    """The value of a quantity (``"100m"`` → 0.1, ``"1Gi"`` → 1073741824); 0 when malformed."""
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(str(value).strip())
    if match is None:
        return Decimal(0)
    number, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation:
        return Decimal(0)
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix and suffix[0] in "eE":
        return base * (Decimal(10) ** int(suffix[1:]))
    return base * _DECIMAL[suffix]


def milli(value: object) -> int:
    """A quantity in thousandths, rounded up (CPU in millicores)."""
    return int((quantity(value) * 1000).to_integral_value(rounding="ROUND_CEILING"))


def units(value: object) -> int:
    """A quantity in whole units, rounded up (memory in bytes, pods)."""
    return int(quantity(value).to_integral_value(rounding="ROUND_CEILING"))
