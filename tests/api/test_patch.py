"""Merge patch (RFC 7386) and JSON patch (RFC 6902), including algebraic laws."""

import copy
import datetime
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from setpoint.api import (
    PatchError,
    PatchTestFailed,
    apply_json_patch,
    apply_merge_patch,
    create_json_patch,
    create_merge_patch,
)
from setpoint.api.patch import json_copy, json_equal, merge_patch_changes
from tests.api.hypothesis_profile import property_test

# --- RFC 7386 appendix A examples -----------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_rfc7386_examples(target: Any, patch: Any, result: Any) -> None:
    assert apply_merge_patch(target, patch) == result


def test_merge_patch_does_not_mutate_or_alias_inputs() -> None:
    target = {"spec": {"replicas": 1, "template": {"x": [1]}}}
    patch = {"spec": {"replicas": 2, "new": {"y": [2]}}}
    saved = copy.deepcopy((target, patch))
    result = apply_merge_patch(target, patch)
    result["spec"]["template"]["x"].append(9)
    result["spec"]["new"]["y"].append(9)
    assert (target, patch) == saved


def test_create_merge_patch() -> None:
    original = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1]}
    modified = {"a": 1, "b": {"c": 5}, "e": [1, 2], "f": True}
    assert create_merge_patch(original, modified) == {
        "b": {"c": 5, "d": None},
        "e": [1, 2],
        "f": True,
    }
    assert create_merge_patch(original, original) == {}


def test_create_merge_patch_keeps_json_types_apart() -> None:
    assert create_merge_patch({"a": 1}, {"a": True}) == {"a": True}
    assert create_merge_patch({"a": 1}, {"a": 1.0}) == {"a": 1.0}


# --- JSON patch ---------------------------------------------------------------------------


def test_apply_json_patch_operations() -> None:
    doc: dict[str, Any] = {
        "metadata": {"resourceVersion": "5", "labels": {"a": "1"}},
        "spec": {"items": [1, 2]},
    }
    result = apply_json_patch(
        doc,
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
            {"op": "replace", "path": "/metadata/labels/a", "value": "2"},
            {"op": "add", "path": "/spec/items/-", "value": 3},
            {"op": "remove", "path": "/spec/items/0"},
            {"op": "copy", "from": "/metadata/labels", "path": "/spec/labels"},
            {"op": "move", "from": "/spec/labels/a", "path": "/spec/moved"},
        ],
    )
    assert result == {
        "metadata": {"resourceVersion": "5", "labels": {"a": "2"}},
        "spec": {"items": [2, 3], "labels": {}, "moved": "2"},
    }
    assert doc["metadata"]["labels"] == {"a": "1"}


def test_failed_test_op_names_index_and_path() -> None:
    doc = {"metadata": {"resourceVersion": "6"}}
    with pytest.raises(PatchTestFailed) as error:
        apply_json_patch(
            doc,
            [
                {"op": "add", "path": "/x", "value": 1},
                {"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
            ],
        )
    assert str(error.value) == (
        'json patch operation 1 (test /metadata/resourceVersion): test failed: value is "6", '
        'expected "5"'
    )
    assert doc == {"metadata": {"resourceVersion": "6"}}


def test_test_op_compares_json_types() -> None:
    with pytest.raises(PatchTestFailed):
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": True}])
    with pytest.raises(PatchTestFailed, match="/missing"):
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/missing", "value": 1}])


@pytest.mark.parametrize(
    ("ops", "fragment"),
    [
        ([{"op": "remove", "path": "/nope"}], "json patch operation 0 (remove /nope)"),
        ([{"op": "replace", "path": "/a/x", "value": 1}], "json patch operation 0 (replace /a/x)"),
        ([{"op": "add", "path": "/a/b/c", "value": 1}], "json patch operation 0 (add /a/b/c)"),
        ([{"op": "move", "from": "/nope", "path": "/z"}], "json patch operation 0 (move /z)"),
        ([{"op": "add", "path": "/l/9", "value": 1}], "json patch operation 0 (add /l/9)"),
        ([{"op": "frobnicate", "path": "/a"}], "unsupported op 'frobnicate'"),
        ([{"op": "add", "value": 1}], "missing 'path'"),
        ([{"op": "add", "path": "/q"}], "missing 'value'"),
        ([{"op": "copy", "path": "/q"}], "missing 'from'"),
        (["add"], "must be an object"),
    ],
)
def test_bad_operations(ops: list[Any], fragment: str) -> None:
    doc = {"a": {"b": 1}, "l": [1]}
    with pytest.raises(PatchError) as error:
        apply_json_patch(doc, ops)
    assert fragment in str(error.value)
    assert not isinstance(error.value, PatchTestFailed)


def test_json_patch_must_be_a_list() -> None:
    with pytest.raises(PatchError, match="list of operations"):
        apply_json_patch({}, {"op": "add"})  # type: ignore[arg-type]


def test_json_patch_values_are_not_aliased() -> None:
    value = {"x": [1]}
    ops = [{"op": "add", "path": "/v", "value": value}]
    result = apply_json_patch({}, ops)
    result["v"]["x"].append(2)
    assert value == {"x": [1]}


def test_create_json_patch_escapes_pointer_tokens() -> None:
    ops = create_json_patch({"a/b": 1, "c~d": 1}, {"a/b": 2})
    assert ops == [
        {"op": "remove", "path": "/c~0d"},
        {"op": "replace", "path": "/a~1b", "value": 2},
    ]
    assert create_json_patch({"a": 1}, {"a": 1}) == []


# --- laws -----------------------------------------------------------------------------------

scalars = st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
keys = st.text(max_size=4) | st.sampled_from(["a", "b", "/", "~", "~1", "-", "0"])


def json_values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4)
        ),
        max_leaves=12,
    )


values_without_null = json_values(scalars)
values_with_null = json_values(scalars | st.none())
objects_without_null = st.dictionaries(keys, values_without_null, max_size=4)


@property_test
@given(values_without_null, values_without_null)
def test_merge_patch_from_a_to_b_gives_b(a: Any, b: Any) -> None:
    assert json_equal(apply_merge_patch(a, create_merge_patch(a, b)), b)


@property_test
@given(values_with_null, values_with_null)
def test_merge_patch_is_idempotent(target: Any, patch: Any) -> None:
    once = apply_merge_patch(target, patch)
    assert json_equal(apply_merge_patch(once, patch), once)


@property_test
@given(objects_without_null, st.data())
def test_null_removes_a_key_and_keeps_the_rest(target: dict[str, Any], data: st.DataObject) -> None:
    if not target:
        return
    key = data.draw(st.sampled_from(sorted(target)))
    result = apply_merge_patch(target, {key: None})
    assert key not in result
    assert json_equal(result, {k: v for k, v in target.items() if k != key})


@property_test
@given(values_with_null, values_with_null)
def test_merge_patch_never_mutates_inputs(target: Any, patch: Any) -> None:
    saved = copy.deepcopy((target, patch))
    apply_merge_patch(target, patch)
    create_merge_patch(target, patch)
    assert json_equal([target, patch], list(saved))


@property_test
@given(values_with_null, values_with_null)
def test_json_patch_from_a_to_b_gives_b(a: Any, b: Any) -> None:
    saved = copy.deepcopy(a)
    assert json_equal(apply_json_patch(a, create_json_patch(a, b)), b)
    assert json_equal(a, saved)


@property_test
@given(values_with_null, values_with_null)
def test_merge_patch_changes_tells_whether_applying_changes_the_target(
    target: Any, patch: Any
) -> None:
    changed = not json_equal(target, apply_merge_patch(target, patch))
    assert merge_patch_changes(target, patch) is changed
    # Patches made from the target itself: the unchanged case is common, not just possible.
    assert merge_patch_changes(target, target) is not json_equal(
        target, apply_merge_patch(target, target)
    )


@pytest.mark.parametrize(
    ("target", "patch", "changed"),
    [
        ({"phase": "Ready", "n": 1}, {"phase": "Ready"}, False),
        ({"phase": "Ready"}, {"phase": "Pending"}, True),
        ({"phase": "Ready"}, {"gone": None}, False),
        ({"phase": "Ready"}, {"phase": None}, True),
        ({"n": 1}, {"n": 1.0}, True),  # a change of type is a change
        ({"n": 1}, {"n": True}, True),
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": None}}, False),
        ({"a": [1]}, {"a": {}}, True),
        ({}, {"a": {}}, True),
    ],
)
def test_merge_patch_changes_examples(target: Any, patch: Any, changed: bool) -> None:
    assert merge_patch_changes(target, patch) is changed


@property_test
@given(values_with_null)
def test_json_copy_is_an_equal_value_sharing_no_container(value: Any) -> None:
    copied = json_copy(value)
    assert json_equal(copied, value)

    def containers(v: Any) -> list[int]:
        if isinstance(v, dict):
            return [id(v), *(i for x in v.values() for i in containers(x))]
        if isinstance(v, list):
            return [id(v), *(i for x in v for i in containers(x))]
        return []

    assert not set(containers(copied)) & set(containers(value))


def test_json_copy_deep_copies_what_is_not_json() -> None:
    stamp = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    ordered = OrderedDict(a=[1])
    value = {"when": stamp, "pair": ([1], 2), "ordered": ordered}
    copied = json_copy(value)
    assert copied == value
    assert type(copied["ordered"]) is OrderedDict and copied["ordered"] is not ordered
    assert copied["ordered"]["a"] is not ordered["a"]
    assert copied["pair"][0] is not value["pair"][0]
