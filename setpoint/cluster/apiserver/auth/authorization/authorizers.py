"""Authorizers: RBAC, ``system:masters``, AlwaysAllow, and the chain kube-apiserver runs.

An authorizer answers a :class:`Decision`: allowed or not, with upstream's reason text
(``RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"``; on a refusal,
``RBAC: clusterrole.rbac.authorization.k8s.io "y" not found`` when a binding names a missing
role). RBAC never denies outright: it has no opinion, and with no authorizer allowing, the
request is forbidden. :meth:`Authorizer.rules_for` lists what a user may do in a namespace
(``SelfSubjectRulesReview`` and the escalation check).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from setpoint.api.field_errors import go_quote
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.authorization.rbac_index import RBACIndex
from setpoint.cluster.apiserver.auth.authorization.rules import PolicyRule, rule_allows
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo

#: ``--authorization`` modes.
ALWAYS_ALLOW: Final = "AlwaysAllow"
RBAC: Final = "RBAC"
MODES: Final = (ALWAYS_ALLOW, RBAC)

#: Everything (what AlwaysAllow reports, and what the aggregationRule check asks for).
EVERYTHING: Final = (
    PolicyRule(("*",), ("*",), ("*",)),
    PolicyRule(("*",), non_resource_urls=("*",)),
)


class Decision(NamedTuple):
    """An authorizer's answer."""

    allowed: bool
    reason: str = ""
    evaluation_error: str = ""


ALLOWED: Final = Decision(True)
NO_OPINION: Final = Decision(False)


@dataclass(slots=True)
class RuleSet:
    """What a user may do in a namespace; ``errors`` when some bindings could not be read."""

    rules: list[PolicyRule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Authorizer(abc.ABC):
    """Decides whether a request may proceed."""

    @abc.abstractmethod
    def authorize(self, attributes: Attributes) -> Decision:
        """The decision on ``attributes``."""

    @abc.abstractmethod
    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """Every rule that applies to ``user`` in ``namespace`` ('' for cluster-wide only)."""


class AlwaysAllowAuthorizer(Authorizer):
    """``--authorization AlwaysAllow``: every request is allowed."""

    def authorize(self, attributes: Attributes) -> Decision:
        return ALLOWED

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        return RuleSet(list(EVERYTHING))


class RBACAuthorizer(Authorizer):
    """Role-based access control over an :class:`RBACIndex` (``plugin/.../rbac``)."""

    def __init__(self, index: RBACIndex) -> None:
        self.index = index

    def authorize(self, attributes: Attributes) -> Decision:
        errors: list[str] = []
        index = self.index
        user = attributes.user
        sources = [(binding, subject, "") for binding, subject in index.cluster_bindings_for(user)]
        if attributes.namespace:
            sources.extend(
                (binding, subject, attributes.namespace)
                for binding, subject in index.bindings_for(user, attributes.namespace)
            )
        for binding, subject, namespace in sources:
            rules = index.role_rules(binding.role_kind, binding.role_name, namespace)
            if rules is None:
                errors.append(missing_role(binding.role_kind, binding.role_name))
                continue
            for rule in rules:
                if rule_allows(attributes, rule):
                    return Decision(True, f"RBAC: allowed by {binding.describe(subject)}")
        if errors:
            return Decision(False, f"RBAC: {_aggregate(errors)}")
        return NO_OPINION

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        found = RuleSet()
        index = self.index
        sources = [(binding, "") for binding, _ in index.cluster_bindings_for(user)]
        if namespace:
            sources.extend(
                (binding, namespace) for binding, _ in index.bindings_for(user, namespace)
            )
        for binding, binding_namespace in sources:
            rules = index.role_rules(binding.role_kind, binding.role_name, binding_namespace)
            if rules is None:
                found.errors.append(missing_role(binding.role_kind, binding.role_name))
            else:
                found.rules.extend(rules)
        return found


class PrivilegedGroupAuthorizer(Authorizer):
    """Members of ``system:masters`` may do anything; others get no opinion."""

    def authorize(self, attributes: Attributes) -> Decision:
        return ALLOWED if PRIVILEGED_GROUP in attributes.user.groups else NO_OPINION

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        # Upstream's privileged-group authorizer lists no rules: system:masters sees its
        # rules through the cluster-admin ClusterRoleBinding.
        return RuleSet()


class UnionAuthorizer(Authorizer):
    """The first authorizer that allows wins; reasons of the others are joined."""

    def __init__(self, *authorizers: Authorizer) -> None:
        self.authorizers = authorizers

    def authorize(self, attributes: Attributes) -> Decision:
        reasons: list[str] = []
        for authorizer in self.authorizers:
            decision = authorizer.authorize(attributes)
            if decision.allowed:
                return decision
            if decision.reason:
                reasons.append(decision.reason)
        return Decision(False, "\n".join(reasons)) if reasons else NO_OPINION

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        found = RuleSet()
        for authorizer in self.authorizers:
            part = authorizer.rules_for(user, namespace)
            found.rules.extend(part.rules)
            found.errors.extend(part.errors)
        return found


def missing_role(kind: str, name: str) -> str:
    """The error of a binding whose role does not exist (``GetRoleReferenceRules``)."""
    if kind == "ClusterRole":
        return f"clusterrole.rbac.authorization.k8s.io {go_quote(name)} not found"
    if kind == "Role":
        return f"role.rbac.authorization.k8s.io {go_quote(name)} not found"
    return f"unsupported role reference kind: {go_quote(kind)}"


def _aggregate(errors: list[str]) -> str:
    """Several errors as Go's ``utilerrors.NewAggregate`` prints them."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
