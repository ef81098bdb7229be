"""The parts of a controller declaration the runtime needs, read and checked once.

A ``CompositeController`` or ``DecoratorController`` object (or its Python declaration) is
turned into these dataclasses when its controller starts; a field that cannot work (an unknown
update method, a malformed selector, a bad duration) fails the start with one line naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from setpoint.api.gvk import ResourceInfo
from setpoint.api.selectors import LabelSelector

__all__ = [
    "UPDATE_METHODS",
    "ChildType",
    "ConditionCheck",
    "annotation_selector_matches",
]

#: Metacontroller's ``updateStrategy.method`` values (empty means OnDelete).
UPDATE_METHODS = ("OnDelete", "Recreate", "InPlace", "RollingRecreate", "RollingInPlace")


@dataclass(frozen=True)
class ConditionCheck:
    """One of ``statusChecks.conditions``: the child must have this condition (``status`` and
    ``reason`` only when given) to count as healthy during a rolling update."""

    type: str
    status: str | None = None
    reason: str | None = None

    def failure(self, child: Mapping[str, Any]) -> str | None:
        """Why ``child`` fails this check (Metacontroller's words), or None when it passes."""
        status = child.get("status")
        conditions = status.get("conditions") if isinstance(status, Mapping) else None
        for condition in conditions if isinstance(conditions, list) else []:
            if not isinstance(condition, Mapping) or condition.get("type") != self.type:
                continue
            if self.status is not None and condition.get("status") != self.status:
                return (
                    f"{_quoted(self.type)} condition status is "
                    f"{_quoted(condition.get('status'))} (want {_quoted(self.status)})"
                )
            if self.reason is not None and condition.get("reason") != self.reason:
                return (
                    f"{_quoted(self.type)} condition reason is "
                    f"{_quoted(condition.get('reason'))} (want {_quoted(self.reason)})"
                )
            return None
        return f"required condition type missing: {_quoted(self.type)}"


def _quoted(value: Any) -> str:
    """A string as Go's ``%q`` writes it (a missing value is the empty string)."""
    return json.dumps("" if value is None else str(value), ensure_ascii=False)


@dataclass(frozen=True)
class ChildType:
    """A declared child (or attachment) type and how its objects are updated."""

    resource: ResourceInfo
    method: str = "OnDelete"
    status_checks: tuple[ConditionCheck, ...] = ()

    @property
    def api_version(self) -> str:
        return self.resource.api_version

    @property
    def kind(self) -> str:
        return self.resource.kind

    @property
    def rolling(self) -> bool:
        return self.method.startswith("Rolling")

    @property
    def group(self) -> str:
        return self.resource.group

    def status_check_failure(self, child: Mapping[str, Any]) -> str | None:
        """Why ``child`` fails the ``statusChecks`` (the first failing check), or None."""
        for check in self.status_checks:
            failure = check.failure(child)
            if failure is not None:
                return failure
        return None


def update_strategy(
    spec: Mapping[str, Any] | None, where: str
) -> tuple[str, tuple[ConditionCheck, ...]]:
    """``(method, status checks)`` of an ``updateStrategy``; raises ValueError naming ``where``."""
    spec = spec or {}
    method = spec.get("method") or "OnDelete"
    if method not in UPDATE_METHODS:
        raise ValueError(
            f"{where}.updateStrategy.method: Unsupported value: {method!r}: supported values: "
            + ", ".join(UPDATE_METHODS)
        )
    checks: list[ConditionCheck] = []
    for index, condition in enumerate(((spec.get("statusChecks") or {}).get("conditions")) or []):
        if not isinstance(condition, Mapping) or not condition.get("type"):
            raise ValueError(
                f"{where}.updateStrategy.statusChecks.conditions[{index}].type: Required value"
            )
        checks.append(
            ConditionCheck(str(condition["type"]), condition.get("status"), condition.get("reason"))
        )
    return str(method), tuple(checks)


def annotation_selector_matches(
    selector: Mapping[str, Any] | None, annotations: Mapping[str, str]
) -> bool:
    """Whether ``annotations`` satisfy an ``annotationSelector`` (``matchAnnotations``,
    ``matchExpressions``); no selector matches everything."""
    if not selector:
        return True
    as_labels = {
        "matchLabels": selector.get("matchAnnotations") or {},
        "matchExpressions": selector.get("matchExpressions") or [],
    }
    return LabelSelector.from_dict(as_labels).matches(annotations)


def selector_or_everything(selector: Mapping[str, Any] | None, where: str) -> LabelSelector:
    """A ``labelSelector`` field; absent selects everything (Metacontroller's compatibility)."""
    if selector is None:
        return LabelSelector.everything()
    try:
        return LabelSelector.from_dict(selector, path=where)
    except ValueError as error:
        raise ValueError(str(error)) from None


def declared_keys(types: Sequence[ChildType]) -> dict[str, bool]:
    """The type keys (``Kind.apiVersion``) of ``types``, each with whether it is namespaced."""
    from setpoint.composite.object_maps import type_key

    return {type_key(t.api_version, t.kind): t.resource.namespaced for t in types}
