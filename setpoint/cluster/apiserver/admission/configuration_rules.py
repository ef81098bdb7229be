"""Defaults and validation of webhook configurations, as kube-apiserver 1.32 applies them.

Upstream: ``admissionregistration/v1/defaults.go`` and
``pkg/apis/admissionregistration/validation/validation.go``. The upstream schema (checked
first, by the built-in validator) covers types; these are the rules beyond it, with upstream's
field paths and messages. The behaviour also tells the webhook chain to reload its
configurations after each durable write of one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver.admission.match_conditions import compile_condition
from setpoint.cluster.apiserver.admission.policies import (
    apply_binding_defaults,
    apply_policy_defaults,
    validate_binding,
    validate_policy,
)
from setpoint.cluster.apiserver.admission.resources import (
    BINDING_PLURAL,
    MUTATING_PLURAL,
    POLICY_PLURAL,
)
from setpoint.cluster.apiserver.admission.webhooks import (
    DEFAULT_SERVICE_PORT,
    DEFAULT_TIMEOUT_SECONDS,
)
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.schema.cel_rules import RuleCompileError
from setpoint.cluster.apiserver.validation.webhook_client import client_config_errors

FAILURE_POLICIES: Final = ("Fail", "Ignore")
MATCH_POLICIES: Final = ("Exact", "Equivalent")
REINVOCATION_POLICIES: Final = ("Never", "IfNeeded")
SIDE_EFFECTS: Final = ("None", "NoneOnDryRun")
SCOPES: Final = ("*", "Cluster", "Namespaced")
OPERATIONS: Final = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
REVIEW_VERSIONS: Final = ("v1", "v1beta1")
#: The bound of ``timeoutSeconds`` (``validation.go``).
MAX_TIMEOUT_SECONDS: Final = 30
MAX_MATCH_CONDITIONS: Final = 64


def apply_defaults(obj: dict[str, Any], mutating: bool) -> None:
    """Fill the defaults upstream sets on every webhook of a configuration."""
    for webhook in obj.get("webhooks") or []:
        if not isinstance(webhook, dict):
            continue
        webhook.setdefault("failurePolicy", "Fail")
        webhook.setdefault("matchPolicy", "Equivalent")
        webhook.setdefault("namespaceSelector", {})
        webhook.setdefault("objectSelector", {})
        webhook.setdefault("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
        if mutating:
            webhook.setdefault("reinvocationPolicy", "Never")
        for rule in webhook.get("rules") or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (webhook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", DEFAULT_SERVICE_PORT)


def validate_configuration(obj: dict[str, Any], mutating: bool) -> list[FieldError]:
    """The field errors of a Mutating/ValidatingWebhookConfiguration."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, webhook in enumerate(obj.get("webhooks") or []):
        path = f"webhooks[{index}]"
        if not isinstance(webhook, dict):
            continue
        name = webhook.get("name") or ""
        if not name:
            errors.append(fe.required(f"{path}.name", ""))
        elif name.count(".") < 2:
            errors.append(
                fe.invalid(
                    f"{path}.name",
                    name,
                    "should be a domain with at least three segments separated by dots",
                )
            )
        elif name in seen:
            errors.append(fe.duplicate(f"{path}.name", name))
        seen.add(name)
        errors.extend(_webhook_errors(path, webhook, mutating))
    return errors


def _webhook_errors(path: str, webhook: dict[str, Any], mutating: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, rule in enumerate(webhook.get("rules") or []):
        if isinstance(rule, dict):
            errors.extend(_rule_errors(f"{path}.rules[{index}]", rule))
    _choice(errors, f"{path}.failurePolicy", webhook.get("failurePolicy"), FAILURE_POLICIES)
    _choice(errors, f"{path}.matchPolicy", webhook.get("matchPolicy"), MATCH_POLICIES)
    if mutating:
        _choice(
            errors,
            f"{path}.reinvocationPolicy",
            webhook.get("reinvocationPolicy"),
            REINVOCATION_POLICIES,
        )
    side_effects = webhook.get("sideEffects")
    if side_effects is None:
        errors.append(fe.required(f"{path}.sideEffects", "must specify one of None, NoneOnDryRun"))
    else:
        _choice(errors, f"{path}.sideEffects", side_effects, SIDE_EFFECTS)
    timeout = webhook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= MAX_TIMEOUT_SECONDS:
        errors.append(
            fe.invalid(
                f"{path}.timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    versions = webhook.get("admissionReviewVersions")
    versions_path = f"{path}.admissionReviewVersions"
    if not versions:
        errors.append(
            fe.required(versions_path, "must specify one of " + ", ".join(REVIEW_VERSIONS))
        )
    elif isinstance(versions, list):
        seen: set[str] = set()
        for index, version in enumerate(versions):
            if version in seen:
                errors.append(fe.duplicate(f"{versions_path}[{index}]", version))
            seen.add(version)
        if not any(v in REVIEW_VERSIONS for v in versions):
            errors.append(
                fe.invalid(
                    versions_path,
                    fe.GoValue("[]string{" + ", ".join(fe.go_quote(v) for v in versions) + "}"),
                    "must include at least one of " + ", ".join(REVIEW_VERSIONS),
                )
            )
    for key in ("namespaceSelector", "objectSelector"):
        selector = webhook.get(key)
        if isinstance(selector, dict):
            try:
                LabelSelector.from_dict(selector, path=f"{path}.{key}")
            except SelectorError as exc:
                errors.append(fe.invalid(f"{path}.{key}", fe.GoValue(""), str(exc)))
    errors.extend(client_config_errors(f"{path}.clientConfig", webhook.get("clientConfig")))
    errors.extend(_match_condition_errors(f"{path}.matchConditions", webhook))
    return errors


def _choice(errors: list[FieldError], path: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        errors.append(fe.not_supported(path, value, allowed))


def _rule_errors(path: str, rule: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    operations = rule.get("operations") or []
    if not operations:
        errors.append(fe.required(f"{path}.operations", ""))
    if len(operations) > 1 and "*" in operations:
        errors.append(
            fe.invalid(
                f"{path}.operations",
                fe.GoValue("[]v1.OperationType{" + ", ".join(map(fe.go_quote, operations)) + "}"),
                "if '*' is present, must not specify other operations",
            )
        )
    for index, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errors.append(fe.not_supported(f"{path}.operations[{index}]", operation, OPERATIONS))
    for key in ("apiGroups", "apiVersions"):
        values = rule.get(key) or []
        if not values:
            errors.append(fe.required(f"{path}.{key}", ""))
        if len(values) > 1 and "*" in values:
            errors.append(
                fe.invalid(
                    f"{path}.{key}",
                    fe.GoValue("[]string{" + ", ".join(map(fe.go_quote, values)) + "}"),
                    "if '*' is present, must not specify other " + key,
                )
            )
    resources = rule.get("resources") or []
    if not resources:
        errors.append(fe.required(f"{path}.resources", ""))
    errors.extend(_resource_errors(f"{path}.resources", resources))
    _choice(errors, f"{path}.scope", rule.get("scope"), SCOPES)
    return errors


def _resource_errors(path: str, resources: list[Any]) -> list[FieldError]:
    # validateResources: "*" alone, "*/*" alone, "x/*" only without other "x/..." entries.
    errors: list[FieldError] = []
    subresources_of: dict[str, set[str]] = {}
    for index, entry in enumerate(resources):
        if not isinstance(entry, str):
            continue
        item = f"{path}[{index}]"
        if entry == "":
            errors.append(fe.required(item, ""))
            continue
        main, _, sub = entry.partition("/")
        if len(resources) > 1 and entry in ("*", "*/*"):
            errors.append(
                fe.invalid(
                    path, fe.GoValue(""), "if '*' is present, must not specify other resources"
                )
            )
        subresources_of.setdefault(main, set()).add(sub)
    for main, subs in subresources_of.items():
        if "*" in subs and len(subs) > 1:
            errors.append(
                fe.invalid(
                    path,
                    fe.GoValue(""),
                    f"if '{main}/*' is present, must not specify {main}/<subresource>",
                )
            )
    return errors


def _match_condition_errors(path: str, webhook: dict[str, Any]) -> list[FieldError]:
    conditions = webhook.get("matchConditions") or []
    errors: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errors.append(fe.too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    seen: set[str] = set()
    for index, condition in enumerate(conditions):
        if not isinstance(condition, dict):
            continue
        item = f"{path}[{index}]"
        name = condition.get("name") or ""
        if not name:
            errors.append(fe.required(f"{item}.name", ""))
        elif name in seen:
            errors.append(fe.duplicate(f"{item}.name", name))
        seen.add(name)
        expression = condition.get("expression") or ""
        if not expression:
            errors.append(fe.required(f"{item}.expression", ""))
            continue
        try:
            compile_condition(expression)
        except RuleCompileError as exc:
            errors.append(fe.invalid(f"{item}.expression", expression, str(exc)))
    return errors


class WebhookConfigurationBehaviour(KindBehaviour):
    """Mutating/ValidatingWebhookConfiguration and ValidatingAdmissionPolicy(Binding):
    upstream's defaults and validation, and a reload of the chain after every durable write."""

    reacts_to_writes = True

    def __init__(self, validator: BuiltinValidator | None, on_change: Callable[[], None]) -> None:
        super().__init__(validator)
        self._on_change = on_change

    def _default(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        if resource.plural == POLICY_PLURAL:
            apply_policy_defaults(obj)
        elif resource.plural == BINDING_PLURAL:
            apply_binding_defaults(obj)
        else:
            apply_defaults(obj, resource.plural == MUTATING_PLURAL)

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        self._default(resource, obj)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        self._default(resource, new)

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        if subresource == "status":
            return []
        if resource.plural == POLICY_PLURAL:
            return validate_policy(obj)
        if resource.plural == BINDING_PLURAL:
            return validate_binding(obj)
        return validate_configuration(obj, resource.plural == MUTATING_PLURAL)

    async def after_write(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        self._on_change()
