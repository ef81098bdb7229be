"""Pruning unknown fields, dropping disallowed nulls, and the unknown-field paths reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from setpoint.cluster.apiserver.schema import compile_schema, prune

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "free": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {
                        "known": {"type": "object", "properties": {"a": {"type": "string"}}}
                    },
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "properties": {"x": {"type": "string"}}}
                    },
                },
                "any": {"type": "object", "additionalProperties": True},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


@pytest.mark.parametrize(
    ("obj", "pruned", "removed"),
    [
        (
            {"spec": {"size": 1, "foo": 2}},
            {"spec": {"size": 1}},
            ["spec.foo"],
        ),
        ({"extra": 1, "spec": {}}, {"spec": {}}, ["extra"]),
        (
            {"spec": {"items": [{"name": "a", "bad": 1}, {"name": "b"}]}},
            {"spec": {"items": [{"name": "a"}, {"name": "b"}]}},
            ["spec.items[0].bad"],
        ),
        (
            {"spec": {"labels": {"k": "v", "j": "w"}}},
            {"spec": {"labels": {"k": "v", "j": "w"}}},
            [],
        ),
        (
            {"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x", "b": 2}}}},
            {"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x"}}}},
            ["spec.free.known.b"],
        ),
        (
            {
                "spec": {
                    "template": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "x"},
                        "spec": {"x": "1", "y": 2},
                        "other": 1,
                    }
                }
            },
            {
                "spec": {
                    "template": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "x"},
                        "spec": {"x": "1"},
                    }
                }
            },
            ["spec.template.other", "spec.template.spec.y"],
        ),
        (
            {"spec": {"any": {"scalar": 1, "nested": {"gone": 1}}}},
            {"spec": {"any": {"scalar": 1, "nested": {}}}},
            ["spec.any.nested.gone"],
        ),
        (
            {"spec": {"metadata": {"x": 1}}},
            {"spec": {}},
            ["spec.metadata"],  # only the resource's own meta fields are always kept
        ),
    ],
)
def test_prune(obj: dict[str, Any], pruned: dict[str, Any], removed: list[str]) -> None:
    assert prune(SCHEMA, obj) == removed
    assert obj == pruned


def test_resource_meta_fields_are_kept_at_the_root() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "x": 1}
    assert prune(SCHEMA, obj) == ["x"]
    assert obj == {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}


def test_paths_are_sorted() -> None:
    obj = {"spec": {"zz": 1, "aa": 1, "items": [{"q": 1}]}, "b": 1}
    assert prune(SCHEMA, obj) == ["b", "spec.aa", "spec.items[0].q", "spec.zz"]


def test_without_a_schema_everything_but_meta_is_pruned() -> None:
    obj = {"apiVersion": "v", "kind": "K", "metadata": {}, "spec": {"a": 1}}
    assert prune(None, obj) == ["spec"]
    assert obj == {"apiVersion": "v", "kind": "K", "metadata": {}}


def test_preserve_unknown_fields_at_the_root() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    obj = {"spec": {"a": 1}, "whatever": [1]}
    assert prune(schema, copy.deepcopy(obj)) == []


def test_embedded_metadata_is_coerced_to_object_meta() -> None:
    compiled = compile_schema(SCHEMA)
    obj = {
        "spec": {
            "template": {
                "metadata": {"name": "x", "bogus": 1, "labels": {}, "creationTimestamp": None},
                "spec": {},
            }
        }
    }
    assert compiled.prune(obj) == ["spec.template.metadata.bogus"]
    assert obj["spec"]["template"]["metadata"] == {"name": "x"}


NULLS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "plain": {"type": "string"},
                "nullable": {"type": "string", "nullable": True},
                "defaulted": {"type": "string", "default": "d"},
                "map": {"type": "object", "additionalProperties": {"type": "string"}},
                "list": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}


def test_normalize_drops_disallowed_nulls_then_defaults() -> None:
    compiled = compile_schema(NULLS_SCHEMA)
    obj = {
        "spec": {
            "plain": None,
            "nullable": None,
            "defaulted": None,
            "map": {"k": None},
            "list": [None],
        }
    }
    assert compiled.normalize(obj) == []
    assert obj == {
        "spec": {"nullable": None, "defaulted": "d", "map": {}, "list": [None]},
    }
    # Nulls inside lists are not pruned: upstream keeps them and validation reports them.
    assert [error.message for error in compiled.validate(obj)] == [
        'spec.list[0]: Invalid value: "null": spec.list[0] in body must be of type string: "null"'
    ]


def test_normalize_reports_unknown_fields() -> None:
    compiled = compile_schema(NULLS_SCHEMA)
    obj = {"spec": {"plain": "a", "unknown": 1}}
    assert compiled.normalize(obj) == ["spec.unknown"]
    assert obj == {"spec": {"plain": "a", "defaulted": "d"}}
