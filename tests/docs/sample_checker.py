"""Static checks of the Python samples in the documentation, against the real API.

Samples are fragments (they use `op`, `ctx`, `client` ... defined elsewhere, and top-level
`await`), so they are not run. Instead each sample is parsed and every name it takes from setpoint
is resolved against the installed package: `from setpoint.x import Y` must import, `setpoint.Y`
must exist, calls to setpoint functions and classes must use parameters they accept, and methods
called on the usual variables (`op`, `ctx`, `client`, `manager`, ...) must exist with those
parameters. A renamed function or keyword in the runtime then fails the docs tests.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

_FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Sample:
    """One fenced Python block: its file, first line number and source."""

    path: Path
    line: int
    source: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass(frozen=True)
class Instance:
    """A value known only by its class (e.g. the `ctx` of a reconcile)."""

    cls: type


def python_samples(path: Path) -> list[Sample]:
    """The ```python blocks of a Markdown file."""
    text = path.read_text()
    return [
        Sample(path, text.count("\n", 0, match.start()) + 2, match.group(1))
        for match in _FENCE.finditer(text)
    ]


def _variables() -> dict[str, Any]:
    from setpoint.cache import Cache
    from setpoint.client import Client
    from setpoint.controller import EventRecorder
    from setpoint.manager import Context, Manager, Operator

    return {
        "setpoint": importlib.import_module("setpoint"),
        "op": Instance(Operator),
        "east": Instance(Operator),
        "west": Instance(Operator),
        "manager": Instance(Manager),
        "ctx": Instance(Context),
        "client": Instance(Client),
        "cache": Instance(Cache),
        "recorder": Instance(EventRecorder),
    }


def _has_instance_attribute(cls: type, name: str) -> bool:
    """Whether instances of `cls` have `name`: on the class, or assigned in its source."""
    if hasattr(cls, name):
        return True
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if re.search(rf"self\.{re.escape(name)}\s*[:=]", source):
            return True
    return False


def _return_type(fn: Any) -> Instance | None:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    returned = hints.get("return")
    origin = typing.get_origin(returned)
    if origin is typing.Union or origin is types.UnionType:
        options = [a for a in typing.get_args(returned) if a is not type(None)]
        returned = options[0] if len(options) == 1 else None
    return Instance(returned) if isinstance(returned, type) else None


class _Checker(ast.NodeVisitor):
    def __init__(self, sample: Sample, names: dict[str, Any]) -> None:
        self.sample = sample
        self.names = names  # carried over between the samples of one file
        self.problems: list[str] = []

    def problem(self, node: ast.AST, text: str) -> None:
        line = self.sample.line + getattr(node, "lineno", 1) - 1
        self.problems.append(f"{self.sample.path.name}:{line}: {text}")

    # -- imports ------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != "setpoint":
                continue
            try:
                importlib.import_module(alias.name)
            except ImportError as error:
                self.problem(node, f"import {alias.name}: {error}")
                continue
            self.names[(alias.asname or alias.name).split(".")[0]] = importlib.import_module(
                "setpoint"
            )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not node.module or node.module.split(".")[0] != "setpoint":
            return
        try:
            module = importlib.import_module(node.module)
        except ImportError as error:
            self.problem(node, f"from {node.module}: {error}")
            return
        for alias in node.names:
            if not hasattr(module, alias.name):
                self.problem(node, f"{node.module} has no {alias.name!r}")
                continue
            self.names[alias.asname or alias.name] = getattr(module, alias.name)

    # -- expressions --------------------------------------------------------------------------

    def resolve(self, node: ast.AST) -> Any:
        """What `node` stands for: a setpoint object, an `Instance`, or None when unknown."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Await):
            return self.resolve(node.value)
        if isinstance(node, ast.Attribute):
            return self.resolve_attribute(node)
        if isinstance(node, ast.Call):
            return self.resolve_call(node)
        return None

    def resolve_attribute(self, node: ast.Attribute) -> Any:
        base = self.resolve(node.value)
        if base is None:
            return None
        if isinstance(base, Instance):
            if not _has_instance_attribute(base.cls, node.attr):
                self.problem(node, f"{base.cls.__name__} has no attribute {node.attr!r}")
                return None
            member = inspect.getattr_static(base.cls, node.attr, None)
            if isinstance(member, property):
                return _return_type(member.fget)
            if callable(member):
                return ("method", base.cls, node.attr)
            return None
        if isinstance(base, ModuleType) and not hasattr(base, node.attr):
            try:
                return importlib.import_module(f"{base.__name__}.{node.attr}")
            except ImportError:
                self.problem(node, f"{base.__name__} has no attribute {node.attr!r}")
                return None
        if not hasattr(base, node.attr):
            self.problem(
                node, f"{getattr(base, '__name__', base)!r} has no attribute {node.attr!r}"
            )
            return None
        return getattr(base, node.attr)

    def resolve_call(self, node: ast.Call) -> Any:
        target = self.resolve(node.func)
        if target is None:
            return None
        bound_self = False
        if isinstance(target, tuple) and target[0] == "method":
            _, cls, name = target
            function = getattr(cls, name)
            bound_self = not isinstance(
                inspect.getattr_static(cls, name), classmethod | staticmethod
            )
        else:
            function = target
        if not callable(function):
            return None
        self.check_arguments(node, function, bound_self)
        if isinstance(function, type):
            return Instance(function)
        return _return_type(function)

    def check_arguments(self, node: ast.Call, function: Any, bound_self: bool) -> None:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            return
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return
        positional = [None] * (len(node.args) + (1 if bound_self else 0))
        keywords = {k.arg: None for k in node.keywords if k.arg is not None}
        try:
            signature.bind_partial(*positional, **keywords)
        except TypeError as error:
            name = getattr(function, "__qualname__", function)
            self.problem(node, f"call of {name}: {error}")

    def visit_Call(self, node: ast.Call) -> None:
        self.resolve(node)
        for child in (*node.args, *(k.value for k in node.keywords)):
            self.visit(child)
        if isinstance(node.func, ast.Attribute):
            self.visit(node.func.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.resolve(node)


def check_samples(path: Path) -> tuple[int, list[str]]:
    """Check every Python sample of `path`; returns (number of samples, problems)."""
    names: dict[str, Any] = dict(_variables())
    problems: list[str] = []
    samples = python_samples(path)
    for sample in samples:
        try:
            tree = compile(
                sample.source,
                str(sample),
                "exec",
                flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            )
        except SyntaxError as error:
            problems.append(f"{sample}: syntax error: {error}")
            continue
        checker = _Checker(sample, names)
        checker.visit(tree)
        problems.extend(p for p in checker.problems if p not in problems)
    return len(samples), problems
