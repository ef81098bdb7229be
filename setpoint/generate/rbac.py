"""The least-privilege Role of an operator, inferred from its reconcilers.

What each reconciler implies (kubebuilder's markers, written out by hand there):

- its primary kind (``for_``): read (get, list, watch) and update/patch (finalizers, labels),
  its ``/status`` (get, update, patch) and its ``/finalizers`` (update: needed to set
  ``blockOwnerDeletion`` on children where the OwnerReferencesPermissionEnforcement admission
  plugin runs);
- each owned kind: read and create, update, patch, delete;
- each watched kind: read only;
- Events (core and ``events.k8s.io``): create and patch, for the event recorder;
- leader election: a namespaced Role on Leases (get, create, update) in the operator's
  namespace.

Declared :class:`~setpoint.api.rbac.Permission` rules are added as they are; a reconciler
registered with ``infer_permissions=False`` gets only those (and Events). Nothing is a
wildcard; secrets, RBAC writes and webhook configurations appear only when a reconciler names
them, and then :func:`role_rules` reports why, for a comment in the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from setpoint.api.rbac import READ_VERBS, SENSITIVE_RESOURCES
from setpoint.api.resources.custom_resource import CustomResource, default_plural
from setpoint.manager.operator import ReconcilerDeclaration

__all__ = ["Rule", "leader_election_rules", "ordered_verbs", "plural_of", "role_rules"]

# Built-in kinds whose plural is not the regular one.
_IRREGULAR_PLURALS = {"Endpoints": "endpoints"}
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


@dataclass(frozen=True)
class Rule:
    """One merged rule of the generated Role, with the reasons for sensitive grants."""

    api_group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def as_manifest(self) -> dict[str, Any]:
        rule: dict[str, Any] = {"apiGroups": [self.api_group], "resources": list(self.resources)}
        if self.resource_names:
            rule["resourceNames"] = list(self.resource_names)
        rule["verbs"] = list(self.verbs)
        return rule


def plural_of(api_version: str, kind: str, declaration: ReconcilerDeclaration) -> str:
    """The resource name of a kind: the model's declared plural, else Kubernetes' rule."""
    model = declaration.models.get((api_version, kind))
    if (
        isinstance(model, type)
        and issubclass(model, CustomResource)
        and model.__resource__ is not None
    ):
        return model.__resource__.plural
    return _IRREGULAR_PLURALS.get(kind, default_plural(kind))


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def ordered_verbs(verbs: Iterable[str]) -> tuple[str, ...]:
    """Verbs in the usual Kubernetes order (read, then write), others sorted after."""
    unique = set(verbs)
    known = [verb for verb in _VERB_ORDER if verb in unique]
    return (*known, *sorted(unique - set(_VERB_ORDER)))


def _infer(
    declaration: ReconcilerDeclaration,
    grant: Callable[[str, str, Iterable[str]], None],
    notes: dict[tuple[str, str, tuple[str, ...]], list[str]],
) -> None:
    """Grant what a reconciler's ``for_``, ``owns`` and ``watches`` imply."""
    api_version, kind = declaration.for_
    group, plural = _group_of(api_version), plural_of(api_version, kind, declaration)
    grant(group, plural, (*READ_VERBS, "update", "patch"))
    grant(group, f"{plural}/status", ("get", "update", "patch"))
    grant(group, f"{plural}/finalizers", ("update",))
    for api_version, kind in declaration.owns:
        group, plural = _group_of(api_version), plural_of(api_version, kind, declaration)
        grant(group, plural, (*READ_VERBS, "create", "update", "patch", "delete"))
        if (group, plural) in SENSITIVE_RESOURCES:
            notes.setdefault((group, plural, ()), []).append(
                f"declared: reconciler {declaration.name!r} owns {kind}"
            )
    for api_version, kind in declaration.watches:
        group, plural = _group_of(api_version), plural_of(api_version, kind, declaration)
        grant(group, plural, READ_VERBS)
        if (group, plural) == ("", "secrets"):
            notes.setdefault((group, plural, ()), []).append(
                f"declared: reconciler {declaration.name!r} watches {kind}"
            )


def role_rules(declarations: Sequence[ReconcilerDeclaration]) -> list[Rule]:
    """The merged, sorted rules every reconciler of an operator needs."""
    grants: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    notes: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}

    def grant(group: str, resource: str, verbs: Iterable[str], names: tuple[str, ...] = ()) -> None:
        grants.setdefault((group, resource, names), set()).update(verbs)

    for declaration in declarations:
        if declaration.infer_permissions:
            _infer(declaration, grant, notes)
        for permission in declaration.permissions:
            key = (permission.api_group, permission.resource, tuple(permission.resource_names))
            grant(*key[:2], permission.verbs, key[2])
            if permission.sensitive:
                reason = f": {permission.reason}" if permission.reason else ""
                notes.setdefault(key, []).append(
                    f"declared: reconciler {declaration.name!r} asks for "
                    f"{'/'.join(permission.verbs)} on {permission.resource}{reason}"
                )
    if declarations:
        grant("", "events", ("create", "patch"))
        grant("events.k8s.io", "events", ("create", "patch"))

    # Merge resources of one group that need exactly the same verbs (controller-gen's shape).
    merged: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    merged_notes: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for (group, resource, names), verbs in grants.items():
        merged_key = (group, ordered_verbs(verbs), names)
        merged.setdefault(merged_key, []).append(resource)
        merged_notes.setdefault(merged_key, []).extend(notes.get((group, resource, names), []))
    rules = [
        Rule(group, tuple(sorted(resources)), verbs, names, tuple(merged_notes[merged_key]))
        for merged_key, resources in merged.items()
        for group, verbs, names in [merged_key]
    ]
    return sorted(rules, key=lambda rule: (rule.api_group, rule.resources, rule.verbs))


def leader_election_rules() -> list[Rule]:
    """What Lease leader election needs in the operator's namespace (and its Events)."""
    return [
        Rule("", ("events",), ("create", "patch")),
        Rule("coordination.k8s.io", ("leases",), ("get", "create", "update")),
    ]
