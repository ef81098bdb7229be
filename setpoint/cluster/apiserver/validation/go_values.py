"""Bad values printed as kube-apiserver prints them: Go's ``%#v`` of the typed API structs.

``field.Invalid`` dereferences pointers and prints a value that is not a string, number or
``fmt.Stringer`` with ``%#v``, so a selector shows as
``v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:...}`` and
template labels as ``map[string]string{"app":"web"}``. These render the decoded JSON that way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from setpoint.api.go_format import GoValue, go_quote


def _strings(values: object) -> str:
    if not isinstance(values, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def string_map(value: object) -> GoValue:
    """A ``map[string]string`` (labels, a selector's matchLabels)."""
    if not isinstance(value, Mapping):
        return GoValue("map[string]string(nil)")
    entries = ", ".join(f"{go_quote(str(k))}:{go_quote(str(value[k]))}" for k in sorted(value))
    return GoValue("map[string]string{" + entries + "}")


def _requirement(requirement: object) -> str:
    entry: Mapping[str, Any] = requirement if isinstance(requirement, Mapping) else {}
    return (
        f"v1.LabelSelectorRequirement{{Key:{go_quote(str(entry.get('key') or ''))}, "
        f"Operator:{go_quote(str(entry.get('operator') or ''))}, "
        f"Values:{_strings(entry.get('values'))}}}"
    )


def label_selector(selector: object) -> object:
    """A ``metav1.LabelSelector`` (None for a nil pointer)."""
    if not isinstance(selector, Mapping):
        return None
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        shown = "[]v1.LabelSelectorRequirement{" + ", ".join(map(_requirement, expressions)) + "}"
    else:
        shown = "[]v1.LabelSelectorRequirement(nil)"
    return GoValue(
        f"v1.LabelSelector{{MatchLabels:{string_map(selector.get('matchLabels')).text}, "
        f"MatchExpressions:{shown}}}"
    )


def int_or_string(value: object) -> GoValue:
    """An ``intstr.IntOrString``."""
    if isinstance(value, str):
        return GoValue(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")
    number = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return GoValue(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')


def role_ref(ref: object) -> GoValue:
    """An ``rbac.RoleRef`` (the internal type, as the RBAC validation prints it)."""
    entry: Mapping[str, Any] = ref if isinstance(ref, Mapping) else {}
    return GoValue(
        f"rbac.RoleRef{{APIGroup:{go_quote(str(entry.get('apiGroup') or ''))}, "
        f"Kind:{go_quote(str(entry.get('kind') or ''))}, "
        f"Name:{go_quote(str(entry.get('name') or ''))}}}"
    )


def service_port_key(port: int, protocol: str) -> GoValue:
    """The ``core.ServicePort{Protocol, Port}`` key of a duplicate Service port."""
    return GoValue(
        f'core.ServicePort{{Name:"", Protocol:{go_quote(protocol)}, '
        f"AppProtocol:(*string)(nil), Port:{port}, "
        f'TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}'
    )
