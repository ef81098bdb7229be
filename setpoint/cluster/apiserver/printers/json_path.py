"""The JSONPath subset of CRD printer columns (client-go ``util/jsonpath``, missing keys allowed).

A column's ``jsonPath`` is a chain of steps: ``.field``, ``['field']``, ``[2]``, ``[-1]``,
``[*]``, ``.*`` and filters ``[?(@.type=="Ready")]`` (``==``, ``!=``, ``<``, ``>``, ``<=``,
``>=``, or a bare ``@.field`` for existence). :func:`find` returns every value the path reaches
in document order; a missing key yields nothing, as with ``AllowMissingKeys(true)``.
:func:`print_value` renders a value as jsonpath's printer does (maps and lists as JSON).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from setpoint.api.go_format import go_float, go_json

_FILTER: Final = re.compile(
    r"""^@((?:\.[^.\s=!<>]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*$""", re.DOTALL
)


class JSONPathError(ValueError):
    """A path outside the supported subset."""


@dataclass(frozen=True, slots=True)
class _Step:
    kind: str  # "field", "index", "all", "filter"
    name: str = ""
    index: int = 0
    test: Callable[[Any], bool] | None = None


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise JSONPathError(f"unrecognized filter value {text!r}") from None


def _compare(left: Any, operator: str, right: Any) -> bool:
    if operator == "==":
        return bool(left == right)
    if operator == "!=":
        return bool(left != right)
    numbers = (int, float)
    if not (isinstance(left, numbers) and isinstance(right, numbers)):
        return False
    if operator == "<":
        return bool(left < right)
    if operator == ">":
        return bool(left > right)
    if operator == "<=":
        return bool(left <= right)
    return bool(left >= right)


def _filter(expression: str) -> Callable[[Any], bool]:
    match = _FILTER.match(expression)
    if match is None:
        raise JSONPathError(f"unrecognized filter {expression!r}")
    fields = [part for part in match[1].split(".") if part]
    operator = match[2]
    expected = _literal(match[3]) if operator else None

    def test(item: Any) -> bool:
        value = item
        for name in fields:
            if not isinstance(value, dict) or name not in value:
                return False
            value = value[name]
        return True if operator is None else _compare(value, operator, expected)

    return test


def _bracket(inner: str) -> _Step:
    inner = inner.strip()
    if inner == "*":
        return _Step("all")
    if inner.startswith("?(") and inner.endswith(")"):
        return _Step("filter", test=_filter(inner[2:-1]))
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _Step("field", name=inner[1:-1])
    try:
        return _Step("index", index=int(inner))
    except ValueError:
        raise JSONPathError(f"unrecognized array index {inner!r}") from None


@lru_cache(maxsize=512)
def parse(path: str) -> tuple[_Step, ...]:
    """The steps of ``path`` (with or without the surrounding ``{}``)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[_Step] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == ".":
            position += 1
            name_chars: list[str] = []
            while position < len(text) and text[position] not in ".[":
                if text[position] == "\\" and position + 1 < len(text):
                    position += 1  # an escaped character, such as a dot in a label key
                name_chars.append(text[position])
                position += 1
            name = "".join(name_chars)
            if name == "*":
                steps.append(_Step("all"))
            elif name:
                steps.append(_Step("field", name=name))
        elif char == "[":
            depth = 0
            end = position
            quote = ""
            while end < len(text):
                current = text[end]
                if quote:
                    if current == quote:
                        quote = ""
                elif current in "'\"":
                    quote = current
                elif current == "[":
                    depth += 1
                elif current == "]":
                    depth -= 1
                    if depth == 0:
                        break
                end += 1
            if end >= len(text):
                raise JSONPathError(f"unterminated array notation in {path!r}")
            steps.append(_bracket(text[position + 1 : end]))
            position = end + 1
        else:
            raise JSONPathError(f"unrecognized character {char!r} in {path!r}")
    return tuple(steps)


def find(document: Any, path: str) -> list[Any]:
    """Every value ``path`` reaches in ``document`` (missing keys reach nothing)."""
    values = [document]
    for step in parse(path):
        found: list[Any] = []
        for value in values:
            if step.kind == "field":
                if isinstance(value, dict) and step.name in value:
                    found.append(value[step.name])
            elif step.kind == "index":
                if isinstance(value, list) and -len(value) <= step.index < len(value):
                    found.append(value[step.index])
            elif step.kind == "all":
                if isinstance(value, dict):
                    found.extend(value.values())
                elif isinstance(value, list):
                    found.extend(value)
            elif isinstance(value, list) and step.test is not None:
                found.extend(item for item in value if step.test(item))
        values = found
    return values


def print_value(value: Any) -> str:
    """A value as jsonpath prints it: strings bare, maps and lists as JSON, numbers as Go."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return go_json(value)
