"""Custom resource validation: kube-openapi semantics and messages, keyword by keyword."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.cluster.apiserver.schema import compile_schema, validate


def _spec_schema(**spec_properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec_properties}},
    }


def _messages(schema: dict[str, Any], obj: Any, old: Any = None) -> list[str]:
    return [error.message for error in validate(schema, obj, old)]


# (property schema, value, expected messages) — the value is put at spec.x.
CASES: list[tuple[dict[str, Any], Any, list[str]]] = [
    # types
    ({"type": "integer"}, 3, []),
    (
        {"type": "integer"},
        "x",
        ['spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'],
    ),
    ({"type": "integer"}, 2.0, []),  # an integer-valued float is an integer
    (
        {"type": "integer"},
        2.5,
        ['spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"'],
    ),
    ({"type": "number"}, 2, []),  # an integer is a number
    (
        {"type": "number"},
        True,
        ['spec.x: Invalid value: "boolean": spec.x in body must be of type number: "boolean"'],
    ),
    ({"type": "boolean"}, False, []),
    (
        {"type": "boolean"},
        1,
        ['spec.x: Invalid value: "integer": spec.x in body must be of type boolean: "integer"'],
    ),
    (
        {"type": "string"},
        {"a": 1},
        ['spec.x: Invalid value: "object": spec.x in body must be of type string: "object"'],
    ),
    (
        {"type": "object"},
        [1],
        ['spec.x: Invalid value: "array": spec.x in body must be of type object: "array"'],
    ),
    (
        {"type": "array", "items": {"type": "string"}},
        "a",
        ['spec.x: Invalid value: "string": spec.x in body must be of type array: "string"'],
    ),
    # null and nullable
    (
        {"type": "string"},
        None,
        ['spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'],
    ),
    ({"type": "string", "nullable": True}, None, []),
    ({"x-kubernetes-preserve-unknown-fields": True}, None, []),
    # int-or-string
    ({"x-kubernetes-int-or-string": True}, 80, []),
    ({"x-kubernetes-int-or-string": True}, "http", []),
    (
        {"x-kubernetes-int-or-string": True},
        True,
        [
            'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: '
            '"boolean"'
        ],
    ),
    # enum
    ({"type": "string", "enum": ["a", "b"]}, "a", []),
    (
        {"type": "string", "enum": ["a", "b"]},
        "c",
        ['spec.x: Unsupported value: "c": supported values: "a", "b"'],
    ),
    (
        {"type": "integer", "enum": [1, 2]},
        3,
        ['spec.x: Unsupported value: 3: supported values: "1", "2"'],
    ),
    ({"type": "integer", "enum": [1.0, 2.0]}, 1, []),
    (
        {"type": "string", "nullable": True, "enum": ["a"]},
        None,
        ['spec.x: Unsupported value: "null": supported values: "a"'],
    ),
    (
        {"type": "string", "nullable": True, "enum": [None, "a"]},
        None,
        ['spec.x: Unsupported value: "null": supported values: "null", "a"'],
    ),
    # numbers
    ({"type": "integer", "minimum": 1}, 1, []),
    (
        {"type": "integer", "minimum": 1},
        0,
        ["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"],
    ),
    (
        {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
        1,
        ["spec.x: Invalid value: 1: spec.x in body should be greater than 1"],
    ),
    (
        {"type": "integer", "maximum": 10},
        11,
        ["spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10"],
    ),
    (
        {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
        10,
        ["spec.x: Invalid value: 10: spec.x in body should be less than 10"],
    ),
    (
        {"type": "number", "maximum": 1.5},
        2.25,
        ["spec.x: Invalid value: 2.25: spec.x in body should be less than or equal to 1.5"],
    ),
    (
        {"type": "integer", "multipleOf": 3},
        7,
        ["spec.x: Invalid value: 7: spec.x in body should be a multiple of 3"],
    ),
    ({"type": "integer", "multipleOf": 3}, 9, []),
    ({"type": "number", "multipleOf": 0.1}, 0.3, []),  # float error tolerated like go-openapi
    (
        {"type": "number", "multipleOf": 0.5},
        0.7,
        ["spec.x: Invalid value: 0.7: spec.x in body should be a multiple of 0.5"],
    ),
    # strings
    ({"type": "string", "maxLength": 3}, "abc", []),
    (
        {"type": "string", "maxLength": 3},
        "abcd",
        ["spec.x: Too long: may not be more than 3 bytes"],
    ),
    ({"type": "string", "maxLength": 3}, "äöü", []),  # counted in characters
    (
        {"type": "string", "minLength": 2},
        "a",
        ['spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'],
    ),
    (
        {"type": "string", "pattern": "^[a-z]+$"},
        "A1",
        ["spec.x: Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'"],
    ),
    ({"type": "string", "pattern": "[0-9]"}, "abc1", []),  # unanchored search like Go
    (
        {"type": "string", "maxLength": 2, "pattern": "^[a-z]+$"},
        "ABC",
        ["spec.x: Too long: may not be more than 2 bytes"],  # first string failure only
    ),
    # formats
    ({"type": "string", "format": "date-time"}, "2024-01-02T03:04:05Z", []),
    (
        {"type": "string", "format": "date-time"},
        "yesterday",
        [
            'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: '
            '"yesterday"'
        ],
    ),
    ({"type": "string", "format": "int32"}, "not checked", []),  # unsupported: dropped
    ({"type": "string", "format": "quantity"}, "junk", []),
    # arrays
    (
        {"type": "array", "items": {"type": "integer"}},
        [1, "a"],
        ['spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type integer: "string"'],
    ),
    (
        {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
        [1, 2, 3],
        ["spec.x: Too many: 3: must have at most 2 items"],
    ),
    (
        {"type": "array", "items": {"type": "integer"}, "minItems": 2},
        [1],
        ["spec.x: Invalid value: 1: spec.x in body should have at least 2 items"],
    ),
    (
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        [1, 1],
        ['spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates'],
    ),
    # objects
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {},
        ["spec.x.a: Required value"],
    ),
    (
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"k": "v"},
        ['spec.x.k: Invalid value: "string": spec.x.k in body must be of type integer: "string"'],
    ),
    (
        {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
        {"a": "1", "b": "2"},
        ["spec.x: Too many: 2: must have at most 1 items"],
    ),
    (
        {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
        {},
        ["spec.x: Invalid value: 0: spec.x in body should have at least 1 properties"],
    ),
    (
        {"type": "object", "additionalProperties": False},
        {"a": 1},
        ['spec.x: Invalid value: "a": spec.x.a in body is a forbidden property'],
    ),
    # combinators
    (
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {},
        [
            '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
            "spec.x.a: Required value",
        ],
    ),
    ({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"b": 1}, []),
    (
        {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"a": 1, "b": 2},
        [
            '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
            "Found 2 valid alternatives"
        ],
    ),
    (
        {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]},
        9,
        [
            "spec.x: Invalid value: 9: spec.x in body should be less than or equal to 5",
            '<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf)',
        ],
    ),
    (
        {"type": "string", "not": {"enum": ["forbidden"]}},
        "forbidden",
        ['<nil>: Invalid value: "": "spec.x" must not validate the schema (not)'],
    ),
]


@pytest.mark.parametrize(("schema", "value", "expected"), CASES)
def test_keyword(schema: dict[str, Any], value: Any, expected: list[str]) -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "W", "spec": {"x": value}}
    assert _messages(_spec_schema(x=schema), obj) == expected


def test_required_at_the_root_and_nested() -> None:
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}},
            }
        },
    }
    assert _messages(schema, {}) == ["spec: Required value"]
    assert _messages(schema, {"spec": {}}) == ["spec.name: Required value"]


def test_causes_have_reasons() -> None:
    schema = _spec_schema(
        a={"type": "integer"},
        b={"type": "string", "enum": ["x"]},
        c={"type": "string", "maxLength": 1},
        d={"type": "array", "items": {"type": "string"}, "maxItems": 0},
        e={"type": "integer", "minimum": 5},
    )
    obj = {"spec": {"a": "1", "b": "y", "c": "zz", "d": ["q"], "e": 1}}
    reasons = [error.type for error in validate(schema, obj)]
    assert reasons == [
        "FieldValueTypeInvalid",
        "FieldValueNotSupported",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueInvalid",
    ]


def test_errors_follow_the_objects_key_order() -> None:
    schema = _spec_schema(z={"type": "integer"}, a={"type": "integer"})
    fields = [e.field for e in validate(schema, {"spec": {"a": "x", "z": "y"}})]
    assert fields == ["spec.a", "spec.z"]


def test_wrong_type_does_not_stop_other_checks() -> None:
    schema = _spec_schema(x={"type": "integer", "enum": [1]})
    assert _messages(schema, {"spec": {"x": "a"}}) == [
        'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"',
        'spec.x: Unsupported value: "a": supported values: "1"',
    ]


def test_validate_value_reports_under_a_prefix() -> None:
    compiled = compile_schema(
        {
            "type": "object",
            "properties": {
                "status": {
                    "type": "object",
                    "required": ["phase"],
                    "properties": {"replicas": {"type": "integer"}, "phase": {"type": "string"}},
                }
            },
        }
    )
    status_schema = compiled.property("status")
    assert status_schema is not None
    errors = status_schema.validate_value({"replicas": "x"}, field_prefix="status")
    assert [e.message for e in errors] == [
        'status.replicas: Invalid value: "string": replicas in body must be of type integer: '
        '"string"',
        "status.phase: Required value",
    ]
    assert compiled.property("nothing") is None


def test_no_schema_accepts_everything() -> None:
    assert validate(None, {"spec": {"anything": 1}}) == []


# --- ratcheting ---

RATCHET_SCHEMA = _spec_schema(
    size={"type": "integer", "maximum": 5},
    name={"type": "string", "maxLength": 3},
    ports={
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}},
        },
    },
)


def test_unchanged_invalid_values_are_ratcheted_on_update() -> None:
    old = {"spec": {"size": 9, "name": "toolong"}}
    new = {"spec": {"size": 9, "name": "toolong", "extra": 1}}
    assert _messages(RATCHET_SCHEMA, new, old) == []


def test_changed_invalid_values_are_reported_on_update() -> None:
    old = {"spec": {"size": 9, "name": "toolong"}}
    new = {"spec": {"size": 8, "name": "toolong"}}
    assert _messages(RATCHET_SCHEMA, new, old) == [
        "spec.size: Invalid value: 8: spec.size in body should be less than or equal to 5"
    ]


def test_map_list_items_are_correlated_by_key_for_ratcheting() -> None:
    old = {"spec": {"ports": [{"name": "a", "port": 99}]}}
    new = {"spec": {"ports": [{"name": "b", "port": 1}, {"name": "a", "port": 99}]}}
    assert _messages(RATCHET_SCHEMA, new, old) == []
    newer = {"spec": {"ports": [{"name": "a", "port": 98}]}}
    assert _messages(RATCHET_SCHEMA, newer, old) == [
        "spec.ports[0].port: Invalid value: 98: spec.ports[0].port in body should be less than "
        "or equal to 10"
    ]


def test_create_is_never_ratcheted() -> None:
    assert len(_messages(RATCHET_SCHEMA, {"spec": {"size": 9}})) == 1


STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "maximum": 1}}},
        "status": {
            "type": "object",
            "required": ["phase"],
            "properties": {
                "phase": {"type": "string", "enum": ["Ready"]},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
            },
        },
    },
}


def test_validate_status_checks_only_the_status_schema() -> None:
    compiled = compile_schema(STATUS_SCHEMA)
    obj = {"spec": {"size": 5}, "status": {"phase": "Gone", "tags": ["a", "a"]}}
    assert [e.message for e in compiled.validate_status(obj)] == [
        'status.phase: Unsupported value: "Gone": supported values: "Ready"',
        'status.tags[1]: Duplicate value: "a"',
    ]
    assert [e.message for e in compiled.validate_status({"status": {}})] == [
        "status.phase: Required value"
    ]
    assert compiled.validate_status({"spec": {"size": 5}}) == []


def test_validate_status_ratchets_against_the_old_status() -> None:
    compiled = compile_schema(STATUS_SCHEMA)
    old = {"status": {"phase": "Gone"}}
    assert compiled.validate_status({"status": {"phase": "Gone"}}, old=old) == []
    assert len(compiled.validate_status({"status": {"phase": "Lost"}}, old=old)) == 1
