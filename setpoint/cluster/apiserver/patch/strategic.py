"""Strategic merge patch (``application/strategic-merge-patch+json``), for built-in kinds.

The semantics of apimachinery's ``strategicpatch.StrategicMergePatch`` as the API server calls
it (parallel directive lists merged, unmatched nulls ignored):

- maps merge key by key; ``null`` deletes a key; a value of another JSON type replaces;
- a list whose field has patch strategy ``merge`` merges: elements with a merge key are matched
  by it (merged in place, new ones appended, ``{"<key>": v, "$patch": "delete"}`` removes one,
  ``{"$patch": "replace"}`` makes the list exactly the other patch elements); primitive lists are
  unioned (finalizers); any other list is replaced;
- ``"$patch": "replace"`` in a map replaces the map, ``"$patch": "delete"`` empties it;
- ``$retainKeys`` (fields with strategy ``retainKeys``) drops every key it does not list;
- ``$deleteFromPrimitiveList/<field>`` removes values from a primitive list;
- ``$setElementOrder/<field>`` fixes the order of the listed elements; elements only on the
  server keep their relative place.

Errors are :class:`StrategicPatchError` (the API server answers 400 with the message).
"""

from __future__ import annotations

import copy
from typing import Any, Final

from setpoint.cluster.apiserver.patch.merge_schema import MergeNode

DIRECTIVE: Final = "$patch"
RETAIN_KEYS: Final = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER: Final = "$setElementOrder/"


class StrategicPatchError(ValueError):
    """The patch cannot be applied (a bad directive, a missing merge key...)."""


def go_format(value: Any) -> str:
    """A value as Go's ``%v`` prints decoded JSON (``map[name:x]``), for error messages."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def strategic_merge_patch(original: dict[str, Any], patch: Any, node: MergeNode) -> Any:
    """``original`` (not modified) with ``patch`` applied under schema ``node``."""
    if not isinstance(patch, dict):
        raise StrategicPatchError(
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        )
    return _merge_map(copy.deepcopy(original), copy.deepcopy(patch), node)


def _bad_patch_type(value: Any, where: Any) -> StrategicPatchError:
    return StrategicPatchError(f"unknown patch type: {go_format(value)} in map: {go_format(where)}")


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], node: MergeNode) -> Any:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            del patch[DIRECTIVE]
            return _fresh(patch, node)
        if directive == "delete":
            return {}
        if directive != "merge":
            raise _bad_patch_type(directive, patch)
        del patch[DIRECTIVE]
    if original is None:
        original = {}
    if RETAIN_KEYS in patch:
        _retain_keys(original, patch)
    _set_element_orders(original, patch, node)
    for key, value in patch.items():
        if key.startswith(SET_ELEMENT_ORDER):
            continue
        delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if delete_list:
            key = key[len(DELETE_FROM_PRIMITIVE_LIST) :]
        if value is None:
            original.pop(key, None)
            continue
        child = node.child(key)
        if key not in original:
            if not delete_list:
                original[key] = _fresh(value, child)
            continue
        current = original[key]
        if delete_list:
            if isinstance(current, list) and isinstance(value, list):
                original[key] = [item for item in current if item not in value]
            continue
        if isinstance(current, dict) and isinstance(value, dict):
            if "replace" in child.patch_strategies:
                original[key] = _fresh(value, child)
            else:
                original[key] = _merge_map(current, value, child)
        elif isinstance(current, list) and isinstance(value, list):
            if "merge" in child.patch_strategies:
                original[key] = _merge_list(current, value, child)
            else:
                original[key] = _fresh(value, child)
        else:
            original[key] = _fresh(value, child)
    return original


def _fresh(value: Any, node: MergeNode) -> Any:
    """A patch value taken as it is (no original): directives applied, nulls dropped."""
    if isinstance(value, dict):
        if not any(k.startswith("$") for k in value) and not any(
            v is None or isinstance(v, dict | list) for v in value.values()
        ):
            return value
        return _merge_map(None, value, node)
    if isinstance(value, list):
        if "merge" in node.patch_strategies and any(isinstance(v, dict) for v in value):
            return _merge_list([], value, node)
        return [_fresh(v, node.item) if isinstance(v, dict) else v for v in value]
    return value


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise StrategicPatchError("invalid patch format of retainKeys")
    keep = set(retained)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise StrategicPatchError("invalid patch format of retainKeys")
    for key in list(original):
        if key not in keep:
            del original[key]


def _merge_list(original: list[Any], patch: list[Any], node: MergeNode) -> list[Any]:
    if not original and not patch:
        return original
    if not any(isinstance(v, dict) for v in original) and not any(
        isinstance(v, dict) for v in patch
    ):
        merged = list(original)
        for value in patch:
            if value not in merged:
                merged.append(value)
        return _normalize_order(merged, patch, original, "")
    key = node.merge_key
    if not key:
        raise StrategicPatchError("cannot merge lists without merge key")
    items: list[Any] = []
    replace = False
    for element in patch:
        if not isinstance(element, dict):
            raise StrategicPatchError(
                "json: cannot unmarshal list item into a map: " + go_format(element)
            )
        if DIRECTIVE not in element:
            items.append(element)
            continue
        directive = element[DIRECTIVE]
        if directive == "delete":
            if key not in element:
                raise StrategicPatchError(
                    f"map: {go_format(element)} does not contain declared merge key: {key}"
                )
            original = [
                o for o in original if not (isinstance(o, dict) and o.get(key) == element[key])
            ]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise StrategicPatchError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, element)
    if replace:
        return [_fresh(item, node.item) for item in items]
    merged = list(original)
    for element in items:
        if key not in element:
            raise StrategicPatchError(
                f"map: {go_format(element)} does not contain declared merge key: {key}"
            )
        for index, existing in enumerate(merged):
            if isinstance(existing, dict) and existing.get(key) == element[key]:
                merged[index] = _merge_map(existing, element, node.item)
                break
        else:
            merged.append(_fresh(element, node.item))
    return _normalize_order(merged, items, original, key)


def _identity(value: Any, key: str) -> Any:
    if key and isinstance(value, dict):
        return ("k", _hashable(value.get(key)))
    return ("v", _hashable(value))


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _normalize_order(
    merged: list[Any], patch_order: list[Any], server_order: list[Any], key: str
) -> list[Any]:
    """Patch elements sorted by ``patch_order``, server-only ones by ``server_order``, then
    interleaved: a server-only element goes first only when both are on the server and it was
    before (upstream's ``normalizeElementOrder``/``mergeSortedSlice``)."""
    patch_rank = {_identity(v, key): i for i, v in enumerate(patch_order)}
    server_rank = {_identity(v, key): i for i, v in enumerate(server_order)}
    from_patch = [v for v in merged if _identity(v, key) in patch_rank]
    server_only = [v for v in merged if _identity(v, key) not in patch_rank]
    from_patch.sort(key=lambda v: patch_rank[_identity(v, key)])
    server_only.sort(key=lambda v: server_rank.get(_identity(v, key), len(server_rank)))
    result: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(from_patch):
        if i >= len(server_only):
            result.append(from_patch[j])
            j += 1
        elif j >= len(from_patch):
            result.append(server_only[i])
            i += 1
        else:
            left = server_rank.get(_identity(server_only[i], key))
            right = server_rank.get(_identity(from_patch[j], key))
            if left is not None and right is not None and left < right:
                result.append(server_only[i])
                i += 1
            else:
                result.append(from_patch[j])
                j += 1
    return result


def _set_element_orders(original: dict[str, Any], patch: dict[str, Any], node: MergeNode) -> None:
    """Merge the lists that have a ``$setElementOrder`` directive, in the directive's order."""
    for directive in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch[directive]
        field = directive[len(SET_ELEMENT_ORDER) :]
        child = node.child(field)
        if not isinstance(order, list) or "merge" not in child.patch_strategies:
            continue
        current = original.get(field)
        value = patch.get(field)
        if current is None and value is None:
            continue
        if value is None:
            merged = list(current or [])
            items: list[Any] = []
        else:
            if not isinstance(value, list):
                continue
            merged = _merge_list(list(current or []), value, child)
            items = value
        key = child.merge_key
        _check_order(items, order, key)
        original[field] = _normalize_order(merged, order, list(current or []), key)
        patch.pop(field, None)


def _check_order(items: list[Any], order: list[Any], key: str) -> None:
    """The patch list must follow the directive's relative order (upstream checks it)."""
    ranks = {_identity(v, key): i for i, v in enumerate(order)}
    last = -1
    for item in items:
        if isinstance(item, dict) and DIRECTIVE in item:
            continue
        rank = ranks.get(_identity(item, key))
        if rank is None:
            continue
        if rank < last:
            raise StrategicPatchError(
                f"The order in patch list:\n{go_format(items)}\n doesn't match "
                f"$setElementOrder list:\n{go_format(order)}\n"
            )
        last = rank
