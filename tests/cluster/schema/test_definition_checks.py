"""A CRD's openAPIV3Schema must be structural and use only what kube-apiserver allows."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.cluster.apiserver.schema.definition_checks import validate_crd_schema

ROOT = "spec.validation.openAPIV3Schema"
SPEC = f"{ROOT}.properties[spec]"


def _with_spec(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": properties}},
    }


def _messages(schema: Any, *, status_enabled: bool = False) -> list[str]:
    errors = validate_crd_schema(schema, "spec.validation", status_enabled=status_enabled)
    return [error.message for error in errors]


def test_a_good_schema_passes() -> None:
    schema = _with_spec(
        size={"type": "integer", "minimum": 0, "default": 1},
        mode={"type": "string", "enum": ["a", "b"]},
        port={"x-kubernetes-int-or-string": True},
        legacy={
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": True,
        },
        free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        labels={"type": "object", "additionalProperties": {"type": "string"}},
        pair={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [{"required": ["a"]}],
        },
        tmpl={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
        ports={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}},
            },
        },
    )
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20}},
    }
    assert _messages(schema) == []


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        (
            {"x": {}},
            [
                f"{SPEC}.properties[x].type: Required value: must not be empty for specified "
                "object fields"
            ],
        ),
        (
            {"x": {"type": "array"}},
            [f"{SPEC}.properties[x].items: Required value: must be specified"],
        ),
        (
            {"x": {"type": "array", "items": {}}},
            [
                f"{SPEC}.properties[x].items.type: Required value: must not be empty for "
                "specified array items"
            ],
        ),
        (
            {
                "x": {
                    "type": "object",
                    "anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}],
                }
            },
            [
                f"{SPEC}.properties[x].anyOf[0].properties[a].type: Forbidden: must be empty to be "
                "structural",
                f"{SPEC}.properties[x].anyOf[0].type: Forbidden: must be empty to be structural",
                # upstream checks completeness of value validations at the root only
            ],
        ),
        (
            {"x": {"type": "string", "pattern": "(unclosed"}},
            [
                f'{SPEC}.properties[x].pattern: Invalid value: "(unclosed": must be a valid '
                "regular expression, but isn't: error parsing regexp: missing closing ): "
                "`(unclosed`"
            ],
        ),
        (
            {
                "x": {
                    "x-kubernetes-int-or-string": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                }
            },
            [
                f"{SPEC}.properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: true: "
                "must be false if x-kubernetes-int-or-string is true"
            ],
        ),
        (
            {"x": {"type": "string", "x-kubernetes-embedded-resource": True}},
            [
                f"{SPEC}.properties[x].properties: Required value: must not be empty if "
                "x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
                f'{SPEC}.properties[x].type: Invalid value: "string": must be object if '
                "x-kubernetes-embedded-resource is true",
            ],
        ),
        (
            {"x": {"type": "object", "x-kubernetes-embedded-resource": True}},
            [
                f"{SPEC}.properties[x].properties: Required value: must not be empty if "
                "x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields"
            ],
        ),
        (
            {
                "x": {
                    "type": "object",
                    "properties": {"metadata": {"type": "object"}},
                    "anyOf": [{"properties": {"metadata": {}}}],
                }
            },
            [
                f"{SPEC}.properties[x].anyOf[0].properties[metadata]: Forbidden: must not be "
                "specified in a nested context"
            ],
        ),
    ],
)
def test_structural_errors(properties: dict[str, Any], expected: list[str]) -> None:
    assert _messages(_with_spec(**properties)) == expected


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        (
            {"x": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
            [
                f"{SPEC}.properties[x].uniqueItems: Forbidden: uniqueItems cannot be set to true "
                "since the runtime complexity becomes quadratic"
            ],
        ),
        (
            {"x": {"type": "null"}},
            [
                f'{SPEC}.properties[x].type: Unsupported value: "null": supported values: '
                '"array", "boolean", "integer", "number", "object", "string"',
                f"{SPEC}.properties[x].type: Forbidden: type cannot be set to null, use nullable "
                "as an alternative",
            ],
        ),
        (
            {
                "x": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "additionalProperties": {"type": "string"},
                }
            },
            [
                f"{SPEC}.properties[x].additionalProperties: Forbidden: additionalProperties and "
                "properties are mutual exclusive"
            ],
        ),
        (
            {"x": {"type": "string", "x-kubernetes-list-type": "set"}},
            [
                f'{SPEC}.properties[x].type: Invalid value: "string": must be array if '
                "x-kubernetes-list-type is specified"
            ],
        ),
        (
            {"x": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}},
            [
                f'{SPEC}.properties[x].x-kubernetes-list-type: Unsupported value: "bag": '
                'supported values: "atomic", "set", "map"'
            ],
        ),
        (
            {
                "x": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                }
            },
            [
                f"{SPEC}.properties[x].x-kubernetes-list-map-keys: Required value: must not be "
                "empty if x-kubernetes-list-type is map"
            ],
        ),
        (
            {
                "x": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                }
            },
            [
                f"{SPEC}.properties[x].items.properties[k].default: Required value: this property "
                "is in x-kubernetes-list-map-keys, so it must have a default or be a required "
                "property"
            ],
        ),
        (
            {
                "x": {
                    "type": "array",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "string"},
                }
            },
            [
                f"{SPEC}.properties[x].x-kubernetes-list-type: Required value: must be map if "
                "x-kubernetes-list-map-keys is non-empty"
            ],
        ),
        (
            {"x": {"type": "object", "x-kubernetes-preserve-unknown-fields": False}},
            [
                f"{SPEC}.properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: false: "
                "must be true or undefined"
            ],
        ),
        (
            {"x": {"type": "object", "x-kubernetes-map-type": "loose"}},
            [
                f'{SPEC}.properties[x].x-kubernetes-map-type: Unsupported value: "loose": '
                'supported values: "atomic", "granular"'
            ],
        ),
        (
            {"x": {"type": "string", "$ref": "#/definitions/y"}},
            [f"{SPEC}.properties[x].$ref: Forbidden: $ref is not supported"],
        ),
        (
            {"x": {"type": "object", "patternProperties": {"a": {"type": "string"}}}},
            [
                f"{SPEC}.properties[x].patternProperties: Forbidden: patternProperties is not "
                "supported"
            ],
        ),
        (
            {"x": {"type": "object", "x-kubernetes-validations": [{"rule": " "}]}},
            [
                f"{SPEC}.properties[x].x-kubernetes-validations[0].rule: Required value: rule "
                "is not specified"
            ],
        ),
    ],
)
def test_openapi_errors(properties: dict[str, Any], expected: list[str]) -> None:
    assert _messages(_with_spec(**properties)) == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, [f'{ROOT}.type: Invalid value: "string": must be object at the root']),
        ({"properties": {}}, [f"{ROOT}.type: Required value: must not be empty at the root"]),
        (
            {"type": "object", "additionalProperties": {"type": "string"}},
            [f"{ROOT}.additionalProperties: Forbidden: must not be used at the root"],
        ),
        (
            {"type": "object", "nullable": True},
            [f"{ROOT}.nullable: Forbidden: nullable cannot be true at the root"],
        ),
        (
            {
                "type": "object",
                "properties": {
                    "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}
                },
            },
            [
                f"{ROOT}.properties[metadata]: Forbidden: must not specify anything other than "
                "name "
                "and generateName, but metadata is implicitly specified"
            ],
        ),
        (
            {"type": "object", "properties": {"kind": {"type": "integer"}}},
            [f'{ROOT}.properties[kind].type: Invalid value: "integer": must be string'],
        ),
        (
            {
                "type": "object",
                "properties": {"metadata": {"type": "object", "default": {"name": "x"}}},
            },
            [
                f"{ROOT}.properties[metadata].default: Forbidden: must not be set in top-level "
                "metadata"
            ],
        ),
    ],
)
def test_root_errors(schema: dict[str, Any], expected: list[str]) -> None:
    assert _messages(schema) == expected


def test_status_subresource_restricts_the_root() -> None:
    schema = {"type": "object", "additionalProperties": False, "properties": {}}
    assert _messages(schema, status_enabled=True)[0] == (
        f"{ROOT}: Invalid value: apiextensions.JSONSchemaProps{{...}}: only [Description Type "
        "Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength "
        "Pattern "
        "MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example "
        "XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the "
        "status subresource is enabled"
    )
    assert _messages({"type": "object", "properties": {}}, status_enabled=True) == []


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        (
            {"x": {"type": "integer", "default": "one"}},
            [
                f'{SPEC}.properties[x].default: Invalid value: "string":  in body must be of type '
                'integer: "string"'
            ],
        ),
        (
            {"x": {"type": "integer", "minimum": 5, "default": 1}},
            [
                f"{SPEC}.properties[x].default: Invalid value: 1:  in body should be greater "
                "than or equal to 5"
            ],
        ),
        (
            {
                "x": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "default": {"a": "b", "z": 1},
                }
            },
            [
                f"{SPEC}.properties[x].default: Invalid value: "
                'map[string]interface {}{"a":"b", "z":1}: must not have unknown fields'
            ],
        ),
        (
            {
                "x": {
                    "type": "object",
                    "properties": {"a": {"type": "integer", "default": "n"}},
                    "default": {},
                }
            },
            [
                f'{SPEC}.properties[x].properties[a].default: Invalid value: "string":  in body '
                'must be of type integer: "string"'
            ],
        ),
    ],
)
def test_default_errors(properties: dict[str, Any], expected: list[str]) -> None:
    assert _messages(_with_spec(**properties)) == expected


def test_nested_value_validations_may_not_use_additional_properties() -> None:
    schema = _with_spec(x={"type": "object", "not": {"additionalProperties": {"maxLength": 1}}})
    assert _messages(schema) == [
        f"{SPEC}.properties[x].not.additionalProperties: Forbidden: must be undefined to be "
        "structural"
    ]


def test_completeness_of_root_value_validations() -> None:
    schema = {"type": "object", "properties": {}, "anyOf": [{"properties": {"ghost": {}}}]}
    assert _messages(schema) == [
        f"{ROOT}.properties[ghost]: Required value: because it is defined in "
        f"{ROOT}.anyOf[0].properties[ghost]"
    ]


def test_defaults_are_not_checked_while_the_schema_is_not_structural() -> None:
    schema = _with_spec(x={"type": "integer", "default": "one"}, y={})
    assert _messages(schema) == [
        f"{SPEC}.properties[y].type: Required value: must not be empty for specified object fields"
    ]


def test_non_object_schema() -> None:
    assert _messages("nope") == [
        'spec.validation.openAPIV3Schema: Invalid value: "nope": must be an object'
    ]


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        (
            {"x": {"type": "integer", "minimum": "one"}},
            [f'{SPEC}.properties[x].minimum: Invalid value: "string": must be of type number'],
        ),
        (
            {"x": {"type": ["string", "null"]}},
            [f'{SPEC}.properties[x].type: Invalid value: "array": must be of type string'],
        ),
        (
            {"x": {"type": "object", "properties": []}},
            [
                f'{SPEC}.properties[x].properties: Invalid value: "array": must be of type '
                "object of schemas"
            ],
        ),
        (
            {"x": {"type": "object", "required": "a"}},
            [
                f'{SPEC}.properties[x].required: Invalid value: "string": must be of type array '
                "of strings"
            ],
        ),
        (
            {"x": {"type": "string", "maxLength": 1.5, "nullable": "yes"}},
            [
                f'{SPEC}.properties[x].maxLength: Invalid value: "number": must be of type integer',
                f'{SPEC}.properties[x].nullable: Invalid value: "string": must be of type boolean',
            ],
        ),
        ({"x": {"type": "string", "maxLength": 2.0, "format": None}}, []),
    ],
)
def test_keywords_of_the_wrong_type_stop_all_other_checks(
    properties: dict[str, Any], expected: list[str]
) -> None:
    schema = _with_spec(**properties)
    schema["additionalProperties"] = {"type": "string"}  # would be an error, but is not reached
    messages = _messages(schema)
    if expected:
        assert messages == expected
    else:
        assert messages == [
            f"{ROOT}.additionalProperties: Forbidden: must not be used at the root",
            f"{ROOT}.additionalProperties: Forbidden: additionalProperties and properties are "
            "mutual exclusive",
        ]
