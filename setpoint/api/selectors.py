"""Label and field selectors: parse, match, print, exactly as Kubernetes does.

A **label selector** is a comma-separated AND of requirements on an object's labels::

    app=web, tier!=db, env in (prod,staging), release notin (canary), team, !legacy, replicas>2

It also comes as a structured ``LabelSelector`` (``matchLabels`` + ``matchExpressions``) inside
objects such as Deployments; :meth:`LabelSelector.from_dict` reads that form. Keys must be
qualified names and values valid label values; errors are worded like apimachinery's parser
(``unable to parse requirement: ...``, ``found 'x', expected: ...``).

A **field selector** is a comma-separated AND of ``field=value``, ``field==value`` or
``field!=value``; ``\\,``, ``\\=`` and ``\\\\`` escape those characters inside values. A field
that an object does not have reads as the empty string.

Both selectors are immutable values: ``str(selector)`` is a canonical form that parses back to an
equal selector, so selectors can be used as cache keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from setpoint.api.field_errors import FieldError, aggregate_messages, go_quote
from setpoint.api.names import validate_label_value, validate_qualified_name

__all__ = [
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "escape_field_value",
    "unescape_field_value",
]


class SelectorError(ValueError):
    """A label or field selector that cannot be parsed or is invalid; the message says where."""


# Operators as apimachinery's selection package spells them (they appear in error messages).
IN: Final = "in"
NOT_IN: Final = "notin"
EQUALS: Final = "="
DOUBLE_EQUALS: Final = "=="
NOT_EQUALS: Final = "!="
EXISTS: Final = "exists"
DOES_NOT_EXIST: Final = "!"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"

_BINARY_OPERATORS: Final = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_UNARY_OPERATORS: Final = (EXISTS, DOES_NOT_EXIST)
_ALL_OPERATORS: Final = _BINARY_OPERATORS + _UNARY_OPERATORS

# matchExpressions operators (metav1.LabelSelectorOperator) and their selector equivalents.
_EXPRESSION_OPERATORS: Final = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_GO_INT_RE: Final = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)


def _parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: optional sign, decimal digits, int64 range."""
    if not _GO_INT_RE.match(text):
        return None
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        return None
    return value


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a label selector: ``key``, an operator and a sorted set of values.

    ``operator`` is one of ``in``, ``notin``, ``=``, ``!=``, ``exists``, ``!`` (does not exist),
    ``gt``, ``lt``. ``==`` is read as ``=`` (they mean the same). Build with :meth:`create`,
    which validates; the constructor trusts its input.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, key: str, operator: str, values: Iterable[str] = (), *, path: str = ""
    ) -> Requirement:
        """Validate and build a requirement; raises :class:`SelectorError` listing every problem.

        ``path`` prefixes the field names in messages (e.g. ``spec.selector``).
        """
        values_list = sorted(set(values))
        errors = _requirement_errors(key, operator, values_list, path)
        if errors:
            raise SelectorError(aggregate_messages(errors))
        if operator == DOUBLE_EQUALS:
            operator = EQUALS
        return cls(key, operator, tuple(values_list))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(self.values)
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({joined})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{joined}"


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _requirement_errors(
    key: str, operator: str, values: Sequence[str], path: str
) -> list[FieldError]:
    """apimachinery ``NewRequirement`` checks, in its order and wording."""
    errors: list[FieldError] = []
    key_problems = validate_qualified_name(key)
    if key_problems:
        errors.append(FieldError.invalid(_child(path, "key"), key, "; ".join(key_problems)))
    values_path = _child(path, "values")
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errors.append(
                FieldError.invalid(
                    values_path, list(values), "exact-match compatibility requires one single value"
                )
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errors.append(
                FieldError.invalid(
                    values_path,
                    list(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for index, value in enumerate(values):
            if _parse_int64(value) is None:
                errors.append(
                    FieldError.invalid(
                        f"{values_path}[{index}]",
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        errors.append(FieldError.not_supported(_child(path, "operator"), operator, _ALL_OPERATORS))
    for index, value in enumerate(values):
        value_problems = validate_label_value(value)
        if value_problems:
            errors.append(
                FieldError.invalid(
                    f"{values_path}[{index}][{key}]", value, "; ".join(value_problems)
                )
            )
    return errors


# --- the label selector string parser (a port of apimachinery's lexer and grammar) -------------


class _Token(Enum):
    END = "end of string"
    CLOSE_PAREN = ")"
    COMMA = ","
    NOT = "!"
    DOUBLE_EQUALS = "=="
    EQUALS = "="
    GREATER = ">"
    IDENTIFIER = "identifier"
    IN = "in"
    LESS = "<"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    OPEN_PAREN = "("


_SYMBOL_TOKENS: Final = {
    ")": _Token.CLOSE_PAREN,
    ",": _Token.COMMA,
    "!": _Token.NOT,
    "==": _Token.DOUBLE_EQUALS,
    "=": _Token.EQUALS,
    ">": _Token.GREATER,
    "<": _Token.LESS,
    "!=": _Token.NOT_EQUALS,
    "(": _Token.OPEN_PAREN,
}
_KEYWORD_TOKENS: Final = {"in": _Token.IN, "notin": _Token.NOT_IN}
_SPECIAL_CHARS: Final = frozenset("=!(),><")
_WHITESPACE: Final = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[_Token, str]]:
    """Split a label selector into tokens; whitespace separates tokens and is otherwise ignored."""
    tokens: list[tuple[_Token, str]] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= end:
            tokens.append((_Token.END, ""))
            return tokens
        if text[pos] in _SPECIAL_CHARS:
            # Longest run of special characters that still forms a known operator.
            start = pos
            best: tuple[_Token, str] | None = None
            while pos < end and text[pos] in _SPECIAL_CHARS:
                candidate = text[start : pos + 1]
                token = _SYMBOL_TOKENS.get(candidate)
                if token is not None:
                    best = (token, candidate)
                elif best is not None:
                    break
                pos += 1
            if best is None:  # pragma: no cover - every single special char is a token
                raise SelectorError(f"error expected: keyword found '{text[start:pos]}'")
            pos = start + len(best[1])
            tokens.append(best)
        else:
            start = pos
            while pos < end and text[pos] not in _SPECIAL_CHARS and text[pos] not in _WHITESPACE:
                pos += 1
            word = text[start:pos]
            tokens.append((_KEYWORD_TOKENS.get(word, _Token.IDENTIFIER), word))


class _Parser:
    """Recursive descent over the token list, mirroring upstream's messages."""

    def __init__(self, text: str) -> None:
        self._tokens = _lex(text)
        self._position = 0

    def _peek(self, as_value: bool) -> tuple[_Token, str]:
        token, literal = self._tokens[self._position]
        # In value position the keywords 'in'/'notin' are ordinary identifiers.
        if as_value and token in (_Token.IN, _Token.NOT_IN):
            token = _Token.IDENTIFIER
        return token, literal

    def _next(self, as_value: bool) -> tuple[_Token, str]:
        item = self._peek(as_value)
        self._position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token, literal = self._peek(as_value=True)
            if token in (_Token.IDENTIFIER, _Token.NOT):
                try:
                    requirements.append(self._requirement())
                except SelectorError as error:
                    raise SelectorError(f"unable to parse requirement: {error}") from None
                token, literal = self._next(as_value=True)
                if token == _Token.END:
                    return requirements
                if token != _Token.COMMA:
                    raise SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
                following, following_literal = self._peek(as_value=True)
                if following not in (_Token.IDENTIFIER, _Token.NOT):
                    raise SelectorError(
                        f"found '{following_literal}', expected: identifier after ','"
                    )
            elif token == _Token.END:
                return requirements
            else:
                raise SelectorError(
                    f"found '{literal}', expected: !, identifier, or 'end of string'"
                )

    def _requirement(self) -> Requirement:
        key, operator = self._key_and_inferred_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return Requirement.create(key, operator, ())
        operator = self._operator()
        values = self._value_set() if operator in (IN, NOT_IN) else self._exact_value()
        return Requirement.create(key, operator, values)

    def _key_and_inferred_operator(self) -> tuple[str, str]:
        operator = ""
        token, literal = self._next(as_value=True)
        if token == _Token.NOT:
            operator = DOES_NOT_EXIST
            token, literal = self._next(as_value=True)
        if token != _Token.IDENTIFIER:
            raise SelectorError(f"found '{literal}', expected: identifier")
        problems = validate_qualified_name(literal)
        if problems:
            # Upstream validates the key against a nil field path, which prints as "<nil>".
            raise SelectorError(str(FieldError.invalid("<nil>", literal, "; ".join(problems))))
        following, _ = self._peek(as_value=True)
        if following in (_Token.END, _Token.COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def _operator(self) -> str:
        token, literal = self._next(as_value=False)
        operators = {
            _Token.IN: IN,
            _Token.EQUALS: EQUALS,
            _Token.DOUBLE_EQUALS: DOUBLE_EQUALS,
            _Token.GREATER: GREATER_THAN,
            _Token.LESS: LESS_THAN,
            _Token.NOT_IN: NOT_IN,
            _Token.NOT_EQUALS: NOT_EQUALS,
        }
        if token not in operators:
            raise SelectorError(f"found '{literal}', expected: {', '.join(_BINARY_OPERATORS)}")
        return operators[token]

    def _value_set(self) -> set[str]:
        token, literal = self._next(as_value=True)
        if token != _Token.OPEN_PAREN:
            raise SelectorError(f"found '{literal}' expected: '('")
        token, literal = self._peek(as_value=True)
        if token in (_Token.IDENTIFIER, _Token.COMMA):
            values = self._identifiers()
            self._next(as_value=True)  # the ')' that _identifiers stopped at
            return values
        if token == _Token.CLOSE_PAREN:  # "()" is the set holding the empty value
            self._next(as_value=True)
            return {""}
        raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")

    def _identifiers(self) -> set[str]:
        """A comma-separated list of possibly empty values, up to (not including) ``)``."""
        values: set[str] = set()
        while True:
            token, literal = self._next(as_value=True)
            if token == _Token.IDENTIFIER:
                values.add(literal)
                following, following_literal = self._peek(as_value=True)
                if following == _Token.COMMA:
                    continue
                if following == _Token.CLOSE_PAREN:
                    return values
                raise SelectorError(f"found '{following_literal}', expected: ',' or ')'")
            if token == _Token.COMMA:
                if not values:
                    values.add("")  # "(," starts with an empty value
                following, _ = self._peek(as_value=True)
                if following == _Token.CLOSE_PAREN:
                    values.add("")  # ",)" ends with an empty value
                    return values
                if following == _Token.COMMA:
                    self._next(as_value=True)
                    values.add("")  # ",," holds an empty value
                continue
            raise SelectorError(f"found '{literal}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        token, _ = self._peek(as_value=True)
        if token in (_Token.END, _Token.COMMA):
            return {""}
        token, literal = self._next(as_value=True)
        if token == _Token.IDENTIFIER:
            return {literal}
        raise SelectorError(f"found '{literal}', expected: identifier")


def _canonical(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    return tuple(sorted(requirements, key=lambda r: (r.key, r.operator, r.values)))


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """An AND of label requirements. The empty selector matches everything.

    ``LabelSelector.nothing()`` (what a missing structured selector means upstream) matches no
    object at all; it prints as ``""`` like upstream, so it does not round-trip through ``parse``.
    """

    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", _canonical(self.requirements))

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches every object."""
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector that matches no object."""
        return cls((), matches_nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the Kubernetes string syntax; raises :class:`SelectorError` naming the problem."""
        if not isinstance(text, str):
            raise SelectorError(f"label selector must be a string, not {type(text).__name__}")
        return cls(tuple(_Parser(text).parse()))

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """A selector requiring each ``key=value`` of ``labels`` (validated)."""
        return cls(tuple(Requirement.create(k, EQUALS, (v,)) for k, v in labels.items()))

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None, *, path: str = "") -> LabelSelector:
        """Read a structured ``LabelSelector`` (``matchLabels``, ``matchExpressions``).

        ``None`` selects nothing and ``{}`` selects everything, as upstream. ``path`` prefixes
        field names in error messages (e.g. ``spec.selector``).
        """
        if selector is None:
            return cls.nothing()
        if not isinstance(selector, Mapping):
            raise SelectorError(f"{path or 'selector'}: label selector must be an object")
        requirements: list[Requirement] = []
        match_labels = selector.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise SelectorError(f"{_child(path, 'matchLabels')}: must be an object of strings")
        for key, value in match_labels.items():
            if not isinstance(value, str):
                raise SelectorError(
                    f"{_child(path, 'matchLabels')}[{key}]: Invalid value: must be a string"
                )
            requirements.append(Requirement.create(key, EQUALS, (value,)))
        expressions = selector.get("matchExpressions") or []
        if not isinstance(expressions, Sequence) or isinstance(expressions, str):
            raise SelectorError(f"{_child(path, 'matchExpressions')}: must be a list")
        for index, expression in enumerate(expressions):
            item_path = f"{_child(path, 'matchExpressions')}[{index}]"
            if not isinstance(expression, Mapping):
                raise SelectorError(f"{item_path}: must be an object")
            raw_operator = expression.get("operator")
            operator = (
                _EXPRESSION_OPERATORS.get(raw_operator) if isinstance(raw_operator, str) else None
            )
            if operator is None:
                raise SelectorError(
                    f"{go_quote(str(raw_operator or ''))} is not a valid label selector operator"
                )
            key = expression.get("key")
            values = expression.get("values") or []
            if not isinstance(key, str):
                raise SelectorError(f"{item_path}.key: Required value: must be a string")
            if (
                not isinstance(values, Sequence)
                or isinstance(values, str)
                or not all(isinstance(v, str) for v in values)
            ):
                raise SelectorError(f"{item_path}.values: must be a list of strings")
            requirements.append(Requirement.create(key, operator, values))
        return cls(tuple(requirements))

    def to_dict(self) -> dict[str, Any]:
        """The structured form (``matchLabels`` / ``matchExpressions``) selecting the same objects.

        ``key=v`` becomes a ``matchLabels`` entry (or ``In`` when the key is already there) and
        ``key!=v`` becomes ``NotIn``, which means the same. ``gt``/``lt`` have no structured form
        and raise :class:`SelectorError`, as does :meth:`nothing`.
        """
        if self.matches_nothing:
            raise SelectorError("a selector that matches nothing has no structured form")
        match_labels: dict[str, str] = {}
        expressions: list[dict[str, Any]] = []
        names = {value: name for name, value in _EXPRESSION_OPERATORS.items()}
        for requirement in self.requirements:
            key, operator, values = requirement.key, requirement.operator, requirement.values
            if operator in (EQUALS, DOUBLE_EQUALS) and key not in match_labels:
                match_labels[key] = values[0]
                continue
            if operator in (EQUALS, DOUBLE_EQUALS):
                operator = IN
            elif operator == NOT_EQUALS:
                operator = NOT_IN
            if operator not in names:
                raise SelectorError(
                    f"requirement '{requirement}' has no structured form: "
                    "matchExpressions support only In, NotIn, Exists and DoesNotExist"
                )
            expression: dict[str, Any] = {"key": key, "operator": names[operator]}
            if operator in (IN, NOT_IN):
                expression["values"] = list(values)
            expressions.append(expression)
        result: dict[str, Any] = {}
        if match_labels:
            result["matchLabels"] = match_labels
        if expressions:
            result["matchExpressions"] = expressions
        return result

    def add(self, *requirements: Requirement) -> LabelSelector:
        """A new selector that also requires ``requirements``."""
        return LabelSelector(self.requirements + requirements, self.matches_nothing)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (matches every object)."""
        return not self.requirements and not self.matches_nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        if self.matches_nothing:
            return False
        have = labels or {}
        return all(requirement.matches(have) for requirement in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``key=v`` or ``key in (v)``), else None."""
        for requirement in self.requirements:
            if requirement.key == key:
                if requirement.operator in (EQUALS, IN) and len(requirement.values) == 1:
                    return requirement.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)


# --- field selectors ------------------------------------------------------------------------

_FIELD_OPERATORS: Final = ("!=", "==", "=")  # tried in this order at each position, as upstream


def escape_field_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so that a value can be embedded in a field selector."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """Undo :func:`escape_field_value`; raises :class:`SelectorError` on a bad escape."""
    if not any(ch in value for ch in "\\,="):
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped by a backslash."""
    terms: list[str] = []
    start = 0
    escaped = False
    for index, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """Split at the first operator occurrence: ``(field, operator, raw value)``."""
    for index in range(len(term)):
        for operator in _FIELD_OPERATORS:
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator) :]
    return None


FieldRequirement = tuple[str, str, str]
"""``(field, operator, value)`` with operator ``"="`` or ``"!="``."""


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """An AND of ``field=value`` / ``field!=value`` terms; the empty selector matches everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def __post_init__(self) -> None:
        for field, operator, value in self.requirements:
            if operator not in ("=", "!="):
                raise SelectorError(
                    f"invalid field selector: operator {operator!r} for {field!r} "
                    "is not supported: use '=', '==' or '!='"
                )
            if not isinstance(value, str):
                raise SelectorError(f"invalid field selector: value of {field!r} must be a string")
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements)))

    @classmethod
    def everything(cls) -> FieldSelector:
        """The selector that matches every object."""
        return cls()

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse ``a=b,c!=d`` (with ``\\,``, ``\\=``, ``\\\\`` escapes in values)."""
        if not isinstance(text, str):
            raise SelectorError(f"field selector must be a string, not {type(text).__name__}")
        requirements: list[FieldRequirement] = []
        for part in _split_terms(text):
            if not part:
                continue
            split = _split_term(part)
            if split is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
            field, operator, raw_value = split
            operator = "=" if operator == "==" else operator
            requirements.append((field, operator, unescape_field_value(raw_value)))
        return cls(tuple(requirements))

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> FieldSelector:
        """A selector requiring each ``field=value`` of ``fields``."""
        return cls(tuple((field, "=", value) for field, value in fields.items()))

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object with these field values is selected (a missing field is ``""``)."""
        for field, operator, value in self.requirements:
            have = fields.get(field, "")
            if (have == value) != (operator == "="):
                return False
        return True

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if the selector has a ``field=value`` term."""
        for name, operator, value in self.requirements:
            if name == field and operator == "=":
                return value
        return None

    def __str__(self) -> str:
        return ",".join(
            f"{field}{operator}{escape_field_value(value)}"
            for field, operator, value in self.requirements
        )
