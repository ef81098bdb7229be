"""The label selector string parser: a port of apimachinery's lexer and grammar.

Grammar (comma-separated AND of requirements; whitespace only separates tokens)::

    selector    ::= requirement ("," requirement)*
    requirement ::= [!] KEY [set | exact]
    set         ::= ("in" | "notin") "(" VALUE ("," VALUE)* ")"
    exact       ::= ("=" | "==" | "!=" | ">" | "<") VALUE

``in`` and ``notin`` are keywords only where an operator is expected; elsewhere they are
ordinary keys and values. Errors use upstream's exact wording (``found 'x', expected: ...``).
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from setpoint.api import field_errors as fe
from setpoint.api.label_requirements import (
    BINARY_OPERATORS,
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
)
from setpoint.api.names import validate_qualified_name
from setpoint.api.selector_error import SelectorError

__all__ = ["parse_requirements"]


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
        """All requirements of the selector, in written order."""
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
            raise SelectorError(str(fe.invalid("<nil>", literal, "; ".join(problems))))
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
            raise SelectorError(f"found '{literal}', expected: {', '.join(BINARY_OPERATORS)}")
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


def parse_requirements(text: str) -> list[Requirement]:
    """Parse a label selector string into its requirements (in written order)."""
    return _Parser(text).parse()
