"""Roles, ClusterRoles and their bindings (``pkg/apis/rbac/validation``, 1.32): rules name
verbs and, for resources, API groups and resources; bindings refer to a Role or ClusterRole of
``rbac.authorization.k8s.io`` that cannot change, and name valid subjects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.go_format import go_string_slice
from setpoint.api.names import validate_dns1123_subdomain
from setpoint.cluster.apiserver.validation import go_values
from setpoint.cluster.apiserver.validation.object_meta import validate_path_segment_name
from setpoint.cluster.apiserver.validation.selectors import validate_label_selector

RBAC_GROUP: Final = "rbac.authorization.k8s.io"


def _rule_errors(rule: Mapping[str, Any], namespaced: bool, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not rule.get("verbs"):
        errors.append(fe.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs")
    if urls:
        shown = go_string_slice(urls if isinstance(urls, list) else [])
        if namespaced:
            errors.append(
                fe.invalid(
                    f"{path}.nonResourceURLs",
                    shown,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errors.append(
                fe.invalid(
                    f"{path}.nonResourceURLs",
                    shown,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errors
    if not rule.get("apiGroups"):
        errors.append(
            fe.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not rule.get("resources"):
        errors.append(
            fe.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return errors


def _rules(obj: Mapping[str, Any], namespaced: bool) -> list[FieldError]:
    rules = obj.get("rules")
    errors: list[FieldError] = []
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(rule, Mapping):
            errors += _rule_errors(rule, namespaced, f"rules[{index}]")
    return errors


def validate_role(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateRole``."""
    return _rules(obj, namespaced=True)


def validate_cluster_role(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateClusterRole``: rules, and the aggregation rule's selectors."""
    errors = _rules(obj, namespaced=False)
    aggregation = obj.get("aggregationRule")
    if isinstance(aggregation, Mapping):
        selectors = aggregation.get("clusterRoleSelectors")
        path = "aggregationRule.clusterRoleSelectors"
        if not selectors:
            errors.append(
                fe.required(
                    path, "at least one clusterRoleSelector required if aggregationRule is non-nil"
                )
            )
        for index, selector in enumerate(selectors if isinstance(selectors, list) else []):
            errors += validate_label_selector(selector, f"{path}[{index}]")
    return errors


def _subject_errors(subject: Mapping[str, Any], namespaced: bool, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    name = subject.get("name") or ""
    if not name:
        errors.append(fe.required(f"{path}.name", ""))
    kind = subject.get("kind")
    group = subject.get("apiGroup") or ""
    if kind == "ServiceAccount":
        if name:
            errors.extend(
                fe.invalid(f"{path}.name", name, p) for p in validate_dns1123_subdomain(name)
            )
        if group:
            errors.append(fe.not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            errors.append(fe.required(f"{path}.namespace", ""))
    elif kind in ("User", "Group"):
        if group != RBAC_GROUP:
            errors.append(fe.not_supported(f"{path}.apiGroup", group, [RBAC_GROUP]))
    else:
        errors.append(
            fe.not_supported(f"{path}.kind", kind or "", ["ServiceAccount", "User", "Group"])
        )
    return errors


def _binding(
    obj: Mapping[str, Any], old: Mapping[str, Any] | None, namespaced: bool
) -> list[FieldError]:
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, Mapping) else {}
    errors: list[FieldError] = []
    if ref.get("apiGroup") != RBAC_GROUP:
        errors.append(fe.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [RBAC_GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        errors.append(fe.not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = ref.get("name") or ""
    if not name:
        errors.append(fe.required("roleRef.name", ""))
    else:
        errors.extend(
            fe.invalid("roleRef.name", name, p) for p in validate_path_segment_name(str(name))
        )
    subjects = obj.get("subjects")
    for index, subject in enumerate(subjects if isinstance(subjects, list) else []):
        if isinstance(subject, Mapping):
            errors += _subject_errors(subject, namespaced, f"subjects[{index}]")
    if old is not None:
        old_ref = old.get("roleRef")
        old_ref = old_ref if isinstance(old_ref, Mapping) else {}
        keys = ("apiGroup", "kind", "name")
        if any(ref.get(k) != old_ref.get(k) for k in keys):
            errors.append(fe.invalid("roleRef", go_values.role_ref(ref), "cannot change roleRef"))
    return errors


def validate_role_binding(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateRoleBinding`` / ``ValidateRoleBindingUpdate``."""
    return _binding(obj, old, namespaced=True)


def validate_cluster_role_binding(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> list[FieldError]:
    """``ValidateClusterRoleBinding`` / ``ValidateClusterRoleBindingUpdate``."""
    return _binding(obj, old, namespaced=False)
