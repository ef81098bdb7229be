"""Structural defaulting: absent or disallowed-null fields get their default, recursively."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.cluster.apiserver.schema import apply_defaults, compile_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "default": "fast"},
                "nullable": {"type": "string", "nullable": True, "default": "n"},
                "nested": {
                    "type": "object",
                    "properties": {"level": {"type": "integer", "default": 3}},
                },
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"protocol": {"type": "string", "default": "TCP"}},
                    },
                },
                "limits": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"unit": {"type": "string", "default": "Mi"}},
                    },
                },
                "list": {"type": "object", "default": {"a": [1]}},
            },
        }
    },
}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {},
            {"spec": {"replicas": 1, "mode": "fast", "nullable": "n", "list": {"a": [1]}}},
        ),
        (
            {"spec": {"replicas": 5, "mode": None, "nullable": None}},
            {"spec": {"replicas": 5, "mode": "fast", "nullable": None, "list": {"a": [1]}}},
        ),
        (
            {"spec": {"nested": {}, "ports": [{}, {"protocol": "UDP"}], "limits": {"cpu": {}}}},
            {
                "spec": {
                    "replicas": 1,
                    "mode": "fast",
                    "nullable": "n",
                    "list": {"a": [1]},
                    "nested": {"level": 3},
                    "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}],
                    "limits": {"cpu": {"unit": "Mi"}},
                }
            },
        ),
    ],
)
def test_defaults(obj: dict[str, Any], expected: dict[str, Any]) -> None:
    apply_defaults(SCHEMA, obj)
    assert obj == expected


def test_defaults_are_copies() -> None:
    first: dict[str, Any] = {"spec": {}}
    second: dict[str, Any] = {"spec": {}}
    apply_defaults(SCHEMA, first)
    apply_defaults(SCHEMA, second)
    first["spec"]["list"]["a"].append(2)
    assert second["spec"]["list"] == {"a": [1]}


def test_null_items_get_the_items_default() -> None:
    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "string", "default": "z"}},
            "m": {"type": "object", "additionalProperties": {"type": "string", "default": "q"}},
        },
    }
    obj: dict[str, Any] = {"xs": ["a", None], "m": {"k": None}}
    apply_defaults(schema, obj)
    assert obj == {"xs": ["a", "z"], "m": {"k": "q"}}


def test_schema_without_defaults_leaves_objects_alone() -> None:
    compiled = compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    obj: dict[str, Any] = {"b": None}
    compiled.apply_defaults(obj)
    assert obj == {"b": None}


def test_a_null_default_is_a_default() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "nullable": True, "default": None}},
    }
    obj: dict[str, Any] = {}
    apply_defaults(schema, obj)
    assert obj == {"a": None}
