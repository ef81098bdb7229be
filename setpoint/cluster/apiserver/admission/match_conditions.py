"""``matchConditions``: CEL expressions that must all be true for a webhook to be called.

Upstream (``admission/plugin/webhook/matchconditions``) binds ``object``, ``oldObject``,
``request`` (the AdmissionRequest) and ``authorizer``; this evaluator binds the first three
(``authorizer`` is not offered yet: an expression using it fails to compile). A false
condition skips the webhook; an error fails the call as the webhook's ``failurePolicy`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from setpoint.cluster.apiserver.schema.cel_rules import RuleCompileError, error_of


@lru_cache(maxsize=1)
def _environment() -> Any:
    # CEL is loaded with the first expression compiled, not at start-up
    from cel_expr_python import cel  # type: ignore[import-untyped]
    from cel_expr_python.ext import ext_bindings, ext_strings  # type: ignore[import-untyped]

    return cel.NewEnv(
        variables={
            "object": cel.Type.DYN,
            "oldObject": cel.Type.DYN,
            "request": cel.Type.DYN,
        },
        extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings()],
    )


@lru_cache(maxsize=256)
def compile_condition(expression: str) -> Any:
    """The compiled program of one expression; :class:`RuleCompileError` when it is invalid."""
    try:
        return _environment().compile(expression)
    except RuntimeError as exc:
        text = str(exc).removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
        raise RuleCompileError(f"compilation failed: {text}") from None


@dataclass(frozen=True, slots=True)
class MatchCondition:
    """One named condition of a webhook."""

    name: str
    expression: str


class ConditionError(Exception):
    """A condition that could not be evaluated (the message says which and why)."""


def conditions_hold(
    conditions: tuple[MatchCondition, ...],
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None,
    request: dict[str, Any],
) -> bool:
    """Whether every condition is true; :class:`ConditionError` if one cannot be evaluated.

    A false condition wins over an error in another, as upstream: the webhook is skipped.
    """
    data = {"object": obj, "oldObject": old, "request": request}
    failures: list[str] = []
    for condition in conditions:
        try:
            result = compile_condition(condition.expression).eval(data=data)
            error = error_of(result)
            value = result.value()
        except Exception as exc:  # a user's expression failing is the user's error
            failures.append(f"{condition.name}: {exc}")
            continue
        if error is not None:
            failures.append(f"{condition.name}: {error}")
            continue
        if value is False:
            return False
        if value is not True:
            failures.append(f"{condition.name}: expression must return a bool, got {value!r}")
    if failures:
        raise ConditionError("; ".join(failures))
    return True
