"""The subset of Go's ``text/template`` that kwok Stages' ``statusTemplate`` fields use.

kwok renders a Stage's ``next.statusTemplate`` with Go's ``text/template`` (plus sprig and a
few functions of its own) over the object, then reads the result as YAML. This module renders
the same language for the constructs kwok's own default stages use: text and ``{{ }}`` actions
with ``{{-``/``-}}`` trimming and ``{{/* comments */}}``; pipelines with ``|``; fields
(``.a.b``), variables (``$x``, ``$x.a``, ``$`` the root) declared with ``:=`` and set with
``=``; string, raw-string, number and boolean literals, ``nil``; parenthesised pipelines;
``if``/``else if``/``else``, ``range`` (with ``$i, $v :=``; over lists and maps, with
``else``), ``with``/``else``; and the functions :data:`BUILTIN_FUNCTIONS` plus those the
caller passes (kwok's ``Now``, ``Quote``, ``NodeIPWith`` …). Anything else — ``define``,
``template``, ``block``, ``break``/``continue``, an unknown function — is a
:class:`TemplateError` when the template is compiled, so a Stage that needs more is refused
with one line instead of misbehaving later.

Values follow Go's rules for decoded JSON: a missing map key is ``nil`` and prints
``<no value>``; ``false``, ``0``, ``nil`` and empty strings, lists and maps are false;
``or``/``and`` return an argument, not a boolean.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["BUILTIN_FUNCTIONS", "GoTemplate", "TemplateError"]


class TemplateError(ValueError):
    """A template that cannot be compiled or rendered (the message says where and why)."""


_NO_VALUE: Final = "<no value>"


def truth(value: Any) -> bool:
    """Go template truthiness."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float | str | list | dict | tuple):
        return bool(value)
    return True


def go_print(value: Any) -> str:
    """How ``{{ value }}`` prints it (``fmt.Sprint`` of a decoded JSON value)."""
    if value is None:
        return _NO_VALUE
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_print(v) for v in value) + "]"
    if isinstance(value, dict):
        items = " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value))
        return f"map[{items}]"
    return str(value)


def _eq(first: Any, *others: Any) -> bool:
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, bool) or isinstance(b, bool):
            return a is b
        if isinstance(a, int | float) and isinstance(b, int | float):
            return bool(a == b)
        return type(a) is type(b) and a == b

    return any(same(first, other) for other in others)


def _or(*values: Any) -> Any:
    for value in values:
        if truth(value):
            return value
    return values[-1] if values else None


def _and(*values: Any) -> Any:
    for value in values:
        if not truth(value):
            return value
    return values[-1] if values else None


def _index(value: Any, *keys: Any) -> Any:
    for key in keys:
        if value is None:
            return None
        if isinstance(value, Mapping):
            value = value.get(key if isinstance(key, str) else str(key))
        elif isinstance(value, Sequence) and not isinstance(value, str):
            if not isinstance(key, int | float) or not 0 <= int(key) < len(value):
                raise TemplateError(f"index out of range: {go_print(key)}")
            value = value[int(key)]
        else:
            raise TemplateError(f"cannot index a {type(value).__name__}")
    return value


def _dict(*pairs: Any) -> dict[str, Any]:
    if len(pairs) % 2:
        raise TemplateError("dict needs key/value pairs")
    return {str(pairs[i]): pairs[i + 1] for i in range(0, len(pairs), 2)}


def _len(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str | list | dict | tuple):
        return len(value)
    raise TemplateError(f"len of a {type(value).__name__}")


#: Go's built-ins and the sprig functions kwok's default stages call.
BUILTIN_FUNCTIONS: Final[Mapping[str, Callable[..., Any]]] = {
    "and": _and,
    "or": _or,
    "not": lambda value: not truth(value),
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "index": _index,
    "len": _len,
    "dict": _dict,
    "list": lambda *values: list(values),
    "print": lambda *values: "".join(go_print(v) for v in values),
    "toJson": lambda value: json.dumps(value, separators=(",", ":")),
}


# -- parsing --------------------------------------------------------------------------------

_ACTION: Final = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<raw>`[^`]*`)
      | (?P<number>-?\d+(?:\.\d+)?)
      | (?P<declare>:=)
      | (?P<assign>=)
      | (?P<pipe>\|)
      | (?P<open>\()
      | (?P<close>\))
      | (?P<comma>,)
      | (?P<variable>\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
      | (?P<field>(?:\.[A-Za-z0-9_]+)+|\.)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str


def _tokens(source: str) -> list[_Token]:
    tokens, position = [], 0
    source = source.strip()
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None or match.end() == position:
            raise TemplateError(
                f"unexpected {source[position : position + 10]!r} in {{{{{source}}}}}"
            )
        kind = match.lastgroup or ""
        tokens.append(_Token(kind, match.group(kind)))
        position = match.end()
        while position < len(source) and source[position].isspace():
            position += 1
    return tokens


@dataclass(slots=True)
class _Command:
    """One command of a pipeline: operands (the first may name a function)."""

    operands: list[Any]


@dataclass(slots=True)
class _Pipeline:
    commands: list[_Command]
    declare: list[str] = field(default_factory=list)
    assign: bool = False


@dataclass(slots=True)
class _Text:
    text: str


@dataclass(slots=True)
class _Action:
    pipeline: _Pipeline


@dataclass(slots=True)
class _Branch:
    keyword: str  # if, range, with
    pipeline: _Pipeline
    body: list[Any] = field(default_factory=list)
    otherwise: list[Any] = field(default_factory=list)


_UNSUPPORTED: Final = frozenset({"define", "template", "block", "break", "continue"})


class _Parser:
    def __init__(self, source: str, functions: Mapping[str, Callable[..., Any]]) -> None:
        self.functions = functions
        self.pieces = self._split(source)
        self.position = 0

    @staticmethod
    def _split(source: str) -> list[tuple[str, str]]:
        pieces: list[tuple[str, str]] = []
        position = 0
        for match in _ACTION.finditer(source):
            text = source[position : match.start()]
            if match.group(1):
                text = text.rstrip()
            if pieces and pieces[-1][0] == "trim-right":
                pieces.pop()
                text = text.lstrip()
            pieces.append(("text", text))
            inner = match.group(2)
            if not inner.strip().startswith("/*"):
                pieces.append(("action", inner))
            if match.group(3):
                pieces.append(("trim-right", ""))
            position = match.end()
        tail = source[position:]
        if pieces and pieces[-1][0] == "trim-right":
            pieces.pop()
            tail = tail.lstrip()
        pieces.append(("text", tail))
        return pieces

    def parse(self) -> list[Any]:
        nodes, end = self._block()
        if end is not None:
            raise TemplateError(f"unexpected {{{{{end}}}}}")
        return nodes

    def _block(self) -> tuple[list[Any], str | None]:
        nodes: list[Any] = []
        while self.position < len(self.pieces):
            kind, text = self.pieces[self.position]
            self.position += 1
            if kind == "text":
                if text:
                    nodes.append(_Text(text))
                continue
            words = text.split(None, 1)
            keyword = words[0] if words else ""
            rest = words[1] if len(words) > 1 else ""
            if keyword in ("end", "else"):
                return nodes, text.strip()
            if keyword in _UNSUPPORTED:
                raise TemplateError(f"{{{{{keyword}}}}} is not supported")
            if keyword in ("if", "range", "with"):
                nodes.append(self._branch(keyword, rest))
            else:
                nodes.append(_Action(self._pipeline(text)))
        return nodes, None

    def _branch(self, keyword: str, rest: str) -> _Branch:
        branch = _Branch(keyword, self._pipeline(rest))
        branch.body, end = self._block()
        while end is not None and end.startswith("else"):
            tail = end[4:].strip()
            if tail.startswith("if ") and keyword == "if":
                nested = self._branch("if", tail[3:])
                branch.otherwise = [nested]
                return branch
            if tail.startswith("with ") and keyword == "with":
                nested = self._branch("with", tail[5:])
                branch.otherwise = [nested]
                return branch
            if tail:
                raise TemplateError(f"unexpected {{{{{end}}}}}")
            branch.otherwise, end = self._block()
        if end != "end":
            raise TemplateError(f"{{{{{keyword}}}}} has no {{{{end}}}}")
        return branch

    def _pipeline(self, source: str) -> _Pipeline:
        tokens = _tokens(source)
        pipeline = _Pipeline([])
        if len(tokens) >= 2 and tokens[0].kind == "variable":
            if tokens[1].kind in ("declare", "assign"):
                pipeline.declare, pipeline.assign = [tokens[0].text], tokens[1].kind == "assign"
                tokens = tokens[2:]
            elif (
                len(tokens) >= 4
                and tokens[1].kind == "comma"
                and tokens[2].kind == "variable"
                and tokens[3].kind == "declare"
            ):
                pipeline.declare = [tokens[0].text, tokens[2].text]
                tokens = tokens[4:]
        pipeline.commands = self._commands(tokens, source)
        return pipeline

    def _commands(self, tokens: list[_Token], source: str) -> list[_Command]:
        commands: list[_Command] = [_Command([])]
        position = 0
        while position < len(tokens):
            token = tokens[position]
            if token.kind == "pipe":
                commands.append(_Command([]))
            elif token.kind == "open":
                depth, end = 1, position + 1
                while end < len(tokens) and depth:
                    depth += {"open": 1, "close": -1}.get(tokens[end].kind, 0)
                    end += 1
                if depth:
                    raise TemplateError(f"unclosed ( in {{{{{source}}}}}")
                inner = _Pipeline(self._commands(tokens[position + 1 : end - 1], source))
                commands[-1].operands.append(inner)
                position = end
                continue
            elif token.kind == "word":
                if token.text in ("true", "false"):
                    commands[-1].operands.append(("literal", token.text == "true"))
                elif token.text == "nil":
                    commands[-1].operands.append(("literal", None))
                elif token.text in self.functions:
                    commands[-1].operands.append(("function", token.text))
                else:
                    raise TemplateError(f'function "{token.text}" is not supported')
            elif token.kind == "string":
                commands[-1].operands.append(("literal", json.loads(token.text)))
            elif token.kind == "raw":
                commands[-1].operands.append(("literal", token.text[1:-1]))
            elif token.kind == "number":
                number = float(token.text) if "." in token.text else int(token.text)
                commands[-1].operands.append(("literal", number))
            elif token.kind in ("field", "variable"):
                commands[-1].operands.append((token.kind, token.text))
            else:
                raise TemplateError(f"unexpected {token.text!r} in {{{{{source}}}}}")
            position += 1
        if any(not command.operands for command in commands):
            raise TemplateError(f"empty command in {{{{{source}}}}}")
        return commands


# -- rendering ------------------------------------------------------------------------------


class _Scope:
    def __init__(self, root: Any) -> None:
        self.frames: list[dict[str, Any]] = [{"$": root}]

    def get(self, name: str) -> Any:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        raise TemplateError(f"undefined variable {name}")

    def set(self, name: str, value: Any) -> None:
        for frame in reversed(self.frames):
            if name in frame:
                frame[name] = value
                return
        raise TemplateError(f"undefined variable {name}")


def _field(value: Any, path: str) -> Any:
    for name in path.split(".")[1:]:
        if not name:
            continue
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise TemplateError(f"can't evaluate field {name} in a {type(value).__name__}")
        value = value.get(name)
    return value


class GoTemplate:
    """A compiled template; :meth:`render` runs it over a data value."""

    def __init__(
        self, source: str, functions: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        self.functions = {**BUILTIN_FUNCTIONS, **(functions or {})}
        self._nodes = _Parser(source, self.functions).parse()

    def render(self, data: Any, functions: Mapping[str, Callable[..., Any]] | None = None) -> str:
        """The text the template makes from ``data``; ``functions`` replace those of the same
        name given at compile time (for values known only now, such as the time)."""
        out: list[str] = []
        scope = _Scope(data)
        calls = self.functions if functions is None else {**self.functions, **functions}
        _Render(calls)._run(self._nodes, data, scope, out)
        return "".join(out)


class _Render:
    """One rendering of a compiled template, with the function table of this render."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self.functions = functions

    def _run(self, nodes: list[Any], dot: Any, scope: _Scope, out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, _Text):
                out.append(node.text)
            elif isinstance(node, _Action):
                value = self._pipeline(node.pipeline, dot, scope)
                if not node.pipeline.declare:
                    out.append(go_print(value))
            else:
                self._branch(node, dot, scope, out)

    def _branch(self, node: _Branch, dot: Any, scope: _Scope, out: list[str]) -> None:
        scope.frames.append({})
        try:
            value = self._pipeline(node.pipeline, dot, scope)
            if node.keyword == "if":
                self._run(node.body if truth(value) else node.otherwise, dot, scope, out)
            elif node.keyword == "with":
                if truth(value):
                    self._run(node.body, value, scope, out)
                else:
                    self._run(node.otherwise, dot, scope, out)
            else:
                self._range(node, value, dot, scope, out)
        finally:
            scope.frames.pop()

    def _range(self, node: _Branch, value: Any, dot: Any, scope: _Scope, out: list[str]) -> None:
        if isinstance(value, Mapping):
            items = [(key, value[key]) for key in sorted(value)]
        elif isinstance(value, list | tuple):
            items = list(enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            items = [(i, i) for i in range(value)]
        elif value is None:
            items = []
        else:
            raise TemplateError(f"range can't iterate over {go_print(value)}")
        if not items:
            self._run(node.otherwise, dot, scope, out)
            return
        names = node.pipeline.declare
        for key, item in items:
            frame: dict[str, Any] = {}
            if len(names) == 2:
                frame[names[0]], frame[names[1]] = key, item
            elif len(names) == 1:
                frame[names[0]] = item
            scope.frames.append(frame)
            try:
                self._run(node.body, item, scope, out)
            finally:
                scope.frames.pop()

    def _pipeline(self, pipeline: _Pipeline, dot: Any, scope: _Scope) -> Any:
        value: Any = None
        for index, command in enumerate(pipeline.commands):
            value = self._command(command, dot, scope, value if index else _NOTHING)
        if pipeline.declare and pipeline.assign:
            scope.set(pipeline.declare[0], value)
        elif len(pipeline.declare) == 1:
            scope.frames[-1][pipeline.declare[0]] = value
        return value

    def _command(self, command: _Command, dot: Any, scope: _Scope, piped: Any) -> Any:
        first = command.operands[0]
        if isinstance(first, tuple) and first[0] == "function":
            args = [self._operand(o, dot, scope) for o in command.operands[1:]]
            if piped is not _NOTHING:
                args.append(piped)
            try:
                return self.functions[first[1]](*args)
            except TemplateError:
                raise
            except Exception as error:
                raise TemplateError(f"{first[1]}: {error}") from None
        if len(command.operands) > 1 or piped is not _NOTHING:
            raise TemplateError(f"can't give arguments to a non-function {go_print(first)}")
        return self._operand(first, dot, scope)

    def _operand(self, operand: Any, dot: Any, scope: _Scope) -> Any:
        if isinstance(operand, _Pipeline):
            return self._pipeline(operand, dot, scope)
        kind, text = operand
        if kind == "literal":
            return text
        if kind == "field":
            return _field(dot, text) if text != "." else dot
        if kind == "variable":
            name, _, path = text.partition(".")
            value = scope.get(name)
            return _field(value, "." + path) if path else value
        if kind == "function":  # a function given as an argument is called with none
            return self.functions[text]()
        raise TemplateError(f"unexpected operand {text}")


_NOTHING: Final = object()
