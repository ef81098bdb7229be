"""Tables of the ``rbac.authorization.k8s.io`` group: role bindings and cluster role bindings
(roles and cluster roles have no printer upstream and get the default Name / Created At)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    NAME_COLUMN,
    Column,
    Printer,
    items,
    mapping,
    name_and_age,
    text,
)


def _binding_cells(binding: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(binding, now)
    role = mapping(binding, "roleRef")
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for subject in items(binding, "subjects"):
        if not isinstance(subject, dict):
            continue
        kind = subject.get("kind")
        if kind == "User":
            users.append(text(subject.get("name")))
        elif kind == "Group":
            groups.append(text(subject.get("name")))
        elif kind == "ServiceAccount":
            accounts.append(f"{text(subject.get('namespace'))}/{text(subject.get('name'))}")
    return [
        name,
        f"{text(role.get('kind'))}/{text(role.get('name'))}",
        age,
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


def _binding_printer(noun: str, kind: str) -> Printer:
    return Printer(
        (
            NAME_COLUMN,
            Column("Role", doc=f"rbac.v1.{kind}/roleRef"),
            AGE_COLUMN,
            Column("Users", priority=1, description=f"Users in the {noun}"),
            Column("Groups", priority=1, description=f"Groups in the {noun}"),
            Column("ServiceAccounts", priority=1, description=f"ServiceAccounts in the {noun}"),
        ),
        _binding_cells,
    )


RBAC_PRINTERS: Final = {
    "rolebindings": _binding_printer("roleBinding", "RoleBinding"),
    "clusterrolebindings": _binding_printer("clusterRoleBinding", "ClusterRoleBinding"),
}
