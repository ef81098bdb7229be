"""Policy rules: whether one grants a request, and whether a set of rules covers another.

The matching is upstream's (``rbac.RuleAllows`` and ``rbac/v1/helpers``): ``*`` matches every
verb, group or resource (subresources included); ``*/status`` matches the ``status``
subresource of any resource; an empty ``resourceNames`` matches any name, a non-empty one only
requests that name an object in it; a non-resource URL ending in ``*`` matches by prefix.
:func:`covers` is the escalation check's question (``validation.Covers``): is every single
permission of some rules held by others.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from setpoint.api.field_errors import go_quote
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes

ALL: str = "*"


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """An ``rbac.authorization.k8s.io/v1`` PolicyRule."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, rule: Any) -> PolicyRule:
        """The rule of a stored object's ``rules[i]`` (malformed fields count as empty)."""
        if not isinstance(rule, dict):
            return cls()
        return cls(
            _strings(rule.get("verbs")),
            _strings(rule.get("apiGroups")),
            _strings(rule.get("resources")),
            _strings(rule.get("resourceNames")),
            _strings(rule.get("nonResourceURLs")),
        )

    def to_json(self) -> dict[str, Any]:
        """The rule as an API object (empty lists left out, as upstream's ``omitempty``)."""
        document: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.api_groups:
            document["apiGroups"] = list(self.api_groups)
        if self.resources:
            document["resources"] = list(self.resources)
        if self.resource_names:
            document["resourceNames"] = list(self.resource_names)
        if self.non_resource_urls:
            document["nonResourceURLs"] = list(self.non_resource_urls)
        return document

    def compact_string(self) -> str:
        """``{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`` (escalation
        messages: ``rbacv1helpers.CompactString``)."""
        parts = []
        for label, values in (
            ("APIGroups", self.api_groups),
            ("Resources", self.resources),
            ("NonResourceURLs", self.non_resource_urls),
            ("ResourceNames", self.resource_names),
            ("Verbs", self.verbs),
        ):
            if values:
                parts.append(f"{label}:{go_string_list(values)}")
        return "{" + ", ".join(parts) + "}"


def go_string_list(values: Iterable[str]) -> str:
    """A string slice as Go's ``%q`` prints it: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(value) for value in values) + "]"


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def rules_of(obj: dict[str, Any]) -> tuple[PolicyRule, ...]:
    """The rules of a stored Role or ClusterRole."""
    rules = obj.get("rules")
    if not isinstance(rules, list):
        return ()
    return tuple(PolicyRule.from_json(rule) for rule in rules)


def rule_allows(attributes: Attributes, rule: PolicyRule) -> bool:
    """Whether ``rule`` grants the request (``rbac.RuleAllows``)."""
    if not _has_or_all(rule.verbs, attributes.verb):
        return False
    if not attributes.resource_request:
        return any(url_matches(url, attributes.path) for url in rule.non_resource_urls)
    combined = attributes.resource
    if attributes.subresource:
        combined = f"{attributes.resource}/{attributes.subresource}"
    return (
        _has_or_all(rule.api_groups, attributes.api_group)
        and _resource_matches(rule.resources, combined, attributes.subresource)
        and (not rule.resource_names or attributes.name in rule.resource_names)
    )


def _has_or_all(values: Sequence[str], wanted: str) -> bool:
    return ALL in values or wanted in values


def _resource_matches(resources: Sequence[str], combined: str, subresource: str) -> bool:
    for resource in resources:
        if resource in (ALL, combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def url_matches(rule_url: str, path: str) -> bool:
    """Whether a rule's non-resource URL matches ``path`` (``*`` alone, exact, or prefix*)."""
    if rule_url in (ALL, path):
        return True
    return rule_url.endswith("*") and path.startswith(rule_url.rstrip("*"))


# -- coverage (escalation prevention) ---------------------------------------------------


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """``rule`` as single permissions: one verb on one group/resource(/name), or one URL."""
    atoms: list[PolicyRule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    atoms.extend(
                        PolicyRule((verb,), (group,), (resource,), (name,))
                        for name in rule.resource_names
                    )
                else:
                    atoms.append(PolicyRule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        atoms.extend(PolicyRule((verb,), non_resource_urls=(url,)) for verb in rule.verbs)
    return atoms


def _rule_covers(owner: PolicyRule, atom: PolicyRule) -> bool:
    if not (ALL in owner.verbs or set(atom.verbs) <= set(owner.verbs)):
        return False
    if not (ALL in owner.api_groups or set(atom.api_groups) <= set(owner.api_groups)):
        return False
    if not _resources_cover(owner.resources, atom.resources):
        return False
    for url in atom.non_resource_urls:
        if not any(_url_covers(mine, url) for mine in owner.non_resource_urls):
            return False
    if not atom.resource_names:
        return not owner.resource_names
    return not owner.resource_names or set(atom.resource_names) <= set(owner.resource_names)


def _resources_cover(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    if ALL in owned:
        return True
    for resource in wanted:
        if resource in owned:
            continue
        if "/" not in resource:
            return False
        if "*/" + resource.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def covers(owned: Sequence[PolicyRule], wanted: Iterable[PolicyRule]) -> list[PolicyRule]:
    """The single permissions of ``wanted`` that no rule of ``owned`` holds (empty: covered)."""
    missing: list[PolicyRule] = []
    for rule in wanted:
        for atom in breakdown(rule):
            if not any(_rule_covers(owner, atom) for owner in owned):
                missing.append(atom)
    return missing


def compact(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """Single permissions on the same group/resource(/name) merged into one rule per resource
    (``validation.CompactRules``)."""
    merged: dict[tuple[str, str, str], PolicyRule] = {}
    others: list[PolicyRule] = []
    for rule in rules:
        simple = (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and len(rule.resource_names) <= 1
            and not rule.non_resource_urls
        )
        if not simple:
            others.append(rule)
            continue
        key = (rule.api_groups[0], rule.resources[0], "".join(rule.resource_names))
        existing = merged.get(key)
        if existing is None:
            merged[key] = rule
        else:
            merged[key] = PolicyRule(
                existing.verbs + rule.verbs,
                existing.api_groups,
                existing.resources,
                existing.resource_names,
            )
    return others + list(merged.values())
