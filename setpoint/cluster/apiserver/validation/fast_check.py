"""A fast pre-check of built-in objects: proves an object clean, or defers to the full check.

The full built-in check (``validate_builtin``)
walks the schema with paths, messages, ratcheting and pruning, and costs a third of a create's
server time. Almost every object a client writes is valid and carries no unknown field, and for
those the full walk finds nothing. This walk answers only "clean" or "not sure": it accepts a
value only where the full check provably reports no error and prunes nothing, and answers "not
sure" for everything else (a null, an integral float, a constraint it does not model, an
unknown field...), so the caller then runs the full check. It never changes the object.

Each schema node is turned once into a :class:`_Plan` (cached by node identity; the built-in
schema nodes live as long as the process), so the per-request work is dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from setpoint.cluster.apiserver.schema.compiled import SchemaNode
from setpoint.cluster.apiserver.schema.quantities import QUANTITY_FORMAT, canonical_text
from setpoint.cluster.apiserver.schema.value_validation import KIND_OF_VALUE_TYPE

#: JSON kind of each exact Python type msgspec decodes into; null and subclasses are
#: "not sure" (the full check treats them specially).
_KIND_OF_TYPE: Final = KIND_OF_VALUE_TYPE
_CONTAINERS: Final = (dict, list)


class _Plan:
    """What the fast walk checks at one schema node (``supported`` False: always "not sure")."""

    __slots__ = (
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "extra",
        "extra_any",
        "format_check",
        "items",
        "kinds",
        "maximum",
        "minimum",
        "node",
        "properties",
        "required",
        "supported",
    )

    def __init__(self, node: SchemaNode) -> None:
        self.node = node  # keeps the node alive, so its id() is never reused
        self.supported = _supported(node)
        self.kinds = frozenset(node.types)
        self.format_check: Callable[[str], bool] | None = (
            _is_canonical_quantity if node.format == QUANTITY_FORMAT else node.format_check
        )
        self.enum: frozenset[str] | None = frozenset(node.enum) if node.enum is not None else None
        self.minimum = node.minimum
        self.maximum = node.maximum
        self.exclusive_minimum = node.exclusive_minimum
        self.exclusive_maximum = node.exclusive_maximum
        self.required = node.required
        self.properties: dict[str, _Plan] = {}
        self.items: _Plan | None = None
        self.extra: _Plan | None = None
        #: ``additionalProperties: true``: any key is kept, but nested values would be pruned.
        self.extra_any = node.additional_properties is True


def _is_canonical_quantity(text: str) -> bool:
    """A quantity already in the form it is stored in (else the full pass rewrites it)."""
    return canonical_text(text) == text


def _supported(node: SchemaNode) -> bool:
    """Whether the fast walk models every constraint of ``node`` (else it defers)."""
    if node.enum is not None and not all(isinstance(entry, str) for entry in node.enum):
        return False
    if node.format and node.format_check is None:
        return False
    return not (
        node.multiple_of is not None
        or node.min_length is not None
        or node.max_length is not None
        or node.pattern_re is not None
        or node.pattern
        or node.min_items is not None
        or node.max_items is not None
        or node.unique_items
        or node.min_properties is not None
        or node.max_properties is not None
        or node.all_of
        or node.any_of
        or node.one_of
        or node.not_ is not None
        or node.preserve_unknown_fields
        or node.embedded_resource
        or node.additional_properties is False
    )


class FastChecker:
    """Plans of schema nodes, built on first use; :meth:`clean` runs the fast walk."""

    def __init__(self) -> None:
        self._plans: dict[int, _Plan] = {}

    def plan(self, node: SchemaNode) -> _Plan:
        """The plan of ``node`` (recursive schemas share plans, as they share nodes)."""
        found = self._plans.get(id(node))
        if found is not None:
            return found
        plan = _Plan(node)
        self._plans[id(node)] = plan  # registered before its children: schemas recurse
        plan.properties = {key: self.plan(child) for key, child in node.properties.items()}
        if node.items is not None:
            plan.items = self.plan(node.items)
        if isinstance(node.additional_properties, SchemaNode):
            plan.extra = self.plan(node.additional_properties)
        return plan

    def clean(self, node: SchemaNode, obj: dict[str, Any], *, skip: str = "") -> bool:
        """True only if the full check of ``obj`` against ``node`` finds no error and no unknown
        field; the root key ``skip`` (say ``metadata``) is taken as present and valid."""
        plan = self.plan(node)
        if not plan.supported or (plan.kinds and "object" not in plan.kinds):
            return False
        for name in plan.required:
            if name not in obj:
                return False
        for key, value in obj.items():
            if key == skip:
                skipped = plan.properties.get(key)
                if skipped is None or skipped.required or not skipped.supported:
                    return False
                continue
            child = plan.properties.get(key)
            if child is None:
                child = plan.extra
                if child is None:
                    if not plan.extra_any or isinstance(value, _CONTAINERS):
                        return False
                    continue
            if not _clean(child, value):
                return False
        return True


def _clean(plan: _Plan, value: Any) -> bool:
    if not plan.supported:
        return False
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is None:
        return False  # null, or a type the full check treats specially
    if plan.kinds and kind not in plan.kinds:
        return False
    if plan.enum is not None and (kind != "string" or value not in plan.enum):
        return False
    if kind == "string":
        check = plan.format_check
        return check is None or bool(check(value))
    if plan.format_check is not None:
        return False  # a formatted schema holding a non-string: let the full check decide
    if kind == "object":
        for name in plan.required:
            if name not in value:
                return False
        properties = plan.properties
        for key, item in value.items():
            child = properties.get(key)
            if child is None:
                child = plan.extra
                if child is None:
                    if not plan.extra_any or isinstance(item, _CONTAINERS):
                        return False
                    continue
            if not _clean(child, item):
                return False
        return True
    if kind == "array":
        items = plan.items
        if items is None:
            return not any(isinstance(item, _CONTAINERS) for item in value)
        return all(_clean(items, item) for item in value)
    if kind in ("integer", "number"):
        return _in_bounds(plan, value)
    return True


def _in_bounds(plan: _Plan, value: float) -> bool:
    low = plan.minimum
    if low is not None and (value < low or (plan.exclusive_minimum and value == low)):
        return False
    high = plan.maximum
    return high is None or not (value > high or (plan.exclusive_maximum and value == high))
