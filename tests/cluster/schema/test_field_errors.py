"""Field errors render exactly like apimachinery's field.Error and errors.NewInvalid."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver import field_errors as fe
from setpoint.cluster.apiserver.field_errors import FieldError, GoValue


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (fe.required("spec.name"), "spec.name: Required value"),
        (
            fe.required("metadata.name", "name or generateName is required"),
            "metadata.name: Required value: name or generateName is required",
        ),
        (
            fe.type_invalid(
                "spec.size", "string", 'spec.size in body must be of type integer: "string"'
            ),
            'spec.size: Invalid value: "string": spec.size in body must be of type integer: '
            '"string"',
        ),
        (
            fe.not_supported("spec.mode", "x", ["a", "b"]),
            'spec.mode: Unsupported value: "x": supported values: "a", "b"',
        ),
        (fe.not_supported("spec.mode", "x", []), 'spec.mode: Unsupported value: "x"'),
        (
            fe.invalid("metadata.name", "A_b", "a lowercase RFC 1123 subdomain must ..."),
            'metadata.name: Invalid value: "A_b": a lowercase RFC 1123 subdomain must ...',
        ),
        (fe.invalid("spec.size", 5, "too big"), "spec.size: Invalid value: 5: too big"),
        (fe.invalid("spec.ratio", 1.5, "bad"), "spec.ratio: Invalid value: 1.5: bad"),
        (fe.invalid("spec.on", True, "bad"), "spec.on: Invalid value: true: bad"),
        (fe.invalid("spec.x", None, "bad"), 'spec.x: Invalid value: "null": bad'),
        (fe.duplicate("spec.tags[1]", "a"), 'spec.tags[1]: Duplicate value: "a"'),
        (fe.forbidden("spec.x", "not allowed"), "spec.x: Forbidden: not allowed"),
        (fe.too_long("spec.name", 5), "spec.name: Too long: may not be more than 5 bytes"),
        (fe.too_long("spec.name", -1), "spec.name: Too long: value is too long"),
        (fe.too_many("spec.items", 4, 3), "spec.items: Too many: 4: must have at most 3 items"),
        (fe.too_many("spec.items", -1, 3), "spec.items: Too many: must have at most 3 items"),
        (fe.not_found("spec.ref", "x"), 'spec.ref: Not found: "x"'),
        (fe.internal_error("spec", "boom"), "spec: Internal error: boom"),
        (
            fe.invalid(
                "metadata.resourceVersion", GoValue("0x0"), "must be specified for an update"
            ),
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
        ),
    ],
)
def test_message_matches_upstream(error: FieldError, message: str) -> None:
    assert error.message == message
    assert str(error) == message


def test_cause_carries_body_without_field() -> None:
    error = fe.required("spec.name")
    assert error.cause() == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.name",
    }
    assert error.body == "Required value"


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("plain", '"plain"'),
        ('quote"and\\slash', '"quote\\"and\\\\slash"'),
        ("tab\tnew\nline", '"tab\\tnew\\nline"'),
        ("\x01", '"\\x01"'),
        ("héllo", '"héllo"'),
        (7, "7"),
        (-3, "-3"),
        (0.5, "0.5"),
        (100.0, "100"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (False, "false"),
        (None, '"null"'),
        ({"b": 1, "a": "x"}, 'map[string]interface {}{"a":"x", "b":1}'),
        ([1, "x", None], '[]interface {}{1, "x", interface {}(nil)}'),
        ({}, "map[string]interface {}{}"),
    ],
)
def test_go_value_rendering(value: object, rendered: str) -> None:
    assert fe.go_value(value) == rendered


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ({"b": [1, 2.5], "a": None}, '{"a":null,"b":[1,2.5]}'),
        (1.0, "1"),
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (0.000001, "0.000001"),
        ("<&>", '"\\u003c\\u0026\\u003e"'),
        (True, "true"),
    ],
)
def test_go_json_matches_encoding_json(value: object, encoded: str) -> None:
    assert fe.go_json(value) == encoded


def test_invalid_status_with_one_error() -> None:
    error = fe.type_invalid(
        "spec.size", "string", 'spec.size in body must be of type integer: "string"'
    )
    status = fe.invalid_status("Widget.example.com", "w1", [error])
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Widget.example.com "w1" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"',
        "reason": "Invalid",
        "details": {
            "name": "w1",
            "group": "example.com",
            "kind": "Widget",
            "causes": [
                {
                    "reason": "FieldValueTypeInvalid",
                    "message": 'Invalid value: "string": spec.size in body must be of type '
                    'integer: "string"',
                    "field": "spec.size",
                }
            ],
        },
        "code": 422,
    }


def test_invalid_status_aggregates_several_errors_in_brackets() -> None:
    errors = [fe.required("spec.a"), fe.required("spec.b"), fe.required("spec.a")]
    status = fe.invalid_status("ConfigMap", "cm", errors)
    assert status["message"] == (
        'ConfigMap "cm" is invalid: [spec.a: Required value, spec.b: Required value]'
    )
    assert status["details"]["group"] == ""
    assert status["details"]["kind"] == "ConfigMap"
    assert len(status["details"]["causes"]) == 3  # causes are not deduplicated upstream


def test_invalid_status_without_errors() -> None:
    assert fe.invalid_status("Widget.example.com", "w", [])["message"] == (
        'Widget.example.com "w" is invalid'
    )


def test_duplicate_messages_collapse_to_a_single_unbracketed_one() -> None:
    assert fe.aggregate_message([fe.required("a"), fe.required("a")]) == "a: Required value"


def test_qualified_kind() -> None:
    assert fe.qualified_kind("Widget", "example.com") == "Widget.example.com"
    assert fe.qualified_kind("Pod", "") == "Pod"


def test_field_error_is_immutable() -> None:
    error = fe.required("a")
    with pytest.raises(AttributeError):
        error.field = "b"  # type: ignore[misc]
