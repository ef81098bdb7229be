"""ValidatingAdmissionPolicy: validation rules in CEL, evaluated by the API server itself.

Upstream: ``admission/plugin/policy/validating``. A ``ValidatingAdmissionPolicy`` says what to
check (``validations``, with ``variables``, ``matchConditions`` and an optional ``paramKind``);
a ``ValidatingAdmissionPolicyBinding`` says where (``matchResources``), with which parameters
(``paramRef``) and what a failure does (``validationActions``: ``Deny`` refuses the write,
``Warn`` returns a warning, ``Audit`` records it in the request's audit Event as the
``validation.policy.admission.k8s.io/validation_failure`` annotation). Expressions see
``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject`` and ``variables``
(``authorizer`` is not offered).

A denial: ``ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request:
<message>``, code 422 for reason ``Invalid`` (the default), 403 ``Forbidden``, 401
``Unauthorized``, 413 ``RequestEntityTooLarge``. An expression that cannot be evaluated
follows the policy's ``failurePolicy`` (``Fail`` refuses, ``Ignore`` skips the policy).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver.admission.matching import EquivalentResources, rule_matches
from setpoint.cluster.apiserver.admission.webhooks import Rule
from setpoint.cluster.apiserver.audit.admission_annotations import annotate
from setpoint.cluster.apiserver.registry.admission_point import AdmissionRequest
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.schema.cel_rules import RuleCompileError, error_of
from setpoint.cluster.apiserver.status_errors import APIError

log = logging.getLogger(__name__)

VALIDATION_ACTIONS: Final = ("Deny", "Warn", "Audit")
#: The audit annotation an ``Audit`` action records a failure in.
VALIDATION_FAILURE_ANNOTATION: Final = "validation.policy.admission.k8s.io/validation_failure"
#: What Go's encoding/json escapes beyond what Python's json module does.
_GO_JSON_ESCAPES: Final = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
#: The HTTP code of a denial by ``reason`` (``Invalid`` when unset).
REASON_CODES: Final = {
    "Invalid": 422,
    "Forbidden": 403,
    "Unauthorized": 401,
    "RequestEntityTooLarge": 413,
}


@lru_cache(maxsize=1)
def _environment() -> Any:
    # CEL is loaded with the first expression compiled, not at start-up
    from cel_expr_python import cel  # type: ignore[import-untyped]
    from cel_expr_python.ext import ext_bindings, ext_strings  # type: ignore[import-untyped]

    names = ("object", "oldObject", "request", "params", "namespaceObject", "variables")
    return cel.NewEnv(
        variables=dict.fromkeys(names, cel.Type.DYN),
        extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings()],
    )


@lru_cache(maxsize=512)
def compile_expression(expression: str) -> Any:
    """The compiled program; :class:`RuleCompileError` with upstream's wording if invalid."""
    try:
        return _environment().compile(expression)
    except RuntimeError as exc:
        text = str(exc).removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
        raise RuleCompileError(f"compilation failed: {text}") from None


class EvaluationError(Exception):
    """An expression that could not be evaluated."""


def evaluate(expression: str, data: Mapping[str, Any]) -> Any:
    """The value of ``expression``; :class:`EvaluationError` when it fails."""
    try:
        result = compile_expression(expression).eval(data=dict(data))
        error = error_of(result)
        value = result.value()
    except Exception as exc:  # a user's expression failing is the user's error
        raise EvaluationError(f"expression '{expression}' resulted in error: {exc}") from None
    if error is not None:
        raise EvaluationError(f"expression '{expression}' resulted in error: {error}")
    return value


# -- validation of the objects ---------------------------------------------------------------


def _expression_errors(path: str, expression: Any) -> list[FieldError]:
    if not isinstance(expression, str) or not expression.strip():
        return [fe.required(path, "")]
    try:
        compile_expression(expression)
    except RuleCompileError as exc:
        return [fe.invalid(path, expression, str(exc))]
    return []


def validate_policy(obj: dict[str, Any]) -> list[FieldError]:
    """Field errors of a ValidatingAdmissionPolicy (the upstream checks that matter most)."""
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    validations = spec.get("validations") or []
    if not validations and not spec.get("auditAnnotations"):
        errors.append(
            fe.required(
                "spec.validations", "validations or auditAnnotations must contain at least one item"
            )
        )
    for index, validation in enumerate(validations):
        if isinstance(validation, dict):
            errors += _expression_errors(
                f"spec.validations[{index}].expression", validation.get("expression")
            )
            message_expression = validation.get("messageExpression")
            if message_expression:
                errors += _expression_errors(
                    f"spec.validations[{index}].messageExpression", message_expression
                )
    for index, variable in enumerate(spec.get("variables") or []):
        if isinstance(variable, dict):
            if not variable.get("name"):
                errors.append(fe.required(f"spec.variables[{index}].name", ""))
            errors += _expression_errors(
                f"spec.variables[{index}].expression", variable.get("expression")
            )
    for index, condition in enumerate(spec.get("matchConditions") or []):
        if isinstance(condition, dict):
            errors += _expression_errors(
                f"spec.matchConditions[{index}].expression", condition.get("expression")
            )
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in ("Fail", "Ignore"):
        errors.append(fe.not_supported("spec.failurePolicy", policy, ("Fail", "Ignore")))
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, dict) or not constraints.get("resourceRules"):
        errors.append(fe.required("spec.matchConstraints.resourceRules", ""))
    return errors


def validate_binding(obj: dict[str, Any]) -> list[FieldError]:
    """Field errors of a ValidatingAdmissionPolicyBinding."""
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    if not spec.get("policyName"):
        errors.append(fe.required("spec.policyName", ""))
    actions = spec.get("validationActions") or []
    if not actions:
        errors.append(fe.required("spec.validationActions", ""))
    for index, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errors.append(
                fe.not_supported(f"spec.validationActions[{index}]", action, VALIDATION_ACTIONS)
            )
    if "Deny" in actions and "Warn" in actions:
        errors.append(
            fe.invalid(
                "spec.validationActions",
                fe.GoValue("[]v1.ValidationAction{" + ", ".join(map(fe.go_quote, actions)) + "}"),
                "must not contain both Deny and Warn (repeating the same validation failure "
                "information in the API response and headers serves no purpose)",
            )
        )
    return errors


def apply_policy_defaults(obj: dict[str, Any]) -> None:
    """``failurePolicy: Fail`` and the match defaults upstream sets."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("failurePolicy", "Fail")
    constraints = spec.get("matchConstraints")
    if isinstance(constraints, dict):
        _default_match_resources(constraints)


def apply_binding_defaults(obj: dict[str, Any]) -> None:
    """The match defaults of a binding's ``matchResources``."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("matchResources"), dict):
        _default_match_resources(spec["matchResources"])


def _default_match_resources(match: dict[str, Any]) -> None:
    match.setdefault("matchPolicy", "Equivalent")
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


# -- evaluation ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NamedRule:
    """A ``resourceRules`` entry: a rule, limited to ``resource_names`` when given."""

    rule: Rule
    resource_names: tuple[str, ...]

    def matches(self, request: AdmissionRequest, resource: ServedResource | None = None) -> bool:
        """Whether it covers the request (``resource``: made through that equivalent one)."""
        if self.resource_names and request.name not in self.resource_names:
            return False
        return rule_matches(self.rule, request, resource)


def _named_rules(value: Any) -> tuple[NamedRule, ...]:
    rules: list[NamedRule] = []
    for entry in value or []:
        if not isinstance(entry, dict):
            continue
        rule = Rule(
            operations=tuple(entry.get("operations") or ()),
            groups=tuple(entry.get("apiGroups") or ()),
            versions=tuple(entry.get("apiVersions") or ()),
            resources=tuple(
                (main, sub)
                for main, _, sub in (r.partition("/") for r in entry.get("resources") or [])
            ),
            scope=str(entry.get("scope") or "*"),
        )
        rules.append(NamedRule(rule, tuple(entry.get("resourceNames") or ())))
    return tuple(rules)


def _selector(value: Any) -> LabelSelector:
    try:
        return LabelSelector.from_dict(value if isinstance(value, dict) else {})
    except SelectorError:
        return LabelSelector.nothing()


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    labels = ((obj or {}).get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


@dataclass(frozen=True)
class MatchResources:
    """``matchConstraints`` of a policy, or ``matchResources`` of a binding."""

    rules: tuple[NamedRule, ...]
    excluded: tuple[NamedRule, ...]
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    #: ``Equivalent`` (the default): rules also cover equivalent resources.
    equivalent: bool = True

    @classmethod
    def parse(cls, value: Any) -> MatchResources:
        value = value if isinstance(value, dict) else {}
        return cls(
            _named_rules(value.get("resourceRules")),
            _named_rules(value.get("excludeResourceRules")),
            _selector(value.get("namespaceSelector")),
            _selector(value.get("objectSelector")),
            value.get("matchPolicy") != "Exact",
        )

    def matched(
        self,
        request: AdmissionRequest,
        namespace: Mapping[str, Any] | None,
        any_rule: bool,
        equivalents: EquivalentResources,
    ) -> ServedResource | None:
        """The resource through which the request is selected, or None (upstream's
        ``matchesResourceRules``: the request's own resource first, then, with
        ``matchPolicy: Equivalent``, an equivalent one). ``any_rule``: no rules means every
        resource (a binding without ``resourceRules`` narrows only by selectors)."""
        if not self.object_selector.empty and not (
            self.object_selector.matches(_labels(request.object))
            or self.object_selector.matches(_labels(request.old_object))
        ):
            return None
        if (
            not self.namespace_selector.empty
            and request.resource.namespaced
            and not self.namespace_selector.matches(_labels(namespace))
        ):
            return None
        if self._covering(self.excluded, request, equivalents) is not None:
            return None
        if not self.rules:
            return request.resource if any_rule else None
        return self._covering(self.rules, request, equivalents)

    def _covering(
        self,
        rules: tuple[NamedRule, ...],
        request: AdmissionRequest,
        equivalents: EquivalentResources,
    ) -> ServedResource | None:
        if any(rule.matches(request) for rule in rules):
            return request.resource
        if not self.equivalent or not rules:
            return None
        others = equivalents(request.resource, request.subresource)
        for rule in rules:
            for other in others:
                if rule.matches(request, other):
                    return other
        return None


@dataclass(frozen=True)
class Policy:
    """A parsed ValidatingAdmissionPolicy."""

    name: str
    fails_open: bool
    param_kind: tuple[str, str] | None
    match: MatchResources
    conditions: tuple[tuple[str, str], ...]
    variables: tuple[tuple[str, str], ...]
    validations: tuple[Mapping[str, Any], ...]

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> Policy:
        spec = obj.get("spec") or {}
        param_kind = spec.get("paramKind")
        return cls(
            name=str((obj.get("metadata") or {}).get("name") or ""),
            fails_open=spec.get("failurePolicy") == "Ignore",
            param_kind=(
                (str(param_kind.get("apiVersion") or ""), str(param_kind.get("kind") or ""))
                if isinstance(param_kind, dict)
                else None
            ),
            match=MatchResources.parse(spec.get("matchConstraints")),
            conditions=tuple(
                (str(c.get("name") or ""), str(c.get("expression") or ""))
                for c in spec.get("matchConditions") or []
                if isinstance(c, dict)
            ),
            variables=tuple(
                (str(v.get("name") or ""), str(v.get("expression") or ""))
                for v in spec.get("variables") or []
                if isinstance(v, dict)
            ),
            validations=tuple(v for v in spec.get("validations") or [] if isinstance(v, dict)),
        )


@dataclass(frozen=True)
class Binding:
    """A parsed ValidatingAdmissionPolicyBinding."""

    name: str
    policy: str
    actions: tuple[str, ...]
    match: MatchResources | None
    param_ref: Mapping[str, Any] | None

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> Binding:
        spec = obj.get("spec") or {}
        match = spec.get("matchResources")
        param_ref = spec.get("paramRef")
        return cls(
            name=str((obj.get("metadata") or {}).get("name") or ""),
            policy=str(spec.get("policyName") or ""),
            actions=tuple(spec.get("validationActions") or ()),
            match=MatchResources.parse(match) if isinstance(match, dict) else None,
            param_ref=param_ref if isinstance(param_ref, dict) else None,
        )


#: Finds the parameter objects of a binding: ``(paramKind, paramRef, request namespace)`` to
#: the objects (an empty list: none found).
ParamLookup = Callable[[tuple[str, str], Mapping[str, Any], str], list[dict[str, Any]]]


#: ``request`` as made through an equivalent resource (its objects converted).
VersionedRequest = Callable[[AdmissionRequest, ServedResource], Awaitable[AdmissionRequest]]


async def check_policies(
    pairs: list[tuple[Policy, Binding]],
    request: AdmissionRequest,
    review_for: Callable[[AdmissionRequest], dict[str, Any]],
    namespace: Mapping[str, Any] | None,
    params_for: ParamLookup,
    equivalents: EquivalentResources,
    versioned: VersionedRequest,
) -> list[str]:
    """Evaluate every (policy, binding) pair selecting ``request``: the warnings, or the
    :class:`APIError` of the first denial.

    A policy whose rules select the request through an equivalent resource (``matchPolicy:
    Equivalent``) sees the objects in that resource's version; ``review_for`` makes the
    ``request`` variable of the request as the policy sees it.
    """
    warnings: list[str] = []
    audited = False
    seen: dict[str, tuple[AdmissionRequest, dict[str, Any]]] = {}
    for policy, binding in pairs:
        matched = policy.match.matched(request, namespace, False, equivalents)
        if matched is None:
            continue
        if binding.match is not None and (
            binding.match.matched(request, namespace, True, equivalents) is None
        ):
            continue
        key = matched.api_version
        if key not in seen:
            target = request if matched is request.resource else await versioned(request, matched)
            seen[key] = (target, review_for(target))
        target, review = seen[key]
        try:
            failures = _failures(policy, binding, target, review, namespace, params_for)
        except EvaluationError as exc:
            if policy.fails_open:
                log.warning("policy %s failed open: %s", policy.name, exc)
                continue
            failures = [(0, str(exc), "Invalid")]
        for index, message, reason in failures:
            text = (
                f"ValidatingAdmissionPolicy '{policy.name}' with binding '{binding.name}' "
                f"denied request: {message}"
            )
            if "Audit" in binding.actions and not audited:
                # Upstream sets the annotation once per failure and keeps the first value
                # (``AddAnnotation`` refuses to change a key): one failure is recorded.
                value = _audit_value(policy, binding, index, message)
                annotate(VALIDATION_FAILURE_ANNOTATION, value)
                audited = True
            if "Deny" in binding.actions:
                raise APIError(REASON_CODES.get(reason, 422), reason, text)
            if "Warn" in binding.actions:
                warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with "
                    f"binding '{binding.name}': {message}"
                )
    return warnings


def _audit_value(policy: Policy, binding: Binding, index: int, message: str) -> str:
    """The annotation's value: a JSON list of one failure, as Go's ``json.Marshal`` writes it
    (compact, fields in upstream's order, ``<``, ``>`` and ``&`` escaped)."""
    failure = {
        "message": message,
        "policy": policy.name,
        "binding": binding.name,
        "expressionIndex": index,
        "validationActions": list(binding.actions),
    }
    text = json.dumps([failure], separators=(",", ":"), ensure_ascii=False)
    for character, escaped in _GO_JSON_ESCAPES:
        text = text.replace(character, escaped)
    return text


def _failures(
    policy: Policy,
    binding: Binding,
    request: AdmissionRequest,
    review: dict[str, Any],
    namespace: Mapping[str, Any] | None,
    params_for: ParamLookup,
) -> list[tuple[int, str, str]]:
    """The failed validations: (index in ``spec.validations``, message, reason)."""
    params_sets: list[dict[str, Any] | None] = [None]
    if policy.param_kind is not None:
        ref = binding.param_ref or {}
        found = params_for(policy.param_kind, ref, request.namespace)
        if not found:
            if ref.get("parameterNotFoundAction") == "Allow":
                return []
            return [
                (
                    0,
                    "no params found for policy binding with `Deny` parameterNotFoundAction",
                    "Invalid",
                )
            ]
        params_sets = list(found)
    failures: list[tuple[int, str, str]] = []
    for params in params_sets:
        data: dict[str, Any] = {
            "object": request.object,
            "oldObject": request.old_object,
            "request": review,
            "params": params,
            "namespaceObject": dict(namespace) if namespace else None,
            "variables": {},
        }
        if not all(evaluate(expression, data) is True for _, expression in policy.conditions):
            continue
        variables: dict[str, Any] = {}
        for name, expression in policy.variables:
            data["variables"] = variables
            variables[name] = evaluate(expression, data)
        data["variables"] = variables
        for index, validation in enumerate(policy.validations):
            expression = str(validation.get("expression") or "")
            if evaluate(expression, data) is True:
                continue
            message = str(validation.get("message") or "") or f"failed expression: {expression}"
            message_expression = validation.get("messageExpression")
            if message_expression:
                try:
                    evaluated = evaluate(str(message_expression), data)
                    if isinstance(evaluated, str) and evaluated.strip():
                        message = evaluated
                except EvaluationError:
                    pass  # upstream keeps the static message when messageExpression fails
            failures.append((index, message, str(validation.get("reason") or "Invalid")))
    return failures
