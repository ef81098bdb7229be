"""Server-side apply: merge a manager's configuration into the live object, with ownership.

Following structured-merge-diff's ``Updater.Apply``:

1. the configuration is merged into the live object by the schema (maps per key, map lists per
   element key, sets by value, everything else replaced whole);
2. the applier's field set becomes exactly the fields its configuration sets;
3. fields it set last time and omits now are removed from the object, unless another manager
   still owns them (or something below them);
4. every other manager's fields that the result adds or changes are conflicts: a 409 with one
   ``FieldManagerConflict`` cause per field, unless ``force`` moves them to the applier.
   Applying the value that is already there is no conflict: both then own the field.

Two migration rules of kube-apiserver apply as well: an object without any managedFields first
credits its fields to ``before-first-apply``, and for the manager ``kubectl`` a conflict only on
fields of the live ``kubectl.kubernetes.io/last-applied-configuration`` is forced silently and
the annotation is rewritten (``lastappliedmanager.go``, ``lastappliedupdater.go``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver.patch.field_paths import (
    FieldSet,
    Path,
    compare,
    element_key,
    field_set,
    path_string,
    sort_paths,
)
from setpoint.cluster.apiserver.patch.managed_fields import (
    APPLY,
    BEFORE_FIRST_APPLY,
    UPDATE,
    ManagerEntry,
    decode_entries,
    encode_entries,
    tracked,
)
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode
from setpoint.cluster.apiserver.status_errors import APIError

LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_MANAGER: Final = "kubectl"
_MISSING: Final[Any] = object()
_ENCODE: Final = msgspec.json.Encoder().encode
_DECODE: Final = msgspec.json.Decoder().decode


def _clone(value: Any) -> Any:
    """A deep copy of a JSON value (a msgspec round trip is several times faster)."""
    return _DECODE(_ENCODE(value))


class MissingKeyField(ValueError):
    """An element of a map list in the configuration omits one of its key fields."""


@dataclass(slots=True)
class ApplyResult:
    """The object after an apply, with its new ``managedFields``."""

    obj: dict[str, Any]
    managed_fields: list[dict[str, Any]]
    changed: bool


def apply_conflict(conflicts: list[tuple[ManagerEntry, Path]]) -> APIError:
    """The 409 of an apply that would change other managers' fields (``conflict.go``)."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.describe()}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {entry.describe()}: {path_string(path)}"
        )
    else:
        lines: list[str] = []
        by_manager: dict[str, tuple[ManagerEntry, list[Path]]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(entry.identifier, (entry, []))[1].append(path)
        for identifier in sorted(by_manager):
            entry, paths = by_manager[identifier]
            lines.append(f"conflicts with {entry.describe()}:")
            lines.extend(f"- {path_string(path)}" for path in paths)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return APIError(409, StatusReason.CONFLICT, message, details={"causes": causes})


# -- merging ---------------------------------------------------------------------------------


def merge(node: MergeNode, live: Any, config: Any) -> Any:
    """``config`` merged into ``live`` by the schema. ``live`` is not modified; the result
    shares values with ``config`` (callers pass a configuration they own)."""
    if live is _MISSING or live is None:
        return config
    if isinstance(live, dict) and isinstance(config, dict) and node.is_granular_map:
        result = dict(live)
        for key, value in config.items():
            if value is None:
                result.pop(key, None)
                continue
            result[key] = merge(node.child(key), live.get(key, _MISSING), value)
        return result
    if isinstance(live, list) and isinstance(config, list) and node.list_type in ("map", "set"):
        return _merge_map_list(node, live, config)
    return config


def _merge_map_list(node: MergeNode, live: list[Any], config: list[Any]) -> list[Any]:
    """Merge two keyed lists in structured-merge-diff's order: items of both sides are
    merged where the configuration puts them, live-only items keep their place among them."""
    item_node = node.item
    lhs_order = [element_key(node, item, i) for i, item in enumerate(live)]
    rhs_order = [element_key(node, item, i) for i, item in enumerate(config)]
    lhs = dict(zip(lhs_order, live, strict=True))
    rhs = dict(zip(rhs_order, config, strict=True))
    shared = [key for key in rhs_order if key in lhs]
    shared.reverse()
    next_shared = shared.pop() if shared else None
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs_order) or ri < len(rhs_order):
        if li < len(lhs_order) and ri < len(rhs_order):
            key = lhs_order[li]
            if key == rhs_order[ri]:
                out.append(merge(item_node, lhs[key], rhs[key]))
                li += 1
                ri += 1
                next_shared = shared.pop() if shared else None
                continue
            if key in rhs and next_shared is not None and next_shared != key:
                li += 1  # a shared item, merged when the configuration reaches it
                continue
        if li < len(lhs_order) and lhs_order[li] not in rhs:
            out.append(lhs[lhs_order[li]])
            li += 1
            continue
        if ri < len(rhs_order):
            key = rhs_order[ri]
            out.append(merge(item_node, lhs.get(key, _MISSING), rhs[key]))
            ri += 1
            if next_shared is not None and next_shared == key:
                next_shared = shared.pop() if shared else None
            continue
        li += 1  # a shared item already merged from the configuration's side
    return out


def complete_keys(node: MergeNode, config: Any, live: Any) -> None:
    """Fill key fields a configuration's map-list element omits from the live element it matches
    (``ports`` without ``protocol`` match the live ``TCP`` port), in place."""
    if isinstance(config, dict) and not node.atomic:
        for key, value in config.items():
            if isinstance(value, dict | list):
                child_live = live.get(key) if isinstance(live, dict) else None
                complete_keys(node.child(key), value, child_live)
    elif isinstance(config, list) and node.list_type == "map":
        live_items = live if isinstance(live, list) else []
        for item in config:
            if not isinstance(item, dict):
                continue
            missing = [k for k in node.map_keys if k not in item]
            match = None
            for candidate in live_items:
                if isinstance(candidate, dict) and all(
                    candidate.get(k) == item[k] for k in node.map_keys if k in item
                ):
                    match = candidate
                    break
            if missing and match is not None:
                for k in missing:
                    if k in match:
                        item[k] = match[k]
            complete_keys(node.item, item, match)


def fill_key_defaults(node: MergeNode, config: Any, defaulted: Any) -> None:
    """Key fields a map-list element omits, taken from the same element of the defaulted
    configuration (``protocol: TCP`` of ports), in place. Defaulting never reorders lists, so
    elements correspond by index."""
    if isinstance(config, dict) and isinstance(defaulted, dict) and not node.atomic:
        for key, value in config.items():
            if isinstance(value, dict | list):
                fill_key_defaults(node.child(key), value, defaulted.get(key))
    elif (
        isinstance(config, list)
        and isinstance(defaulted, list)
        and node.list_type == "map"
        and len(config) == len(defaulted)
    ):
        for item, filled in zip(config, defaulted, strict=True):
            if isinstance(item, dict) and isinstance(filled, dict):
                for key in node.map_keys:
                    if key not in item and key in filled:
                        item[key] = filled[key]
                fill_key_defaults(node.item, item, filled)


def missing_key(node: MergeNode, config: Any, path: Path = ()) -> str | None:
    """Structured-merge-diff's complaint about the first map-list element without one of its
    key fields, or about a list with the same key (or set value) twice; None if all is well."""
    if isinstance(config, dict) and not node.atomic:
        for key, value in config.items():
            if isinstance(value, dict | list):
                found = missing_key(node.child(key), value, (*path, "f:" + key))
                if found:
                    return found
    elif isinstance(config, list) and node.list_type in ("map", "set"):
        seen: set[str] = set()
        for index, item in enumerate(config):
            if node.list_type == "map" and isinstance(item, dict):
                for key in node.map_keys:
                    if key not in item:
                        return (
                            f"{path_string(path)}: element {index}: associative list with keys "
                            f'has an element that omits key field "{key}" (and doesn\'t have '
                            "default value)"
                        )
            element = element_key(node, item, index)
            if element in seen:
                return f"{path_string(path)}: duplicate entries for key {path_string((element,))}"
            seen.add(element)
            found = missing_key(node.item, item, (*path, element))
            if found:
                return found
    return None


def remove_path(node: MergeNode, obj: Any, path: Path) -> None:
    """Delete the value at ``path`` from ``obj`` (in place; absent paths are ignored)."""
    if not path:
        return
    parent_path, last = path[:-1], path[-1]
    parent: Any = obj
    parent_node = node
    for element in parent_path:
        parent, parent_node = _step(parent_node, parent, element)
        if parent is _MISSING:
            return
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        for index, item in enumerate(parent):
            if element_key(parent_node, item, index) == last:
                del parent[index]
                return


def _step(node: MergeNode, value: Any, element: str) -> tuple[Any, MergeNode]:
    if element.startswith("f:"):
        if isinstance(value, dict) and element[2:] in value:
            return value[element[2:]], node.child(element[2:])
        return _MISSING, node
    if isinstance(value, list):
        for index, item in enumerate(value):
            if element_key(node, item, index) == element:
                return item, node.item
    return _MISSING, node


def _owned_below(path: Path, paths: FieldSet) -> bool:
    size = len(path)
    return any(len(p) >= size and p[:size] == path for p in paths)


# -- applying --------------------------------------------------------------------------------


def server_side_apply(
    root: MergeNode,
    live: dict[str, Any] | None,
    config: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    subresource: str,
    force: bool,
    now: str,
    builtin: bool,
    has_status: bool,
    defaulter: Callable[[dict[str, Any]], None] | None = None,
) -> ApplyResult:
    """Apply ``config`` (a decoded apply patch) for ``manager`` to ``live`` (None: create).

    ``defaulter`` fills a built-in's defaults in place; it supplies key fields that elements of
    the configuration omit (as the defaults in kube-apiserver's schemas do).
    """
    base: dict[str, Any] = live if live is not None else {}
    original_config = config
    config = _clone(config)
    config.get("metadata", {}).pop("managedFields", None)
    complete_keys(root, config, base)
    if defaulter is not None:
        defaulted = _clone(config)
        defaulter(defaulted)
        fill_key_defaults(root, config, defaulted)
    complaint = missing_key(root, config)
    if complaint is not None:
        raise MissingKeyField(complaint)
    if subresource == "status":
        merge_input = {k: v for k, v in config.items() if k in ("status", "apiVersion", "kind")}
    elif has_status:
        merge_input = {k: v for k, v in config.items() if k != "status"}
    else:
        merge_input = config
    entries = _live_entries(root, live, builtin, has_status)
    # merge() shares untouched subtrees with its input: work on a copy, keep ``base`` intact.
    merged: dict[str, Any] = merge(root, _clone(base), merge_input)
    new_set = tracked(field_set(root, config), subresource, has_status)
    mine = next(
        (
            e
            for e in entries
            if e.manager == manager and e.operation == APPLY and e.subresource == subresource
        ),
        None,
    )
    others = [e for e in entries if e is not mine]
    if mine is not None:
        owned_by_others: FieldSet = set()
        for entry in others:
            owned_by_others |= entry.fields
        keep = owned_by_others | new_set
        for path in sort_paths(mine.fields - new_set):
            if path in owned_by_others or _owned_below(path, keep):
                continue
            remove_path(root, merged, path)
    if live is None or merged == base:
        # A create has no other manager to take fields from (and always changes the
        # object); a re-apply of the same configuration changes nothing.
        changed: FieldSet = set()
        removed: FieldSet = set()
    else:
        comparison = compare(root, base, merged, value_structs=builtin)
        changed = tracked(comparison.changed, subresource, has_status)
        removed = tracked(comparison.removed, subresource, has_status)
    conflicts: list[tuple[ManagerEntry, Path]] = []
    for entry in others:
        for path in sort_paths(entry.owned(changed)):
            conflicts.append((entry, path))
    if conflicts and not force and not _forgiven(root, live, manager, conflicts):
        conflicts.sort(key=lambda c: c[0].identifier)
        raise apply_conflict(conflicts)
    for entry in others:
        entry.discard(changed)
        entry.discard(removed)
    object_changed = bool(changed or removed) or merged != base
    entries_changed = bool(conflicts or changed or removed) or not _tracked_live(live)
    if mine is None:
        mine = ManagerEntry(manager, APPLY, api_version, now, new_set, subresource)
        entries.append(mine)
        entries_changed = True
    else:
        if mine.fields != new_set or object_changed or mine.api_version != api_version:
            mine.time = now
            entries_changed = True
        mine.replace_fields(new_set)
        mine.api_version = api_version
    if manager == KUBECTL_MANAGER and live is not None:
        _update_last_applied(merged, live, original_config)
    if entries_changed or live is None:
        managed_fields = encode_entries(entries)
    else:  # a no-op apply: the live entries stand as they are
        managed_fields = list(live["metadata"]["managedFields"])
    metadata = merged.setdefault("metadata", {})
    if managed_fields:
        metadata["managedFields"] = managed_fields
    else:
        metadata.pop("managedFields", None)
    return ApplyResult(merged, managed_fields, object_changed)


def _live_entries(
    root: MergeNode, live: dict[str, Any] | None, builtin: bool, has_status: bool
) -> list[ManagerEntry]:
    if live is None:
        return []
    raw = (live.get("metadata") or {}).get("managedFields")
    entries = decode_entries(raw, stored=True)
    if entries:
        return entries
    # Made before tracking (or after a reset): its fields belong to someone unknown.
    owned = tracked(compare(root, {}, live, value_structs=builtin).added, "", has_status)
    # An empty map or list left behind by a removal holds nothing to own (and no manager owned it).
    owned = {path for path in owned if not _empty_map_at(live, path)}
    if not owned:
        return []
    api_version = str(live.get("apiVersion") or "")
    return [ManagerEntry(BEFORE_FIRST_APPLY, UPDATE, api_version, "", owned)]


def _empty_map_at(obj: dict[str, Any], path: tuple[str, ...]) -> bool:
    value: Any = obj
    for element in path:
        if not element.startswith("f:") or not isinstance(value, dict):
            return False
        value = value.get(element[2:])
    return bool(value == {} or value == [])


def _tracked_live(live: dict[str, Any] | None) -> bool:
    return live is not None and bool((live.get("metadata") or {}).get("managedFields"))


def _last_applied(live: dict[str, Any] | None) -> dict[str, Any] | None:
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _forgiven(
    root: MergeNode,
    live: dict[str, Any] | None,
    manager: str,
    conflicts: list[tuple[ManagerEntry, Path]],
) -> bool:
    """kubectl taking over what its own client-side apply set is not a conflict."""
    if manager != KUBECTL_MANAGER:
        return False
    last = _last_applied(live)
    if last is None:
        return False
    applied = field_set(root, last)
    return all(path in applied for _entry, path in conflicts)


def _update_last_applied(
    merged: dict[str, Any], live: dict[str, Any], config: dict[str, Any]
) -> None:
    if _last_applied(live) is None:
        return
    annotations = merged.setdefault("metadata", {}).setdefault("annotations", {})
    recorded = copy.deepcopy(config)
    recorded_annotations = (recorded.get("metadata") or {}).get("annotations")
    if isinstance(recorded_annotations, dict):
        recorded_annotations.pop(LAST_APPLIED, None)
        if not recorded_annotations:
            recorded["metadata"].pop("annotations")
    annotations[LAST_APPLIED] = json.dumps(recorded, separators=(",", ":")) + "\n"
