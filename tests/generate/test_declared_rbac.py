"""`infer_permissions=False`: the Role grants what the reconciler declares, and nothing more."""

from __future__ import annotations

from typing import Any

import setpoint
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.generate.rbac import role_rules


def _rules(op: setpoint.Operator) -> dict[tuple[str, tuple[str, ...]], tuple[str, ...]]:
    return {(rule.api_group, rule.resources): rule.verbs for rule in role_rules(op.declarations)}


def test_a_reconciler_can_declare_a_role_narrower_than_the_inferred_one() -> None:
    op = setpoint.Operator("narrow")

    @op.reconciler(
        for_=kinds.ConfigMap,
        owns=[kinds.Pod],
        infer_permissions=False,
        permissions=[
            Permission("", "configmaps", ["get", "list", "watch"]),
            Permission("", "pods", ["get", "list", "watch", "create"]),
        ],
    )
    async def reconcile(ctx: Any, request: Any) -> None:
        return None

    assert _rules(op) == {
        ("", ("configmaps",)): ("get", "list", "watch"),
        ("", ("events",)): ("create", "patch"),
        ("", ("pods",)): ("get", "list", "watch", "create"),
        ("events.k8s.io", ("events",)): ("create", "patch"),
    }


def test_by_default_the_role_is_inferred_and_declarations_are_added() -> None:
    op = setpoint.Operator("inferred")

    @op.reconciler(
        for_=kinds.ConfigMap,
        owns=[kinds.Pod],
        permissions=[Permission("", "nodes", ["get"])],
    )
    async def reconcile(ctx: Any, request: Any) -> None:
        return None

    rules = _rules(op)
    assert rules[("", ("pods",))] == ("get", "list", "watch", "create", "update", "patch", "delete")
    assert rules[("", ("nodes",))] == ("get",)
    assert rules[("", ("configmaps",))] == ("get", "list", "watch", "update", "patch")
