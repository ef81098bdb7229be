"""Walking a custom resource with its schema's CEL rules, as upstream's CEL validator does.

Only the schema nodes that carry rules, or lead to ones that do, are kept. Values are paired
with their old values by property name, by map key, and for ``x-kubernetes-list-type: map``
lists by the list-map keys; other list items have no ``oldSelf`` (upstream: not correlatable),
so their transition rules are skipped. A value equal to its old value skips the rules that do
not use ``oldSelf`` (upstream ratchets those errors into warnings).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema.cel_rules import (
    CompiledRule,
    RuleCompileError,
    compile_rule,
    evaluate,
)


@dataclass(slots=True, eq=False)
class CelNode:
    """One schema node on the way to CEL rules."""

    type_name: str = ""
    rules: list[CompiledRule | str] = field(default_factory=list)  # str: a compile error
    properties: dict[str, CelNode] = field(default_factory=dict)
    additional: CelNode | None = None
    items: CelNode | None = None
    map_keys: tuple[str, ...] = ()


def build(schema: Any) -> CelNode | None:
    """The rule-bearing part of ``schema`` (None when it has no rules at all)."""
    if not isinstance(schema, Mapping):
        return None
    node = CelNode(type_name=str(schema.get("type") or ""))
    for rule in schema.get("x-kubernetes-validations") or []:
        if isinstance(rule, Mapping) and str(rule.get("rule") or "").strip():
            try:
                node.rules.append(compile_rule(rule))
            except RuleCompileError as exc:
                node.rules.append(str(exc))
    for name, sub in (schema.get("properties") or {}).items():
        child = build(sub)
        if child is not None:
            node.properties[name] = child
    node.additional = build(schema.get("additionalProperties"))
    node.items = build(schema.get("items"))
    if schema.get("x-kubernetes-list-type") == "map":
        node.map_keys = tuple(str(k) for k in schema.get("x-kubernetes-list-map-keys") or ())
    if node.rules or node.properties or node.additional or node.items:
        return node
    return None


_NO_OLD = object()
#: Wall-clock budget of all rules of one write. Upstream counts an abstract cost (10,000,000
#: per request); the iteration cap bounds one rule, this bounds a rule run once per item of
#: a long list. Past it: upstream's "running out of cost budget" error, no further rules.
REQUEST_BUDGET_SECONDS = 0.5
OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


class CelValidator:
    """Evaluates every rule of a schema on an object (and its old version on update)."""

    def __init__(self, root: CelNode) -> None:
        self.root = root
        self._deadline = 0.0

    def validate(self, obj: Any, old: Any = None) -> list[FieldError]:
        """Every failed rule as a field error; ``old`` is None on create."""
        errors: list[FieldError] = []
        self._deadline = time.monotonic() + REQUEST_BUDGET_SECONDS
        try:
            self._walk(self.root, obj, _NO_OLD if old is None else old, "", errors)
        except _Stop:
            pass
        return errors

    def _walk(
        self, node: CelNode, value: Any, old: Any, path: str, errors: list[FieldError]
    ) -> None:
        has_old = old is not _NO_OLD
        unchanged = has_old and value == old
        for compiled in node.rules:
            if isinstance(compiled, str):
                errors.append(fe.invalid(path or "<nil>", node.type_name, f"rule {compiled}"))
                continue
            if compiled.uses_old_self and not has_old and not compiled.optional_old_self:
                continue  # a transition rule: only with a value to compare to
            if unchanged and not compiled.uses_old_self:
                continue
            if time.monotonic() > self._deadline:
                errors.append(fe.invalid(path or "<nil>", node.type_name, OUT_OF_BUDGET))
                raise _Stop
            outcome = evaluate(
                compiled, path, value, old if has_old else None, has_old, node.type_name
            )
            if outcome.error is not None:
                errors.append(outcome.error)
            if outcome.stop:
                raise _Stop
        if isinstance(value, dict):
            old_map = old if has_old and isinstance(old, dict) else {}
            for name, child in node.properties.items():
                if name in value:
                    self._walk(
                        child, value[name], old_map.get(name, _NO_OLD), _child(path, name), errors
                    )
            if node.additional is not None:
                for key, item in value.items():
                    if key not in node.properties:
                        self._walk(
                            node.additional,
                            item,
                            old_map.get(key, _NO_OLD),
                            f"{path}[{key}]",
                            errors,
                        )
        elif isinstance(value, list) and node.items is not None:
            olds = self._old_items(node, value, old if has_old else None)
            for index, item in enumerate(value):
                self._walk(node.items, item, olds[index], f"{path}[{index}]", errors)

    @staticmethod
    def _old_items(node: CelNode, items: list[Any], old: Any) -> list[Any]:
        if not node.map_keys or not isinstance(old, list):
            return [_NO_OLD] * len(items)

        def key_of(item: Any) -> tuple[Any, ...] | None:
            if not isinstance(item, dict):
                return None
            return tuple(repr(item.get(k)) for k in node.map_keys)

        by_key = {key_of(item): item for item in old if key_of(item) is not None}
        return [by_key.get(key_of(item), _NO_OLD) for item in items]


class _Stop(Exception):
    """The evaluation budget ran out: no further rules run."""


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
