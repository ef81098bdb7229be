"""Field paths and field sets: what a manager owns, and the FieldsV1 form they are stored in.

A path is a tuple of path elements, each a string in FieldsV1's syntax: ``f:<field>`` (a struct
field or map key), ``k:<json>`` (an element of a map list, by its key fields), ``v:<json>`` (an
element of a set list) and ``i:<n>`` (a list index). A field set is a Python ``set`` of paths;
:func:`encode_fields` and :func:`decode_fields` convert it to and from the FieldsV1 trie, where
every leaf is ``{}`` and ``"."`` marks a node owned together with some of its children.

Which nodes of a value belong to its set follows structured-merge-diff: scalars, atomic values,
list elements and map entries that are not declared struct fields (so ``f:labels`` has only its
keys below it), and empty or null fields (:func:`field_set`). Comparing two values
(:func:`compare`) also counts a newly appearing (or vanishing) map or list as a node of its own,
which is why an Update manager that created the labels owns ``f:labels`` with ``"."``.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

from setpoint.cluster.apiserver.patch.merge_schema import MergeNode

Path = tuple[str, ...]
FieldSet = set[Path]

_MISSING: Final[Any] = object()
#: Fields of every object that are never owned (``stripmeta.go``).
STRIPPED: Final = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        ("f:metadata", "f:name"),
        ("f:metadata", "f:namespace"),
        ("f:metadata", "f:creationTimestamp"),
        ("f:metadata", "f:selfLink"),
        ("f:metadata", "f:uid"),
        ("f:metadata", "f:clusterName"),
        ("f:metadata", "f:generation"),
        ("f:metadata", "f:managedFields"),
        ("f:metadata", "f:resourceVersion"),
        ("f:metadata", "f:deletionTimestamp"),
        ("f:metadata", "f:deletionGracePeriodSeconds"),
    }
)
_STRIPPED_PREFIXES: Final = frozenset(p for p in STRIPPED if len(p) == 2)
#: A tuple, not ``dict | list``: that expression builds a union object at every call.
_CONTAINERS: Final = (dict, list)


_ENCODE: Final = msgspec.json.Encoder().encode
#: Values msgspec writes exactly as ``json.dumps`` below does (floats may print differently).
_EXACT_SCALARS: Final = (str, int, bool, type(None))


def _compact(value: Any) -> str:
    if type(value) in _EXACT_SCALARS or (
        type(value) is dict and all(type(v) in _EXACT_SCALARS for v in value.values())
    ):
        # The common key fields and set values, in C (json.dumps sets up an encoder per call).
        try:
            return _ENCODE(value).decode()
        except UnicodeEncodeError:
            pass  # a lone surrogate: json.dumps writes it as it is
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def element_key(node: MergeNode, item: Any, index: int) -> str:
    """The path element of list item ``item`` (at ``index``) in a list with schema ``node``."""
    if node.list_type == "map" and isinstance(item, dict):
        keys = {k: item[k] for k in sorted(node.map_keys) if k in item}
        return "k:" + _compact(keys)
    if node.list_type == "set":
        return "v:" + _compact(item)
    return f"i:{index}"


def field_set(node: MergeNode, value: Any, path: Path = ()) -> FieldSet:
    """The fields a value sets (an applied configuration's set), per structured-merge-diff."""
    out: FieldSet = set()
    _walk(node, value, path, out)
    return out


def _walk(node: MergeNode, value: Any, path: Path, out: FieldSet) -> None:
    if isinstance(value, dict):
        if node.atomic:
            out.add(path)
            return
        declared = node.is_struct
        for key, child_value in value.items():
            child_path = (*path, "f:" + key)
            _walk(node.child(key), child_value, child_path, out)
            if (
                child_value is None
                or (isinstance(child_value, dict) and not child_value)
                or not declared
                or not node.has_field(key)
            ):
                out.add(child_path)
    elif isinstance(value, list):
        if node.list_type not in ("set", "map"):
            out.add(path)
            return
        item_node = node.item
        for index, item in enumerate(value):
            item_path = (*path, element_key(node, item, index))
            _walk(item_node, item, item_path, out)
            out.add(item_path)
    else:
        out.add(path)


def all_paths(node: MergeNode, value: Any, path: Path, out: FieldSet) -> None:
    """Every node of a value that appears or vanishes as a whole (``path`` itself included)."""
    out.add(path)
    if isinstance(value, dict):
        if node.atomic:
            return
        for key, child_value in value.items():
            all_paths(node.child(key), child_value, (*path, "f:" + key), out)
    elif isinstance(value, list) and node.list_type in ("set", "map"):
        item_node = node.item
        for index, item in enumerate(value):
            all_paths(item_node, item, (*path, element_key(node, item, index)), out)


class Comparison:
    """Paths added, modified and removed between two versions of an object."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: FieldSet = set()
        self.modified: FieldSet = set()
        self.removed: FieldSet = set()

    @property
    def changed(self) -> FieldSet:
        """Added or modified paths (what an update takes from other managers)."""
        return self.added | self.modified

    def is_empty(self) -> bool:
        """Whether nothing differs."""
        return not (self.added or self.modified or self.removed)


def compare(node: MergeNode, old: Any, new: Any, *, value_structs: bool) -> Comparison:
    """What changed from ``old`` to ``new``.

    ``value_structs``: built-in objects, whose struct-typed fields exist (empty) in Go's zero
    value, so their appearing is not a change of its own; only their contents are.
    """
    result = Comparison()
    _compare(node, old, new, (), result, value_structs)
    return result


def _compare(
    node: MergeNode, old: Any, new: Any, path: Path, result: Comparison, value_structs: bool
) -> None:
    if isinstance(old, dict) and isinstance(new, dict) and not node.atomic:
        if not old and not new:
            return
        for key in old.keys() | new.keys():
            child = node.child(key)
            child_path = (*path, "f:" + key)
            before = old.get(key, _MISSING)
            after = new.get(key, _MISSING)
            if before is _MISSING:
                if value_structs and _in_zero_value(node, key, child, after):
                    _compare(child, type(after)(), after, child_path, result, value_structs)
                else:
                    all_paths(child, after, child_path, result.added)
            elif after is _MISSING:
                if value_structs and _in_zero_value(node, key, child, before):
                    _compare(child, before, type(before)(), child_path, result, value_structs)
                else:
                    all_paths(child, before, child_path, result.removed)
            else:
                _compare(child, before, after, child_path, result, value_structs)
        return
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and node.list_type in ("set", "map")
        and (old or new)
    ):
        item_node = node.item
        before_items = {element_key(node, item, i): item for i, item in enumerate(old)}
        after_items = {element_key(node, item, i): item for i, item in enumerate(new)}
        for key, item in before_items.items():
            if key not in after_items:
                all_paths(item_node, item, (*path, key), result.removed)
        for key, item in after_items.items():
            if key not in before_items:
                all_paths(item_node, item, (*path, key), result.added)
            else:
                _compare(item_node, before_items[key], item, (*path, key), result, value_structs)
        return
    if not _same(old, new):
        result.modified.add(path)


def _in_zero_value(parent: MergeNode, key: str, child: MergeNode, value: Any) -> bool:
    """Whether Go's zero value of a built-in already holds this field (as ``{}`` or null):
    struct-typed fields and fields without ``omitempty`` (``required`` in the schema)."""
    if not value or not isinstance(value, _CONTAINERS):
        return False
    if isinstance(value, dict):
        return (child.is_struct and not child.atomic) or key in parent.required
    return key in parent.required


def _same(a: Any, b: Any) -> bool:
    # 1 and 1.0 are the same JSON number; True and 1 are not.
    if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
        return False
    return bool(a == b)


def strip_untracked(paths: FieldSet, *, keep_only_status: bool, drop_status: bool) -> FieldSet:
    """``paths`` without the fields that are never owned (and status/spec per subresource)."""
    out: FieldSet = set()
    for path in paths:
        if not path or path in STRIPPED or path[:2] in _STRIPPED_PREFIXES:
            continue
        top = path[0]
        if keep_only_status and top != "f:status":
            continue
        if drop_status and top == "f:status":
            continue
        out.add(path)
    return out


# -- FieldsV1 -------------------------------------------------------------------------------

_ORDER: Final = {"f": 0, "k": 1, "v": 2, "i": 3}


def _sort_key(element: str) -> tuple[int, str]:
    return (_ORDER.get(element[:1], 4), element)


def encode_fields(paths: FieldSet) -> dict[str, Any]:
    """A field set as the FieldsV1 trie."""
    root: dict[str, Any] = {}
    members: set[Path] = set(paths)
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
    return _render(root, (), members)


def _render(node: dict[str, Any], path: Path, members: set[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node and path in members:
        out["."] = {}
    for element in sorted(node, key=_sort_key):
        out[element] = _render(node[element], (*path, element), members)
    return out


def decode_fields(trie: Any, path: Path = ()) -> FieldSet:
    """The field set of a FieldsV1 trie (malformed parts are skipped)."""
    out: FieldSet = set()
    _decode(trie, path, out)
    return out


def _decode(trie: Any, path: Path, out: FieldSet) -> None:
    if not isinstance(trie, dict):
        return
    if not trie:
        if path:
            out.add(path)
        return
    for element, child in trie.items():
        if element == ".":
            out.add(path)
        else:
            _decode(child, (*path, element), out)


def trie_holds(trie: Any, path: Path) -> bool:
    """Whether ``path`` is in the field set of a FieldsV1 trie (as :func:`decode_fields` reads
    it), found by walking down the path instead of decoding the whole trie."""
    node = trie
    for element in path:
        if not isinstance(node, dict):
            return False
        node = node.get(element)
        if node is None:
            return False
    if not isinstance(node, dict):
        return False
    return "." in node or (not node and bool(path))


# -- readable paths (conflict messages) ------------------------------------------------------


def path_string(path: Path) -> str:
    """A path as structured-merge-diff prints it: ``.spec.containers[name="app"].image``."""
    parts: list[str] = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            parts.append("." + rest)
        elif kind == "k":
            try:
                keys = json.loads(rest)
            except ValueError:
                keys = {}
            parts.append("[" + ",".join(f"{k}={_compact(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            parts.append("[=" + rest + "]")
        else:
            parts.append("[" + rest + "]")
    return "".join(parts)


def sort_paths(paths: FieldSet) -> list[Path]:
    """Paths in structured-merge-diff's iteration order (by element kind, then text)."""
    return sorted(paths, key=lambda p: [_sort_key(e) for e in p])


# -- the fields a create takes, in one walk -------------------------------------------------


class RepeatedElementError(ValueError):
    """A keyed list holds two items with the same key: :func:`created_fields` cannot merge
    their fields as the set union does; the caller takes the general path."""


def created_fields(
    root: MergeNode, obj: dict[str, Any], *, value_structs: bool, drop_status: bool
) -> dict[str, Any]:
    """The FieldsV1 trie of what creating ``obj`` takes: exactly
    ``encode_fields(strip_untracked(compare(root, {}, obj).changed, ...))``, built in one walk
    of the object instead of a set of path tuples sorted into a trie (every create pays it).

    ``drop_status``: the kind has a status subresource, so the main resource owns no status.
    The trie is built in FieldsV1 order as the walk goes: an object's keys sorted are its
    ``f:`` elements sorted (they share the prefix), as :func:`_sort_key` orders them.
    """
    out: dict[str, Any] = {}
    for key in sorted(obj):
        if drop_status and key == "status":
            continue
        child = _created(root, key, obj[key], ("f:" + key,), value_structs)
        if child is not None:
            out["f:" + key] = child
    return out


def _created(
    parent: MergeNode, key: str, value: Any, path: Path, value_structs: bool
) -> dict[str, Any] | None:
    """The trie under ``path`` when field ``key`` appears with ``value`` (``_compare``'s
    "before is missing" branch), None when nothing there is tracked."""
    if not value or not isinstance(value, _CONTAINERS):
        # A scalar or an empty value: a leaf, tracked unless stripped (only the top two
        # levels can be).
        member = len(path) > 2 or (path not in STRIPPED and path[:2] not in _STRIPPED_PREFIXES)
        return {} if member else None
    node = parent.child(key)
    if value_structs and _in_zero_value(parent, key, node, value):
        return _filled(node, value, path, value_structs)
    return _appeared(node, value, path)


def _filled(node: MergeNode, value: Any, path: Path, value_structs: bool) -> dict[str, Any] | None:
    """``_compare(node, <empty>, value)``: a field Go's zero value already holds, filled in."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and not node.atomic:
        for key in sorted(value):
            child_path = (*path, "f:" + key)
            if child_path[:2] in _STRIPPED_PREFIXES:
                continue
            child = _created(node, key, value[key], child_path, value_structs)
            if child is not None:
                out["f:" + key] = child
        return out or None
    if isinstance(value, list) and node.list_type in ("set", "map") and value:
        item_node = node.item
        items = {element_key(node, item, i): item for i, item in enumerate(value)}
        for element in sorted(items, key=_sort_key):
            child = _appeared(item_node, items[element], (*path, element))
            if child is not None:
                out[element] = child
        return out or None
    member = path not in STRIPPED and path[:2] not in _STRIPPED_PREFIXES
    return {} if member else None


def _appeared(node: MergeNode, value: Any, path: Path) -> dict[str, Any] | None:
    """``all_paths``: a value that appears as a whole, every node of it tracked.

    Built in FieldsV1 order as it goes (a dict's keys sorted share the ``f:`` prefix, so plain
    string order is :func:`_sort_key`'s); below the second level nothing is stripped, so a
    scalar or empty value there is a member leaf without a call of its own.
    """
    member = len(path) > 2 or (path not in STRIPPED and path[:2] not in _STRIPPED_PREFIXES)
    out: dict[str, Any] = {".": {}} if member else {}
    empty = True
    if isinstance(value, dict):
        if value and not node.atomic:
            deep = len(path) >= 2
            for key in sorted(value):
                child_value = value[key]
                element = "f:" + key
                if deep and (not child_value or not isinstance(child_value, _CONTAINERS)):
                    out[element] = {}
                    empty = False
                    continue
                child_path = (*path, element)
                if child_path[:2] in _STRIPPED_PREFIXES:
                    continue
                child = _appeared(node.child(key), child_value, child_path)
                if child is not None:
                    out[element] = child
                    empty = False
    elif isinstance(value, list) and node.list_type in ("set", "map"):
        item_node = node.item
        items: dict[str, Any] = {}
        for index, item in enumerate(value):
            element = element_key(node, item, index)
            if element in items:
                raise RepeatedElementError(element)
            items[element] = item
        for element in sorted(items, key=_sort_key):
            child = _appeared(item_node, items[element], (*path, element))
            if child is not None:
                out[element] = child
                empty = False
    if empty:
        return {} if member else None
    return out
