"""Which webhooks a write goes to: ``rules``, ``namespaceSelector`` and ``objectSelector``.

Upstream: ``admission/plugin/webhook/predicates`` (``rules/rules.go``, ``namespace/matcher.go``,
``object/matcher.go``). ``matchConditions`` are checked after these, by the chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from setpoint.cluster.apiserver.admission.webhooks import Rule, Webhook
from setpoint.cluster.apiserver.registry.admission_point import AdmissionRequest
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

#: The labels of a namespace by name (None when it does not exist).
NamespaceLabels = Callable[[str], Mapping[str, str] | None]
#: The resources served from the same storage as a resource (its other versions, aliases in
#: other groups), excluding itself: upstream's ``EquivalentResourceMapper``.
EquivalentResources = Callable[[ServedResource, str], list[ServedResource]]


def rule_matches(
    rule: Rule, request: AdmissionRequest, resource: ServedResource | None = None
) -> bool:
    """Whether ``rule`` covers the request's operation, group, version, resource and scope
    (``resource``: match as if the request were made through that equivalent resource)."""
    if resource is None:
        resource = request.resource
    if "*" not in rule.operations and request.operation not in rule.operations:
        return False
    if "*" not in rule.groups and resource.group not in rule.groups:
        return False
    if "*" not in rule.versions and resource.version not in rule.versions:
        return False
    if not any(
        (main in ("*", resource.plural)) and (sub in ("*", request.subresource))
        for main, sub in rule.resources
    ):
        return False
    is_namespace = resource.group == "" and resource.plural == "namespaces"
    if rule.scope == "Namespaced":
        # A Namespace object is cluster-scoped, even though the request names a namespace.
        return resource.namespaced and not is_namespace
    if rule.scope == "Cluster":
        return not resource.namespaced or is_namespace
    return True


def _labels(obj: dict[str, Any] | None) -> Mapping[str, str]:
    if not obj:
        return {}
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def selectors_match(
    webhook: Webhook, request: AdmissionRequest, namespace_labels: NamespaceLabels
) -> bool:
    """Whether the namespace and object selectors of ``webhook`` select the request."""
    selector = webhook.object_selector
    if not selector.empty and not (
        selector.matches(_labels(request.object)) or selector.matches(_labels(request.old_object))
    ):
        return False
    selector = webhook.namespace_selector
    if selector.empty:
        return True
    resource = request.resource
    if resource.group == "" and resource.plural == "namespaces":
        # A Namespace is matched on its own labels (the old ones on delete).
        return selector.matches(_labels(request.object or request.old_object))
    if not resource.namespaced:
        return True  # cluster-scoped objects are never excluded by a namespaceSelector
    labels = namespace_labels(request.namespace)
    return selector.matches(labels or {})


def matched_resource(
    webhook: Webhook, request: AdmissionRequest, equivalents: EquivalentResources
) -> ServedResource | None:
    """The resource through which ``webhook``'s rules cover the request, or None.

    The request's own resource when a rule names it; else, with ``matchPolicy: Equivalent``
    (the default), the first equivalent resource a rule names (rules in order, as upstream's
    ``ShouldCallHook``): the webhook then sees the object in that resource's version.
    """
    if any(rule_matches(rule, request) for rule in webhook.rules):
        return request.resource
    if webhook.match_policy != "Equivalent":
        return None
    others = equivalents(request.resource, request.subresource)
    for rule in webhook.rules:
        for other in others:
            if rule_matches(rule, request, other):
                return other
    return None
