"""Go's text rendering of values, for messages that must match kube-apiserver byte for byte.

Upstream error messages are built with Go's ``fmt`` and ``encoding/json``: names are
``%q``-quoted (:func:`go_quote`), floats print in ``%v`` style (``1e+06``, :func:`go_float`), bad
values print as ``%v``/``%q``/``%#v`` of the decoded JSON value (:func:`go_value`), and embedded
JSON is compact with sorted keys and HTML-safe escapes (:func:`go_json`). Values whose Go type
differs from their JSON form (a ``uint64``, a ``[]string``) are passed as :class:`GoValue`
with their rendering given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "GoValue",
    "go_float",
    "go_json",
    "go_label_selector",
    "go_quote",
    "go_string_slice",
    "go_value",
]


class GoValue:
    """A value whose Go rendering is given verbatim (e.g. ``GoValue("0x0")`` for a uint64).

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


def go_string_slice(values: Iterable[object] | None) -> GoValue:
    """A Go ``[]string`` as ``%#v`` prints it: ``[]string{"a", "b"}``; None is ``[]string(nil)``."""
    if values is None:
        return GoValue("[]string(nil)")
    return GoValue("[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}")


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
    """Quote ``text`` like Go's ``strconv.Quote`` / ``%q``: printable Unicode kept as is."""
    out = ['"']
    for char in text:
        escaped = _GO_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable():
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
    # Normalise to digits d1d2d3... and the decimal exponent of the first digit.
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
    if isinstance(value, str):
        return go_quote(value)
    return _go_sharp_v(value)


def _go_sharp_v(value: object) -> str:
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
        mantissa, _, exponent = repr(value).partition("e")
        power = int(exponent)
        # Go pads to two digits, then trims "e-07" back to "e-7" (but keeps "e+21").
        return f"{mantissa}e-{-power}" if power < 0 else f"{mantissa}e+{power:02d}"
    return format(Decimal(repr(value)), "f")


_GO_JSON_ESCAPES: Final[dict[str, str]] = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _go_json_string(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        escaped = _GO_JSON_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif code < 0x20 or char in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def go_label_selector(selector: Mapping[str, Any] | None) -> str:
    """A ``*metav1.LabelSelector`` as its generated ``String()`` (and so Go's ``%v``/``%+v``)
    prints it: ``&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]...}``;
    ``nil`` for None."""
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{key}: {labels[key]}," for key in sorted(labels))
    expressions = "".join(
        "LabelSelectorRequirement{"
        f"Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
        if isinstance(e, Mapping)
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
