"""Escalation prevention: nobody grants, through a role or a binding, a permission they lack.

Creating or updating a Role or ClusterRole needs every one of its rules to be held by the
caller already, or the ``escalate`` verb on that role; an ``aggregationRule`` needs
cluster-admin's power. Creating or updating a RoleBinding or ClusterRoleBinding needs the
referenced role's rules, or the ``bind`` verb on that role. Members of ``system:masters`` and
the server's own writes are exempt, and so are updates that only touch ownerReferences or
finalizers (the garbage collector's). Refusals are upstream's 403s, e.g.::

    clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "bob" (groups=["g"
    "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
    {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}

The check runs where upstream runs it: in the RBAC kinds' registry, before validation, for
every write path (create, update, patch, apply).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

from setpoint.api.field_errors import go_quote
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.authorization.authorizers import (
    EVERYTHING,
    Authorizer,
    missing_role,
)
from setpoint.cluster.apiserver.auth.authorization.rbac_index import RBAC_GROUP, RBACIndex
from setpoint.cluster.apiserver.auth.authorization.rules import (
    PolicyRule,
    compact,
    covers,
    go_string_list,
    rules_of,
)
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo
from setpoint.cluster.apiserver.auth.request_user import acting_user
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

ROLE_RESOURCES: Final = frozenset({"roles", "clusterroles"})
BINDING_RESOURCES: Final = frozenset({"rolebindings", "clusterrolebindings"})
AGGREGATION_MESSAGE: Final = "must have cluster-admin privileges to use the aggregationRule"


class RBACBehaviour(KindBehaviour):
    """Roles, ClusterRoles and their bindings: the default rules plus escalation checks."""

    def __init__(
        self,
        validator: BuiltinValidator | None,
        authorizer: Callable[[], Authorizer],
        index: RBACIndex,
    ) -> None:
        super().__init__(validator)
        self._authorizer = authorizer
        self._index = index

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        self._check(resource, obj, None)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        super().prepare_update(resource, new, old)
        self._check(resource, new, old)

    def _check(
        self, resource: ServedResource, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        user = acting_user.get()
        if user is None or PRIVILEGED_GROUP in user.groups:
            return
        if old is not None and _only_gc_fields_changed(obj, old):
            return
        authorizer = self._authorizer()
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name") or "")
        namespace = str(metadata.get("namespace") or "") if resource.namespaced else ""
        if resource.plural in ROLE_RESOURCES:
            escalate = Attributes(
                user, "escalate", True, namespace, RBAC_GROUP, "*", resource.plural, name=name
            )
            if authorizer.authorize(escalate).allowed:
                return
            _confirm_no_escalation(authorizer, user, namespace, rules_of(obj), resource, name)
            aggregated = isinstance(obj.get("aggregationRule"), dict) or (
                old is not None and isinstance(old.get("aggregationRule"), dict)
            )
            if resource.plural == "clusterroles" and aggregated:
                owned = authorizer.rules_for(user, namespace)
                if covers(owned.rules, EVERYTHING):  # something missing: not cluster-admin
                    raise status_errors.forbidden(
                        resource.group, resource.plural, name, AGGREGATION_MESSAGE
                    )
            return
        if resource.plural in BINDING_RESOURCES:
            ref_value = obj.get("roleRef")
            ref: dict[str, Any] = ref_value if isinstance(ref_value, dict) else {}
            role_kind = str(ref.get("kind") or "")
            role_name = str(ref.get("name") or "")
            bind = Attributes(
                user,
                "bind",
                True,
                namespace,
                RBAC_GROUP,
                "*",
                "clusterroles" if role_kind == "ClusterRole" else "roles",
                name=role_name,
            )
            if authorizer.authorize(bind).allowed:
                return
            rules = self._index.role_rules(role_kind, role_name, namespace)
            if rules is None:
                raise status_errors.forbidden(
                    resource.group, resource.plural, name, missing_role(role_kind, role_name)
                )
            _confirm_no_escalation(authorizer, user, namespace, rules, resource, name)


def _confirm_no_escalation(
    authorizer: Authorizer,
    user: UserInfo,
    namespace: str,
    rules: tuple[PolicyRule, ...],
    resource: ServedResource,
    name: str,
) -> None:
    """Raise 403 unless ``user`` holds every permission of ``rules`` (``ConfirmNoEscalation``)."""
    owned = authorizer.rules_for(user, namespace)
    missing = covers(owned.rules, rules)
    if not missing:
        return
    lines = sorted({rule.compact_string() for rule in compact(missing)})
    message = (
        f"user {go_quote(user.username)} (groups={go_string_list(user.groups)}) is attempting "
        "to grant RBAC permissions not currently held:\n" + "\n".join(lines)
    )
    if owned.errors:
        joined = owned.errors[0] if len(owned.errors) == 1 else "[" + ", ".join(owned.errors) + "]"
        message += f"; resolution errors: [{joined}]"
    raise status_errors.forbidden(resource.group, resource.plural, name, message)


def _only_gc_fields_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether only ownerReferences and finalizers differ (``IsOnlyMutatingGCFields``)."""
    stripped_new = copy.deepcopy(new)
    stripped_old = copy.deepcopy(old)
    for obj in (stripped_new, stripped_old):
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            for key in ("ownerReferences", "finalizers", "managedFields", "resourceVersion"):
                metadata.pop(key, None)
    return stripped_new == stripped_old
