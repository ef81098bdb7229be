"""The least RBAC that covers what a user was seen doing: ``setpoint rbac suggest``.

The input is an audit log (``audit.k8s.io/v1`` Events, one JSON object per line, as the local
cluster writes with ``--audit-log`` and kube-apiserver with ``--audit-log-path``). Every request
the user made counts, allowed or not: a denied request is exactly the permission a test run
shows to be missing. Requests are grouped by where they apply — a namespace (a Role there) or
the cluster (a ClusterRole: cluster-scoped resources, lists and watches across all namespaces,
non-resource URLs) — then by API group and resource (with its subresource), and resources that
need the same verbs are merged into one rule, as controller-gen merges its markers. Object
names are left out: an operator's reads and writes are rarely about fixed names. Discovery and
health paths (``/api``, ``/apis/...``, ``/version``, ``/healthz`` ...) are left out too: the
default ``system:discovery`` and ``system:public-info-viewer`` roles grant them to everyone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from setpoint.generate.rbac import Rule, ordered_verbs

__all__ = [
    "AuditFormatError",
    "Observed",
    "Suggestion",
    "default_role_name",
    "missing_rules",
    "observe_audit_events",
    "read_audit_log",
    "suggest",
    "unused_rules",
]

_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


class AuditFormatError(ValueError):
    """A line of the audit log is not an ``audit.k8s.io`` Event."""


def read_audit_log(path: Path) -> Iterator[dict[str, Any]]:
    """The Events of a JSON-lines audit log (blank lines skipped)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as error:
                raise AuditFormatError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(event, dict) or event.get("kind") != "Event":
                raise AuditFormatError(f"{path}:{number}: not an audit.k8s.io Event")
            yield event


@dataclass
class Observed:
    """Verbs seen, by scope (namespace, or "" for the cluster) and (group, resource)."""

    resources: dict[str, dict[tuple[str, str], set[str]]] = field(default_factory=dict)
    non_resource: dict[str, set[str]] = field(default_factory=dict)

    def add(self, namespace: str, group: str, resource: str, verb: str) -> None:
        scope = self.resources.setdefault(namespace, {})
        scope.setdefault((group, resource), set()).add(verb)


#: Non-resource URLs every authenticated user may GET (the default ClusterRoles
#: ``system:discovery`` and ``system:public-info-viewer``): discovery needs no suggestion.
_EVERYONE_EXACT = frozenset(
    {"/api", "/apis", "/healthz", "/livez", "/readyz", "/version", "/version/", "/openapi"}
)
_EVERYONE_PREFIXES = ("/api/", "/apis/", "/openapi/", "/healthz/", "/livez/", "/readyz/")


def _granted_to_everyone(path: str, verb: str) -> bool:
    return verb == "get" and (path in _EVERYONE_EXACT or path.startswith(_EVERYONE_PREFIXES))


def _acting_user(event: dict[str, Any]) -> str:
    impersonated = event.get("impersonatedUser") or {}
    user = impersonated or event.get("user") or {}
    return str(user.get("username", ""))


def observe_audit_events(events: Iterable[dict[str, Any]], username: str) -> Observed:
    """What ``username`` did (as itself or impersonated), one entry per request."""
    observed = Observed()
    seen: set[str] = set()
    for event in events:
        if _acting_user(event) != username:
            continue
        audit_id = str(event.get("auditID", ""))
        if audit_id and audit_id in seen:
            continue  # a request is logged at several stages
        seen.add(audit_id)
        verb = str(event.get("verb", ""))
        reference = event.get("objectRef")
        if not reference:
            path = str(event.get("requestURI", "")).split("?", 1)[0]
            if not _granted_to_everyone(path, verb):
                observed.non_resource.setdefault(path, set()).add(verb)
            continue
        resource = str(reference.get("resource", ""))
        if reference.get("subresource"):
            resource = f"{resource}/{reference['subresource']}"
        observed.add(
            str(reference.get("namespace") or ""),
            str(reference.get("apiGroup") or ""),
            resource,
            verb,
        )
    return observed


def _merged(grants: dict[tuple[str, str], set[str]]) -> list[Rule]:
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, resource), verbs in grants.items():
        merged.setdefault((group, ordered_verbs(verbs)), []).append(resource)
    rules = [
        Rule(group, tuple(sorted(resources)), verbs) for (group, verbs), resources in merged.items()
    ]
    return sorted(rules, key=lambda rule: (rule.api_group, rule.resources, rule.verbs))


def _subject(username: str) -> dict[str, str]:
    if username.startswith(_SERVICE_ACCOUNT_PREFIX):
        namespace, _, name = username.removeprefix(_SERVICE_ACCOUNT_PREFIX).partition(":")
        return {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": username}


@dataclass(frozen=True)
class Suggestion:
    """The suggested roles: one ClusterRole (maybe empty) and a Role per namespace."""

    username: str
    name: str
    cluster_rules: list[Rule]
    non_resource: dict[str, tuple[str, ...]]
    namespaced_rules: dict[str, list[Rule]]

    @property
    def empty(self) -> bool:
        """Nothing was observed for the user."""
        return not (self.cluster_rules or self.non_resource or self.namespaced_rules)

    def manifests(self) -> list[dict[str, Any]]:
        """ClusterRole + ClusterRoleBinding, then a Role + RoleBinding per namespace."""
        rbac = "rbac.authorization.k8s.io/v1"
        subject = _subject(self.username)
        documents: list[dict[str, Any]] = []
        if self.cluster_rules or self.non_resource:
            rules = [rule.as_manifest() for rule in self.cluster_rules]
            rules += [
                {"nonResourceURLs": [path], "verbs": list(verbs)}
                for path, verbs in sorted(self.non_resource.items())
            ]
            documents.append(
                {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": self.name},
                 "rules": rules}
            )  # fmt: skip
            documents.append(
                {
                    "apiVersion": rbac,
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": self.name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                "name": self.name},
                    "subjects": [subject],
                }
            )  # fmt: skip
        for namespace, namespace_rules in sorted(self.namespaced_rules.items()):
            metadata = {"name": self.name, "namespace": namespace}
            documents.append(
                {"apiVersion": rbac, "kind": "Role", "metadata": metadata,
                 "rules": [rule.as_manifest() for rule in namespace_rules]}
            )  # fmt: skip
            documents.append(
                {
                    "apiVersion": rbac,
                    "kind": "RoleBinding",
                    "metadata": dict(metadata),
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                "name": self.name},
                    "subjects": [subject],
                }
            )  # fmt: skip
        return documents


def default_role_name(username: str) -> str:
    """``suggested-<name>``: the service account's name, or the user's, made DNS-safe."""
    base = username.rpartition(":")[2] if username.startswith(_SERVICE_ACCOUNT_PREFIX) else username
    safe = "".join(char if char.isalnum() or char in "-." else "-" for char in base.lower())
    return f"suggested-{safe.strip('-.') or 'user'}"


def suggest(
    events: Iterable[dict[str, Any]],
    username: str,
    *,
    name: str | None = None,
    cluster_wide: bool = False,
) -> Suggestion:
    """The least roles covering ``username``'s requests in ``events``; ``cluster_wide`` puts
    every namespaced grant in the ClusterRole instead of per-namespace Roles."""
    observed = observe_audit_events(events, username)
    cluster: dict[tuple[str, str], set[str]] = dict(observed.resources.get("", {}))
    namespaced: dict[str, list[Rule]] = {}
    for namespace, grants in observed.resources.items():
        if not namespace:
            continue
        if cluster_wide:
            for key, verbs in grants.items():
                cluster.setdefault(key, set()).update(verbs)
        else:
            namespaced[namespace] = _merged(grants)
    return Suggestion(
        username=username,
        name=name or default_role_name(username),
        cluster_rules=_merged(cluster),
        non_resource={path: ordered_verbs(verbs) for path, verbs in observed.non_resource.items()},
        namespaced_rules=namespaced,
    )


def _grants(rules: Iterable[Rule]) -> set[tuple[str, str, str]]:
    return {
        (rule.api_group, resource, verb)
        for rule in rules
        for resource in rule.resources
        for verb in rule.verbs
    }


def missing_rules(granted: Iterable[Rule], suggestion: Suggestion) -> list[tuple[str, str, str]]:
    """(group, resource, verb) triples the suggestion needs and ``granted`` does not give
    (anywhere: a ClusterRole's grant covers every namespace); empty when ``granted`` covers it."""
    have = _grants(granted)
    need = _grants(suggestion.cluster_rules)
    for rules in suggestion.namespaced_rules.values():
        need |= _grants(rules)
    return sorted(need - have)


def unused_rules(granted: Iterable[Rule], suggestion: Suggestion) -> list[tuple[str, str, str]]:
    """(group, resource, verb) triples ``granted`` gives and the suggestion never needed: what
    a role grants beyond what was observed (a superset to justify, or to trim)."""
    need = _grants(suggestion.cluster_rules)
    for rules in suggestion.namespaced_rules.values():
        need |= _grants(rules)
    return sorted(_grants(granted) - need)
