"""CEL validation rules of CRD schemas (``x-kubernetes-validations``), on Google's CEL (C++).

kube-apiserver compiles every rule when a CRD is written (refusing one that does not compile)
and evaluates them on each write of a custom resource, walking the schema with the new object
and, for transition rules, the old one (``oldSelf``; ``optionalOldSelf`` makes it an optional
that is also bound on create). A false rule reports its ``message`` (or ``messageExpression``,
or "failed rule: <rule>") at the node's path plus ``fieldPath``, as the error type ``reason``
names. Evaluation is bounded: CEL has no loops besides comprehensions over the value, and the
runtime stops a rule after 10,000 comprehension iterations (reported with upstream's
cost-limit wording), so no rule holds the event loop for long.

Library: the CEL standard library, the ``strings`` and ``optional`` extensions, ``cel.bind``,
and Kubernetes' list functions (``isSorted``, ``sum``, ``min``, ``max``) and regex functions
(``find``, ``findAll``, on RE2), ``quantity`` and ``url`` (:mod:`.cel_quantity_url`). Not
yet: the list ``indexOf``/``lastIndexOf`` (the strings extension owns those names in this
library), ``format``, ``ip``/``cidr`` and the static cost estimate upstream applies at CRD
creation. Rules are type-checked dynamically (``self`` is ``dyn``), so a misspelled field
fails when evaluated, not when the CRD is created.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import re2  # type: ignore[import-untyped]

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema.cel_quantity_url import quantity_and_url_functions

#: Reasons a rule may name (``FieldValueErrorReason``).
SUPPORTED_REASONS: Final = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)
#: Upstream caps an evaluated messageExpression (``MaxEvaluatedMessageExpressionSizeBytes``).
MAX_MESSAGE_BYTES: Final = 5 * 1024
_USES_OLD_SELF = re.compile(r"\boldSelf\b")
_OPTIONAL_WRAPPER: Final = (
    "cel.bind(oldSelf, __oldSelfPresent ? optional.of(__oldSelfValue) : optional.none(), ({}))"
)
_BUDGET_EXCEEDED: Final = "Iteration budget exceeded"


class RuleCompileError(ValueError):
    """A rule or messageExpression that does not compile; the message is upstream's detail."""


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """One ``x-kubernetes-validations`` entry, compiled."""

    rule: str
    program: Any
    message: str
    message_program: Any | None
    reason: str | None
    field_path: str
    uses_old_self: bool
    optional_old_self: bool

    def error_string(self) -> str:
        """Upstream's ``ruleErrorString``: the message if set, else the rule."""
        return self.message.strip() or self.rule.strip()

    def default_message(self) -> str:
        """Upstream's ``ruleMessageOrDefault``."""
        return self.message.strip() or f"failed rule: {self.rule.strip()}"


def _is_sorted(values: list[Any]) -> bool:
    return all(values[i] <= values[i + 1] for i in range(len(values) - 1))


def _find(text: str, pattern: str) -> str:
    match = re2.search(pattern, text)
    return "" if match is None else str(match.group(0))


def _find_all(text: str, pattern: str) -> list[str]:
    return [str(m.group(0)) for m in re2.finditer(pattern, text)]


def _find_n(text: str, pattern: str, limit: int) -> list[str]:
    found = _find_all(text, pattern)
    return found if limit < 0 else found[:limit]


def _member(
    name: str, overload: str, params: list[Any], result: Any, impl: Callable[..., Any]
) -> Any:
    from cel_expr_python import cel  # type: ignore[import-untyped]

    return cel.FunctionDecl(
        name,
        [cel.Overload(overload, return_type=result, parameters=params, is_member=True, impl=impl)],
    )


def _kubernetes_functions() -> list[Any]:
    from cel_expr_python import cel

    dyn_list = cel.Type.List(cel.Type.DYN)
    string = cel.Type.STRING
    return [
        _member("isSorted", "list_is_sorted", [dyn_list], cel.Type.BOOL, _is_sorted),
        _member("sum", "list_sum", [dyn_list], cel.Type.DYN, lambda v: sum(v) if v else 0),
        _member("min", "list_min", [dyn_list], cel.Type.DYN, min),
        _member("max", "list_max", [dyn_list], cel.Type.DYN, max),
        _member("find", "string_find", [string, string], string, _find),
        cel.FunctionDecl(
            "findAll",
            [
                cel.Overload(
                    "string_find_all",
                    return_type=cel.Type.List(string),
                    parameters=[string, string],
                    is_member=True,
                    impl=_find_all,
                ),
                cel.Overload(
                    "string_find_all_n",
                    return_type=cel.Type.List(string),
                    parameters=[string, string, cel.Type.INT],
                    is_member=True,
                    impl=_find_n,
                ),
            ],
        ),
    ]


@lru_cache(maxsize=1)
def _environment() -> Any:
    # CEL is loaded with the first rule compiled, not at start-up
    from cel_expr_python import cel
    from cel_expr_python.ext import (  # type: ignore[import-untyped]
        ext_bindings,
        ext_optional,
        ext_strings,
    )

    return cel.NewEnv(
        variables={
            "self": cel.Type.DYN,
            "oldSelf": cel.Type.DYN,
            "__oldSelfPresent": cel.Type.BOOL,
            "__oldSelfValue": cel.Type.DYN,
        },
        extensions=[
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
            ext_bindings.ExtBindings(),
        ],
        functions=_kubernetes_functions() + quantity_and_url_functions(),
    )


def _compile(source: str) -> Any:
    try:
        return _environment().compile(source)
    except RuntimeError as exc:
        raise RuleCompileError(_compile_detail(str(exc))) from None


def _compile_detail(text: str) -> str:
    # "INVALID_ARGUMENT: ERROR: <input>:1:9: Syntax error: ..." -> upstream's detail.
    text = text.removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
    return f"compilation failed: {text}"


def compile_rule(rule: Mapping[str, Any]) -> CompiledRule:
    """Compile one ``x-kubernetes-validations`` entry; :class:`RuleCompileError` if invalid."""
    source = str(rule.get("rule", ""))
    optional_old_self = bool(rule.get("optionalOldSelf"))
    program = _compile(source)  # errors reported against the rule as written
    if optional_old_self:
        program = _compile(_OPTIONAL_WRAPPER.format(source))
    message_source = rule.get("messageExpression")
    message_program = None
    if isinstance(message_source, str) and message_source.strip():
        try:
            message_program = _compile(message_source)
        except RuleCompileError as exc:
            raise RuleCompileError(f"messageExpression {exc}") from None
    reason = rule.get("reason")
    return CompiledRule(
        rule=source,
        program=program,
        message=str(rule.get("message") or ""),
        message_program=message_program,
        reason=reason if isinstance(reason, str) else None,
        field_path=str(rule.get("fieldPath") or ""),
        uses_old_self=_USES_OLD_SELF.search(source) is not None,
        optional_old_self=optional_old_self,
    )


def message_expression_compile_error(expression: str) -> str | None:
    """Why a messageExpression does not compile (upstream's wording), or None."""
    try:
        _compile(expression)
    except RuleCompileError as exc:
        return f"messageExpression {exc}"
    return None


class RuleBudgetExceeded(Exception):
    """A rule ran out of its evaluation budget; no further rules run."""


@dataclass(slots=True)
class RuleOutcome:
    """The result of one rule on one value: None when it held, else the field error."""

    error: FieldError | None
    stop: bool = False


def evaluate(
    compiled: CompiledRule, path: str, value: Any, old: Any, has_old: bool, type_name: str
) -> RuleOutcome:
    """Evaluate ``compiled`` with ``self=value`` (and ``oldSelf``) at field ``path``."""
    data = {
        "self": value,
        "oldSelf": old if has_old else None,
        "__oldSelfPresent": has_old,
        "__oldSelfValue": old if has_old else None,
    }
    shown = path or "<nil>"
    try:
        result = compiled.program.eval(data=data)
    except Exception as exc:  # any failure of a user's rule is the user's error
        if _BUDGET_EXCEEDED in str(exc):
            detail = (
                "'operation cancelled: actual cost limit exceeded': no further validation "
                f"rules will be run due to call cost exceeds limit for rule: "
                f"{compiled.error_string()}"
            )
            return RuleOutcome(fe.invalid(shown, type_name, detail), stop=True)
        detail = f"{_short(str(exc))} evaluating rule: {compiled.error_string()}"
        return RuleOutcome(fe.invalid(shown, type_name, detail))
    if _is_error(result):
        detail = (
            f"{_short(_runtime_error(result.value()))} evaluating rule: {compiled.error_string()}"
        )
        return RuleOutcome(fe.invalid(shown, type_name, detail))
    if result.value() is True:
        return RuleOutcome(None)
    target = _join(path, compiled.field_path)
    message = compiled.default_message()
    if compiled.message_program is not None:
        message = _message(compiled, data) or message
    return RuleOutcome(_error_for_reason(compiled.reason, target or "<nil>", type_name, message))


def _short(text: str) -> str:
    """An evaluation error, cut short: cel-cpp quotes whole values (up to 1.5 MiB) in some."""
    return text if len(text) <= MAX_MESSAGE_BYTES else text[:MAX_MESSAGE_BYTES] + "..."


def _is_error(result: Any) -> bool:
    return str(result.type()) == "ERROR" or _type_name(result) == "ERROR"


def error_of(result: Any) -> str | None:
    """The error an evaluation result holds, in cel-go's words (None: a value)."""
    return _runtime_error(result.value()) if _is_error(result) else None


def _type_name(result: Any) -> str:
    try:
        return str(result.type().name())
    except Exception:
        return ""


def _runtime_error(text: Any) -> str:
    # cel-cpp: "NOT_FOUND: Key not found in map : \"x\"" -> cel-go: "no such key: x"
    message = str(text)
    found = re.fullmatch(r'NOT_FOUND: Key not found in map : "(.*)"', message)
    if found:
        return f"no such key: {found.group(1)}"
    return message


def _message(compiled: CompiledRule, data: Mapping[str, Any]) -> str | None:
    program = compiled.message_program
    if program is None:
        return None
    try:
        result = program.eval(data=data)
    except Exception:  # the rule's default message is used instead
        return None
    if _is_error(result):
        return None
    value = result.value()
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_BYTES:
        return None
    return text


def _join(path: str, field_path: str) -> str:
    if not field_path:
        return path
    tail = field_path.lstrip(".")
    if not path:
        return tail
    return f"{path}{field_path}" if field_path.startswith("[") else f"{path}.{tail}"


def _error_for_reason(reason: str | None, path: str, value: Any, detail: str) -> FieldError:
    if reason == "FieldValueForbidden":
        return fe.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return fe.required(path, detail)
    if reason == "FieldValueDuplicate":
        return fe.duplicate(path, value)
    return fe.invalid(path, value, detail)
