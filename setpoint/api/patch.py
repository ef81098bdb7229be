"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on plain JSON values.

Both the client (to build the smallest write) and the local API server (to apply a PATCH) use
these. Every function returns a new value and never mutates its inputs, so a cached object can
be patched safely. Values are compared as JSON: ``true`` is not ``1`` and ``1`` is not ``1.0``,
so a change of type is never lost.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "PatchError",
    "PatchTestFailed",
    "apply_json_patch",
    "apply_merge_patch",
    "create_json_patch",
    "create_merge_patch",
    "json_copy",
    "json_equal",
    "merge_patch_changes",
]

# Content types of PATCH requests, as the API server names them.
JSON_PATCH: Final = "application/json-patch+json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"

_OPERATIONS: Final = ("add", "remove", "replace", "move", "copy", "test")
_NEEDS_VALUE: Final = frozenset({"add", "replace", "test"})
_NEEDS_FROM: Final = frozenset({"move", "copy"})


class PatchError(ValueError):
    """A patch that is malformed or cannot be applied; the message names the operation."""


class PatchTestFailed(PatchError):
    """A JSON patch ``test`` operation found a different value."""


# Immutable JSON scalars: a copy may share them.
_ATOMIC: Final = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value: fresh dicts and lists, the immutable scalars shared.

    Much cheaper than ``copy.deepcopy`` (no memo): exact ``dict``/``list``/scalars are copied
    here, anything else (a tuple, a ``datetime``, a ``dict`` subclass) by ``copy.deepcopy``.
    Unlike ``deepcopy``, a container that appears twice in ``value`` is copied twice (JSON has
    no shared references), and a cyclic value raises ``RecursionError``.
    """
    kind = type(value)
    if kind is dict:
        # Loops, not comprehensions: a comprehension is one more frame per container (3.11).
        copied: dict[Any, Any] = {}
        for k, v in value.items():
            copied[k] = v if type(v) in _ATOMIC else json_copy(v)
        return copied
    if kind is list:
        items: list[Any] = []
        for v in value:
            items.append(v if type(v) in _ATOMIC else json_copy(v))
        return items
    if kind in _ATOMIC:
        return value
    return copy.deepcopy(value)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values that keeps types apart (``True != 1``, ``1 != 1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- merge patch ---------------------------------------------------------------------------


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch and return the result (inputs are not modified).

    An object patch merges key by key: ``null`` removes a key, an object merges recursively,
    anything else replaces. A non-object patch replaces the target entirely.
    """
    if not isinstance(patch, Mapping):
        return json_copy(patch)
    result: dict[str, Any] = (
        {k: json_copy(v) for k, v in target.items() if k not in patch}
        if isinstance(target, Mapping)
        else {}
    )
    for key, value in patch.items():
        if value is None:
            continue
        current = target.get(key) if isinstance(target, Mapping) else None
        result[key] = apply_merge_patch(current, value)
    if isinstance(target, Mapping):
        # Keep the target's key order: replaced keys stay where they were.
        ordered = {k: result[k] for k in target if k in result}
        ordered.update((k, v) for k, v in result.items() if k not in ordered)
        return ordered
    return result


def merge_patch_changes(target: Any, patch: Any) -> bool:
    """Whether applying the merge ``patch`` to ``target`` changes it (as :func:`json_equal`
    compares): ``not json_equal(target, apply_merge_patch(target, patch))``, without building
    the result."""
    if type(patch) is not dict and not isinstance(patch, Mapping):
        return not json_equal(target, patch)
    if type(target) is not dict:
        # The result is a new dict: equal only to a dict (json_equal compares exact types).
        return True
    for key, value in patch.items():
        if value is None:
            if key in target:
                return True
        elif key not in target or merge_patch_changes(target[key], value):
            return True
    return False


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns ``original`` into ``modified``.

    Keys missing from ``modified`` become ``null``; equal values are left out, so equal inputs
    give ``{}``. ``null`` values inside ``modified`` cannot be expressed by a merge patch (they
    mean "delete"); such keys end up absent after applying.
    """
    if not isinstance(original, Mapping) or not isinstance(modified, Mapping):
        if isinstance(modified, Mapping):
            return {k: json_copy(v) for k, v in modified.items()}
        return json_copy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        if key not in original:
            patch[key] = json_copy(value)
            continue
        old = original[key]
        if json_equal(old, value):
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            patch[key] = create_merge_patch(old, value)
        else:
            patch[key] = json_copy(value)
    return patch


# --- JSON patch ----------------------------------------------------------------------------


def _describe(index: int, operation: Mapping[str, Any]) -> str:
    return f"json patch operation {index} ({operation.get('op')} {operation.get('path')})"


def _check_operation(index: int, operation: Any) -> None:
    if not isinstance(operation, Mapping):
        raise PatchError(f"json patch operation {index}: must be an object, got {operation!r}")
    op = operation.get("op")
    if op not in _OPERATIONS:
        raise PatchError(
            f"json patch operation {index}: unsupported op {op!r}: "
            f"supported values: {', '.join(_OPERATIONS)}"
        )
    if not isinstance(operation.get("path"), str):
        raise PatchError(f"json patch operation {index} ({op}): missing 'path' (a JSON pointer)")
    if op in _NEEDS_VALUE and "value" not in operation:
        raise PatchError(f"{_describe(index, operation)}: missing 'value'")
    if op in _NEEDS_FROM and not isinstance(operation.get("from"), str):
        raise PatchError(f"{_describe(index, operation)}: missing 'from' (a JSON pointer)")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _test(document: Any, index: int, operation: Mapping[str, Any]) -> None:
    import jsonpointer

    try:
        actual = jsonpointer.JsonPointer(operation["path"]).resolve(document)
    except jsonpointer.JsonPointerException as error:
        raise PatchTestFailed(f"{_describe(index, operation)}: test failed: {error}") from None
    if not json_equal(actual, operation["value"]):
        raise PatchTestFailed(
            f"{_describe(index, operation)}: test failed: value is {_json(actual)}, "
            f"expected {_json(operation['value'])}"
        )


def apply_json_patch(
    document: Any, operations: Sequence[Any], *, max_copy_bytes: int | None = None
) -> Any:
    """Apply an RFC 6902 JSON patch and return the result (inputs are not modified).

    Operations apply in order and all-or-nothing. Raises :class:`PatchTestFailed` when a
    ``test`` fails and :class:`PatchError` for malformed operations or missing paths; the
    message names the operation's index, op and path. With ``max_copy_bytes``, the JSON size
    of all values ``copy`` duplicates may not exceed it (as kube-apiserver's
    ``AccumulatedCopySizeLimit``): a few doubling copies would otherwise build gigabytes.
    """
    if isinstance(operations, (str, bytes)) or not isinstance(operations, Sequence):
        raise PatchError("json patch must be a list of operations")
    # Imported here: operators rarely send JSON patches, and `setpoint run` starts faster.
    import jsonpatch
    import jsonpointer

    # Copy both: jsonpatch inserts "value" objects as they are, which would alias the caller's.
    result = json_copy(document)
    copied = 0
    for index, operation in enumerate(operations):
        _check_operation(index, operation)
        if operation["op"] == "test":
            _test(result, index, operation)
            continue
        if operation["op"] == "copy" and max_copy_bytes is not None:
            copied += _copy_size(result, index, operation)
            if copied > max_copy_bytes:
                raise PatchError(
                    "Unable to complete the copy, the accumulated size increase of copy is "
                    f"{copied}, exceeding the limit {max_copy_bytes}"
                )
        try:
            result = jsonpatch.JsonPatch([json_copy(dict(operation))]).apply(result, in_place=True)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
            raise PatchError(f"{_describe(index, operation)}: {error}") from None
        except (KeyError, IndexError) as error:
            raise PatchError(f"{_describe(index, operation)}: path not found: {error}") from None
        except (TypeError, ValueError) as error:
            raise PatchError(f"{_describe(index, operation)}: cannot apply: {error}") from None
    return result


def _copy_size(document: Any, index: int, operation: Mapping[str, Any]) -> int:
    """The JSON size of the value a ``copy`` would duplicate (0 when ``from`` is missing)."""
    import jsonpointer

    try:
        value = jsonpointer.JsonPointer(operation["from"]).resolve(document)
    except jsonpointer.JsonPointerException:
        return 0  # the copy itself reports the missing path
    return len(_json(value))


def _escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _diff(old: Any, new: Any, path: str, out: list[dict[str, Any]]) -> None:
    if json_equal(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                out.append({"op": "remove", "path": f"{path}/{_escape_pointer(key)}"})
        for key, value in new.items():
            child = f"{path}/{_escape_pointer(key)}"
            if key in old:
                _diff(old[key], value, child, out)
            else:
                out.append({"op": "add", "path": child, "value": json_copy(value)})
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}/{index}", out)
        return
    out.append({"op": "replace", "path": path, "value": json_copy(new)})


def create_json_patch(original: Any, modified: Any, path: str = "") -> list[dict[str, Any]]:
    """A JSON patch that turns ``original`` into ``modified`` (``[]`` when equal); with
    ``path`` (a JSON pointer), the two are the values at that path of a larger document.

    Objects are diffed key by key and lists of equal length element by element; a list whose
    length changed is replaced as a whole, which is always correct if not always minimal.
    """
    operations: list[dict[str, Any]] = []
    _diff(original, modified, path, operations)
    return operations
