"""Field errors print like apimachinery's field.Error (kube-apiserver 1.32)."""

from __future__ import annotations

import pytest

from setpoint.api import FieldError, aggregate_messages
from setpoint.api import field_errors as fe
from setpoint.api.go_format import GoValue, go_quote, go_string_slice


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
        (
            fe.not_supported("spec.policy", "X", ("Always", "Never")),
            'spec.policy: Unsupported value: "X": supported values: "Always", "Never"',
        ),
        (
            fe.not_supported("spec.n", 4, [1, 2]),
            'spec.n: Unsupported value: 4: supported values: "1", "2"',
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
        (fe.too_many("spec.items", 4, -1), "spec.items: Too many: 4: has too many items"),
        (fe.not_found("spec.ref", "x"), 'spec.ref: Not found: "x"'),
        (fe.internal_error("spec", "boom"), "spec: Internal error: boom"),
        (
            fe.invalid(
                "metadata.resourceVersion", GoValue("0x0"), "must be specified for an update"
            ),
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
        ),
        (
            fe.invalid("metadata.name", fe.OMIT_VALUE, "is immutable"),
            "metadata.name: Invalid value: is immutable",
        ),
        (FieldError("SomethingNew", "spec", "x"), 'spec: <unknown error "SomethingNew">: "x"'),
    ],
)
def test_message_matches_upstream(error: FieldError, message: str) -> None:
    assert error.message == message
    assert str(error) == message


def test_invalid_with_string_value_and_its_cause() -> None:
    error = fe.invalid("metadata.name", "A", "must be lower case")
    assert str(error) == 'metadata.name: Invalid value: "A": must be lower case'
    assert error.cause() == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "A": must be lower case',
        "field": "metadata.name",
    }


def test_cause_carries_body_without_field() -> None:
    error = fe.required("spec.name")
    assert error.cause() == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.name",
    }
    assert error.body == "Required value"


def test_values_print_like_go() -> None:
    assert fe.invalid("f", 3, "").body == "Invalid value: 3"
    assert fe.invalid("f", 2.0, "").body == "Invalid value: 2"
    assert fe.invalid("f", 2.5, "").body == "Invalid value: 2.5"
    assert fe.invalid("f", True, "").body == "Invalid value: true"
    # Upstream swaps a nil bad value for the string "null", which %q then quotes.
    assert fe.invalid("f", None, "").body == 'Invalid value: "null"'
    assert fe.invalid("f", go_string_slice(["a", "b"]), "x").body == (
        'Invalid value: []string{"a", "b"}: x'
    )


def test_types_without_values() -> None:
    assert str(fe.required("spec.x")) == "spec.x: Required value"
    assert str(fe.required("spec.x", "must be set")) == "spec.x: Required value: must be set"
    assert str(fe.forbidden("spec", "no")) == "spec: Forbidden: no"
    assert str(fe.too_long("m", 10)) == "m: Too long: may not be more than 10 bytes"
    # A value given to a valueless type is still left out, as ErrorBody does.
    assert str(FieldError(fe.FIELD_VALUE_REQUIRED, "spec.x", "v")) == "spec.x: Required value"


def test_go_quote_escapes() -> None:
    assert go_quote('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert go_quote("\x00é") == '"\\x00é"'


def test_aggregate_messages() -> None:
    assert aggregate_messages([]) == ""
    assert aggregate_messages(["one"]) == "one"
    assert aggregate_messages(["a", "b", "a"]) == "[a, b]"


def test_aggregate_accepts_field_errors() -> None:
    errors = [fe.required("spec.a"), fe.required("spec.b"), fe.required("spec.a")]
    assert aggregate_messages(errors) == "[spec.a: Required value, spec.b: Required value]"


def test_duplicate_messages_collapse_to_a_single_unbracketed_one() -> None:
    assert aggregate_messages([fe.required("a"), fe.required("a")]) == "a: Required value"


def test_field_error_is_immutable() -> None:
    error = fe.required("a")
    with pytest.raises(AttributeError):
        error.field = "b"  # type: ignore[misc]
