"""Properties that hold upstream for strategic merge patch and server-side apply (hypothesis).

- applying the same configuration twice changes nothing the second time;
- a strategic merge patch with ``$patch: replace`` is a replacement;
- without directives or lists, a strategic merge patch of a map is a JSON merge patch;
- when only appliers write, managedFields cover exactly the fields that are set;
- with appliers and updaters, every set field is owned and no one owns a field that is not set.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from setpoint.api.patch import apply_merge_patch
from setpoint.cluster.apiserver.patch.field_paths import decode_fields, field_set
from setpoint.cluster.apiserver.patch.managed_fields import track_update, tracked
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode, builtin_root
from setpoint.cluster.apiserver.patch.server_side_apply import merge, server_side_apply
from setpoint.cluster.apiserver.patch.strategic import strategic_merge_patch

keys = st.sampled_from(["a", "b", "c", "d"])
values = st.sampled_from(["1", "2", "3"])
string_maps = st.dictionaries(keys, values, max_size=4)
finalizers = st.lists(st.sampled_from(["x.io/a", "x.io/b", "x.io/c"]), unique=True, max_size=3)
managers = st.sampled_from(["alice", "bob", "carol"])


def _root(kind: str = "ConfigMap") -> MergeNode:
    root = builtin_root("v1", kind)
    assert root is not None
    return root


def configmap(data: dict[str, str], labels: dict[str, str], final: list[str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "c"}
    if labels:
        metadata["labels"] = labels
    if final:
        metadata["finalizers"] = final
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if data:
        obj["data"] = data
    return obj


configs = st.builds(configmap, string_maps, string_maps, finalizers)


def _apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool) -> Any:
    return server_side_apply(
        _root(),
        live,
        config,
        manager=manager,
        api_version="v1",
        subresource="",
        force=force,
        now="2026-01-01T00:00:00Z",
        builtin=True,
        has_status=False,
    )


def _with_managed(result: Any) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(result.obj)
    obj.setdefault("metadata", {})["managedFields"] = result.managed_fields
    return obj


@settings(max_examples=60, deadline=None)
@given(first=configs, second=configs, manager=managers)
def test_applying_twice_is_a_no_op(
    first: dict[str, Any], second: dict[str, Any], manager: str
) -> None:
    live = _with_managed(_apply(None, first, "someone", False))
    once = _apply(live, second, manager, True)
    obj = _with_managed(once)
    twice = _apply(obj, second, manager, True)
    assert not twice.changed
    assert twice.obj == once.obj
    assert twice.managed_fields == once.managed_fields


@settings(max_examples=60, deadline=None)
@given(live=string_maps, replacement=string_maps)
def test_replace_directive_replaces_a_map(
    live: dict[str, str], replacement: dict[str, str]
) -> None:
    patched = strategic_merge_patch(
        {"data": live}, {"data": {"$patch": "replace", **replacement}}, _root()
    )
    assert patched == {"data": replacement}


@settings(max_examples=40, deadline=None)
@given(
    live=st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, min_size=1, max_size=4),
    replacement=st.lists(st.sampled_from(["a", "b", "e"]), unique=True, max_size=3),
)
def test_replace_directive_replaces_a_merge_list(live: list[str], replacement: list[str]) -> None:
    containers = [{"name": n, "image": f"{n}:1"} for n in live]
    wanted = [{"name": n, "image": f"{n}:2"} for n in replacement]
    patched = strategic_merge_patch(
        {"spec": {"containers": containers}},
        {"spec": {"containers": [*wanted, {"$patch": "replace"}]}},
        _root("Pod"),
    )
    assert patched == {"spec": {"containers": wanted}}


patch_maps = st.dictionaries(keys, st.one_of(st.none(), values), max_size=4)


@settings(max_examples=60, deadline=None)
@given(live=string_maps, patch=patch_maps)
def test_map_patches_without_lists_are_merge_patches(
    live: dict[str, str], patch: dict[str, str | None]
) -> None:
    document = {"data": live}
    assert strategic_merge_patch(document, {"data": patch}, _root()) == apply_merge_patch(
        document, {"data": patch}
    )


@example(  # found by hypothesis: an applier drops its only map, then applies again
    steps=[
        ("alice", {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "labels": {"a": "1"}}}),
        ("alice", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        ("alice", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    ]
)  # fmt: skip
@settings(max_examples=50, deadline=None)
@given(steps=st.lists(st.tuples(managers, configs), min_size=1, max_size=5))
def test_managed_fields_cover_exactly_the_set_fields(
    steps: list[tuple[str, dict[str, Any]]],
) -> None:
    live: dict[str, Any] | None = None
    for manager, config in steps:
        live = _with_managed(_apply(live, config, manager, True))
    assert live is not None
    owned: set[tuple[str, ...]] = set()
    for entry in live["metadata"]["managedFields"]:
        fields = decode_fields(entry["fieldsV1"])
        assert fields, "an entry without fields is dropped"
        owned |= fields
    present = tracked(field_set(_root(), live), "", False)
    present.discard(("f:metadata", "f:managedFields"))
    # Maps emptied by removals stay as {} (owned by nobody); everything else matches.
    present = {p for p in present if not _empty_map(live, p)}
    assert owned == present


def _empty_map(obj: dict[str, Any], path: tuple[str, ...]) -> bool:
    value: Any = obj
    for element in path:
        if not element.startswith("f:") or not isinstance(value, dict):
            return False
        value = value.get(element[2:])
    return value == {}


@settings(max_examples=80, deadline=None)
@given(
    live=st.lists(st.sampled_from("abcdef"), unique=True, max_size=5),
    config=st.lists(st.sampled_from("abcdefg"), unique=True, max_size=5),
)
def test_merged_sets_keep_both_orders(live: list[str], config: list[str]) -> None:
    """Applying a set keeps every value once, in the configuration's order for its own values and
    the live order for the others (structured-merge-diff's list merge)."""
    node = _root().child("metadata").child("finalizers")
    merged = merge(node, live, config)
    assert sorted(merged) == sorted(set(live) | set(config))
    assert [v for v in merged if v in config] == config
    assert [v for v in merged if v not in config] == [v for v in live if v not in config]


def _exists(obj: Any, path: tuple[str, ...]) -> bool:
    value: Any = obj
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f" and isinstance(value, dict) and rest in value:
            value = value[rest]
        elif kind == "v" and isinstance(value, list) and json.loads(rest) in value:
            value = json.loads(rest)
        else:
            return False
    return True


def _update(live: dict[str, Any] | None, config: dict[str, Any], manager: str) -> dict[str, Any]:
    """A PUT of ``config`` (no managedFields sent) by ``manager``, tracked as an Update."""
    new = copy.deepcopy(config)
    entries = track_update(
        _root(),
        live,
        new,
        manager=manager,
        api_version="v1",
        subresource="",
        now="2026-01-01T00:00:00Z",
        builtin=True,
        has_status=False,
        requested=None,
    )
    if entries:
        new["metadata"]["managedFields"] = entries
    return new


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["apply", "update"]), managers, configs), min_size=1, max_size=6
    )
)
def test_ownership_never_dangles_and_every_set_field_is_owned(
    steps: list[tuple[str, str, dict[str, Any]]],
) -> None:
    live: dict[str, Any] | None = None
    for operation, manager, config in steps:
        if operation == "apply":
            live = _with_managed(_apply(live, config, manager, True))
        else:
            live = _update(live, config, manager)
    assert live is not None
    owned: set[tuple[str, ...]] = set()
    for entry in live["metadata"].get("managedFields", []):
        owned |= decode_fields(entry["fieldsV1"])
    assert all(_exists(live, path) for path in owned), "ownership of a field that is not set"
    present = tracked(field_set(_root(), live), "", False)
    present.discard(("f:metadata", "f:managedFields"))
    present = {p for p in present if not _empty_map(live, p)}
    assert present <= owned, "a set field nobody owns"
