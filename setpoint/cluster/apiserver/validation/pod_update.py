"""What an update may change in a pod's spec (``ValidatePodUpdate``).

A pod's spec is fixed once created, but for a few fields: the containers' and init containers'
images, ``activeDeadlineSeconds`` (set, or lowered), tolerations (added, or an existing one's
``tolerationSeconds``), ``terminationGracePeriodSeconds`` (to 1 when it was negative) and
scheduling gates (removed). Anything else changed is refused with kube-apiserver's
``spec: Forbidden: pod updates may not change fields other than …`` followed by what changed.
Ephemeral containers change only through their subresource, so a plain update that touches
them is refused the same way.

Specs are compared as kube-apiserver compares its decoded Go structs: a field left out equals
its zero value (``""``, ``0``, ``false``, an empty list or map), and quantities equal by value
(``1`` is ``1000m``). Upstream's relaxations for pods with scheduling gates (adding node
selector terms) are not applied here; such an update is refused.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema.cel_quantity_url import parse_quantity

#: The fields an update may change, as upstream lists them (without in-place resizing, which
#: is off by default in 1.32).
UPDATABLE_FIELDS: Final = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
_MAX_INT32: Final = 2**31 - 1
_QUANTITY_MAPS: Final = frozenset({"limits", "requests", "capacity", "overhead"})


def validate_pod_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """The problems of a plain update of pod ``old`` to ``new`` (not of a subresource)."""
    new_spec = new.get("spec")
    old_spec = old.get("spec")
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict):
        return []
    errors: list[FieldError] = []
    for key in ("containers", "initContainers"):
        problems, stop = _container_updates(_list(new_spec, key), _list(old_spec, key), key)
        errors += problems
        if stop:
            return errors
    deadline_errors = _deadline_update(new_spec, old_spec)
    if deadline_errors:
        return errors + deadline_errors
    errors += _only_added_tolerations(
        _list(new_spec, "tolerations"), _list(old_spec, "tolerations")
    )
    errors += _only_deleted_gates(
        _list(new_spec, "schedulingGates"), _list(old_spec, "schedulingGates")
    )
    if _same(new_spec, old_spec):
        return errors
    munged = _munged(new_spec, old_spec)
    if not _same(munged, old_spec):
        changes = "\n".join(_differences(old_spec, munged, "spec"))
        errors.append(
            fe.forbidden(
                "spec",
                f"pod updates may not change fields other than {','.join(UPDATABLE_FIELDS)}\n"
                f"{changes}",
            )
        )
    return errors


def _list(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    return value if isinstance(value, list) else []


def _container_updates(new: list[Any], old: list[Any], key: str) -> tuple[list[FieldError], bool]:
    """``ValidateContainerUpdates``: the same containers, each with an image."""
    if len(new) != len(old):
        return [fe.forbidden(f"spec.{key}", "pod updates may not add or remove containers")], True
    errors: list[FieldError] = []
    for index, container in enumerate(new):
        image = container.get("image") if isinstance(container, dict) else None
        path = f"spec.{key}[{index}].image"
        if not image:
            errors.append(fe.required(path))
        elif isinstance(image, str) and image.strip() != image:
            errors.append(fe.invalid(path, image, "must not have leading or trailing whitespace"))
    return errors, False


def _deadline_update(new_spec: dict[str, Any], old_spec: dict[str, Any]) -> list[FieldError]:
    """``activeDeadlineSeconds`` may be set, or lowered, never removed."""
    path = "spec.activeDeadlineSeconds"
    new = new_spec.get("activeDeadlineSeconds")
    old = old_spec.get("activeDeadlineSeconds")
    if isinstance(new, int) and not isinstance(new, bool):
        if not 0 <= new <= _MAX_INT32:
            return [fe.invalid(path, new, f"must be between 0 and {_MAX_INT32}, inclusive")]
        if isinstance(old, int) and old < new:
            return [fe.invalid(path, new, "must be less than or equal to previous value")]
    elif new is None and old is not None:
        return [fe.invalid(path, None, "must not update from a positive integer to nil value")]
    return []


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[FieldError]:
    """Every existing toleration is still there (its ``tolerationSeconds`` may change)."""
    for existing in old:
        if not isinstance(existing, dict):
            continue
        kept = any(
            isinstance(candidate, dict)
            and _same(
                {**existing, "tolerationSeconds": candidate.get("tolerationSeconds")}, candidate
            )
            for candidate in new
        )
        if not kept:
            return [
                fe.forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            ]
    return []


def _only_deleted_gates(new: list[Any], old: list[Any]) -> list[FieldError]:
    """Scheduling gates may only be removed."""
    before = {gate.get("name") for gate in old if isinstance(gate, dict)}
    return [
        fe.forbidden(
            f"spec.schedulingGates[{index}].name",
            f"only deletion is allowed, but found new scheduling gate '{gate.get('name')}'",
        )
        for index, gate in enumerate(new)
        if isinstance(gate, dict) and gate.get("name") not in before
    ]


def _munged(new_spec: dict[str, Any], old_spec: dict[str, Any]) -> dict[str, Any]:
    """``new_spec`` with what an update may change put back as it was."""
    munged = copy.deepcopy(new_spec)
    for key in ("containers", "initContainers"):
        for container, before in zip(_list(munged, key), _list(old_spec, key), strict=False):
            if isinstance(container, dict) and isinstance(before, dict):
                _copy_field(container, before, "image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _copy_field(munged, old_spec, key)
    grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = grace
    return munged


def _copy_field(target: dict[str, Any], source: dict[str, Any], key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _zero(value: Any) -> bool:
    return value is None or (not value and isinstance(value, str | int | float | list | dict))


def _same(a: Any, b: Any, key: str = "") -> bool:
    """Equal as decoded Go structs: left out is the zero value; quantities by value."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = a.keys() | b.keys()
        if key in _QUANTITY_MAPS:
            return all(_same_quantity(a.get(k), b.get(k)) for k in keys)
        return all(_same(a.get(k), b.get(k), k) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if _zero(a) and _zero(b):
        return True
    return type(a) is type(b) and bool(a == b)


def _same_quantity(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        left, right = parse_quantity(a), parse_quantity(b)
        return left is not None and left == right
    return False


def _differences(old: Any, new: Any, path: str) -> list[str]:
    """One line per changed leaf: ``- path: old`` and ``+ path: new`` (upstream prints a Go
    struct diff here; this is the same information in JSON paths)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            line
            for key in sorted(old.keys() | new.keys())
            if not _same(old.get(key), new.get(key), key)
            for line in _differences(old.get(key), new.get(key), f"{path}.{key}")
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            line
            for index, (before, after) in enumerate(zip(old, new, strict=True))
            if not _same(before, after)
            for line in _differences(before, after, f"{path}[{index}]")
        ]
    return [f"- {path}: {_shown(old)}", f"+ {path}: {_shown(new)}"]


def _shown(value: Any) -> str:
    return "<unset>" if value is None else json.dumps(value, separators=(",", ":"))
