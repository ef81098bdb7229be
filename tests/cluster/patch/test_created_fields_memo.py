"""A create's FieldsV1 remembered by the object's shape is the trie the walk builds, always."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.patch import created_fields_memo
from setpoint.cluster.apiserver.patch.created_fields_memo import CreatedFieldsMemo
from setpoint.cluster.apiserver.patch.field_paths import RepeatedElementError, created_fields
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode, builtin_root, custom_root
from tests.cluster.patch.test_created_fields import _JSON, _POD_SHAPES, OBJECTS


def _ordered(fields: Any) -> str:
    """The trie as stored (its keys' order included)."""
    return json.dumps(fields)


def _roots() -> list[tuple[MergeNode, bool]]:
    """Merge schemas with the ``value_structs`` their writes use."""
    roots: list[tuple[MergeNode, bool]] = [(custom_root(None), False)]
    for api_version, kind in [("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Pod")]:
        root = builtin_root(api_version, kind)
        assert root is not None
        roots.append((root, True))
    return roots


ROOTS = _roots()
# Scalars of every JSON type, and the empty containers that make the same leaf.
_LEAVES = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
_LEAVES_OR_EMPTY = _LEAVES | st.just({}) | st.just([])


def _respelled(value: Any, data: st.DataObject) -> Any:
    """``value`` with every leaf (a scalar or an empty container) drawn anew: the same shape."""
    if value and isinstance(value, dict):
        return {key: _respelled(child, data) for key, child in value.items()}
    if value and isinstance(value, list):
        return [_respelled(item, data) for item in value]
    return data.draw(_LEAVES_OR_EMPTY)


def _walked(root: MergeNode, obj: dict[str, Any], value_structs: bool, drop_status: bool) -> Any:
    """The walk's answer, or the error it raises."""
    try:
        return created_fields(root, obj, value_structs=value_structs, drop_status=drop_status)
    except RepeatedElementError as exc:
        return exc


def _remembered(
    memo: CreatedFieldsMemo, root: MergeNode, obj: dict[str, Any], value_structs: bool, drop: bool
) -> Any:
    try:
        return memo(root, obj, value_structs=value_structs, drop_status=drop)
    except RepeatedElementError as exc:
        return exc


def _same_answer(expected: Any, got: Any) -> None:
    if isinstance(expected, RepeatedElementError):
        assert isinstance(got, RepeatedElementError)
    else:
        assert _ordered(got) == _ordered(expected)


_TOP_LEVEL = st.dictionaries(
    st.sampled_from(["spec", "status", "metadata", "data", "apiVersion", "kind"]),
    _JSON,
    max_size=4,
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_TOP_LEVEL | _POD_SHAPES, min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, len(ROOTS) - 1), st.booleans()), min_size=1, max_size=3),
    st.data(),
)
def test_remembered_tries_are_the_walks_for_objects_of_any_shape(
    objects: list[dict[str, Any]], settings_: list[tuple[int, bool]], data: st.DataObject
) -> None:
    """Objects, and objects of the same shape with other leaves, through a memo small enough to
    start over, under several schemas and options: each answer is the walk's for that object,
    however often the shape was seen and whatever was done to earlier answers."""
    memo = CreatedFieldsMemo(size=3)
    for obj in objects:
        respelled = {key: _respelled(value, data) for key, value in obj.items()}
        for twin in (obj, respelled, obj):
            for index, drop_status in settings_:
                root, value_structs = ROOTS[index]
                expected = _walked(root, twin, value_structs, drop_status)
                got = _remembered(memo, root, twin, value_structs, drop_status)
                _same_answer(expected, got)
                if isinstance(got, dict):
                    got["f:mutated"] = {}  # a caller changing its trie changes no other's
                    for child in got.values():
                        child.clear()


@pytest.mark.parametrize(("api_version", "kind", "obj"), OBJECTS, ids=[o[1] for o in OBJECTS])
@pytest.mark.parametrize("drop_status", [False, True])
def test_built_in_objects_answer_the_same_when_remembered(
    api_version: str, kind: str, obj: dict[str, Any], drop_status: bool
) -> None:
    root = builtin_root(api_version, kind)
    assert root is not None
    full = {"apiVersion": api_version, "kind": kind, **obj}
    without_lists = {
        key: value
        for key, value in full.items()
        if key != "metadata" and key != "spec" and key != "rules"
    } | {"metadata": {k: v for k, v in obj["metadata"].items() if not isinstance(v, list)}}
    memo = CreatedFieldsMemo()
    for candidate in (full, without_lists):
        expected = created_fields(root, candidate, value_structs=True, drop_status=drop_status)
        for _ in range(2):
            got = memo(root, candidate, value_structs=True, drop_status=drop_status)
            assert _ordered(got) == _ordered(expected)


def test_a_schema_is_part_of_the_key() -> None:
    """A ConfigMap's shape under another kind's schema (a CRD's next revision is another node
    too) is not answered from the first schema's trie."""
    memo = CreatedFieldsMemo()
    obj = {"metadata": {"labels": {"a": "b"}}, "spec": {"x": {"y": 1}}, "status": {"s": 1}}
    for root, value_structs in ROOTS:
        for drop_status in (False, True):
            got = memo(root, obj, value_structs=value_structs, drop_status=drop_status)
            expected = created_fields(
                root, obj, value_structs=value_structs, drop_status=drop_status
            )
            assert _ordered(got) == _ordered(expected)


def test_large_objects_are_walked_and_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(created_fields_memo, "MAX_SHAPE_ITEMS", 10)
    root = builtin_root("v1", "ConfigMap")
    assert root is not None
    memo = CreatedFieldsMemo()
    big = {"data": {f"k{i}": "v" for i in range(20)}}
    got = memo(root, big, value_structs=True, drop_status=False)
    assert _ordered(got) == _ordered(
        created_fields(root, big, value_structs=True, drop_status=False)
    )
    assert not memo._tries


@pytest.mark.parametrize(
    "pair",
    [
        # The same keys in the same order, nested differently.
        ({"spec": {"a": {"b": 1, "c": 1}}}, {"spec": {"a": {"b": 1}, "c": 1}}),
        ({"spec": {"a": {"b": {"c": 1}}}}, {"spec": {"a": {"b": 1}, "c": 1}}),
        ({"spec": {"a": {"b": 1, "c": 1}}}, {"spec": {"a": 1, "b": {"c": 1}}}),
        # A non-empty object where the other has a leaf.
        ({"data": {"a": {"b": 1}}}, {"data": {"a": 1, "b": 1}}),
        ({"metadata": {"labels": {"a": "b"}}}, {"metadata": {"labels": {}}, "a": "b"}),
    ],
)
def test_nesting_is_part_of_the_shape(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for root, value_structs in ROOTS:
        memo = CreatedFieldsMemo()
        for obj in (*pair, *pair):
            expected = created_fields(root, obj, value_structs=value_structs, drop_status=True)
            got = memo(root, obj, value_structs=value_structs, drop_status=True)
            assert _ordered(got) == _ordered(expected)
