"""Webhook configurations as the chain uses them: one :class:`Webhook` per ``webhooks[]`` entry.

Parsed from stored (validated, defaulted) configurations, ordered as upstream orders them:
by configuration name, then by position in the configuration.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Final

from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver.admission.match_conditions import MatchCondition

#: ``timeoutSeconds`` and ``clientConfig.service.port`` when unset (``defaults.go``).
DEFAULT_TIMEOUT_SECONDS: Final = 10
DEFAULT_SERVICE_PORT: Final = 443


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``rules[]`` entry: which operations on which resources a webhook sees."""

    operations: tuple[str, ...]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    #: ``(resource, subresource)`` pairs, either part possibly ``*``.
    resources: tuple[tuple[str, str], ...]
    scope: str = "*"


@dataclass(frozen=True, slots=True)
class ServiceReference:
    """``clientConfig.service``."""

    namespace: str
    name: str
    path: str
    port: int


@dataclass(frozen=True, slots=True)
class Webhook:
    """One admission webhook of a Mutating/ValidatingWebhookConfiguration."""

    name: str
    configuration: str
    mutating: bool
    url: str | None
    service: ServiceReference | None
    ca_bundle: bytes | None
    rules: tuple[Rule, ...]
    failure_policy: str
    match_policy: str
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    side_effects: str
    timeout_seconds: int
    review_versions: tuple[str, ...]
    reinvoke_if_needed: bool
    match_conditions: tuple[MatchCondition, ...]

    @property
    def fails_open(self) -> bool:
        """``failurePolicy: Ignore``: a failed call lets the request through."""
        return self.failure_policy == "Ignore"


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _rule(rule: dict[str, Any]) -> Rule:
    resources = tuple(
        (main, sub) for main, _, sub in (r.partition("/") for r in _strings(rule.get("resources")))
    )
    return Rule(
        operations=_strings(rule.get("operations")),
        groups=_strings(rule.get("apiGroups")),
        versions=_strings(rule.get("apiVersions")),
        resources=resources,
        scope=str(rule.get("scope") or "*"),
    )


def _selector(value: Any) -> LabelSelector:
    try:
        return LabelSelector.from_dict(value if isinstance(value, dict) else {})
    except SelectorError:
        return LabelSelector.nothing()  # validated on write: only reachable for bad old data


def _ca_bundle(value: Any) -> bytes | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_webhooks(configuration: dict[str, Any], mutating: bool) -> list[Webhook]:
    """The webhooks of one stored configuration, in order."""
    name = str((configuration.get("metadata") or {}).get("name") or "")
    webhooks: list[Webhook] = []
    for entry in configuration.get("webhooks") or []:
        if not isinstance(entry, dict):
            continue
        client = entry.get("clientConfig") or {}
        service_value = client.get("service")
        service = None
        if isinstance(service_value, dict):
            service = ServiceReference(
                namespace=str(service_value.get("namespace") or ""),
                name=str(service_value.get("name") or ""),
                path=str(service_value.get("path") or ""),
                port=int(service_value.get("port") or DEFAULT_SERVICE_PORT),
            )
        conditions = tuple(
            MatchCondition(str(c.get("name") or ""), str(c.get("expression") or ""))
            for c in entry.get("matchConditions") or []
            if isinstance(c, dict)
        )
        webhooks.append(
            Webhook(
                name=str(entry.get("name") or ""),
                configuration=name,
                mutating=mutating,
                url=client.get("url") if isinstance(client.get("url"), str) else None,
                service=service,
                ca_bundle=_ca_bundle(client.get("caBundle")),
                rules=tuple(_rule(r) for r in entry.get("rules") or [] if isinstance(r, dict)),
                failure_policy=str(entry.get("failurePolicy") or "Fail"),
                match_policy=str(entry.get("matchPolicy") or "Equivalent"),
                namespace_selector=_selector(entry.get("namespaceSelector")),
                object_selector=_selector(entry.get("objectSelector")),
                side_effects=str(entry.get("sideEffects") or ""),
                timeout_seconds=int(entry.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS),
                review_versions=_strings(entry.get("admissionReviewVersions")),
                reinvoke_if_needed=entry.get("reinvocationPolicy") == "IfNeeded",
                match_conditions=conditions,
            )
        )
    return webhooks
