"""Field errors print like apimachinery's field.Error."""

from setpoint.api import FieldError, aggregate_messages
from setpoint.api.field_errors import go_quote


def test_invalid_with_string_value() -> None:
    error = FieldError.invalid("metadata.name", "A", "must be lower case")
    assert str(error) == 'metadata.name: Invalid value: "A": must be lower case'
    assert error.as_cause() == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "A": must be lower case',
        "field": "metadata.name",
    }


def test_values_print_like_go() -> None:
    assert FieldError.invalid("f", 3, "").body == "Invalid value: 3"
    assert FieldError.invalid("f", 2.0, "").body == "Invalid value: 2"
    assert FieldError.invalid("f", 2.5, "").body == "Invalid value: 2.5"
    assert FieldError.invalid("f", True, "").body == "Invalid value: true"
    assert FieldError.invalid("f", None, "").body == "Invalid value: null"
    assert FieldError.invalid("f", ["a", "b"], "x").body == 'Invalid value: []string{"a", "b"}: x'


def test_types_without_values() -> None:
    assert str(FieldError.required("spec.x")) == "spec.x: Required value"
    assert (
        str(FieldError.required("spec.x", "must be set")) == "spec.x: Required value: must be set"
    )
    assert str(FieldError.forbidden("spec", "no")) == "spec: Forbidden: no"
    assert str(FieldError.too_long("m", 10)) == "m: Too long: may not be more than 10 bytes"


def test_not_supported_lists_values() -> None:
    error = FieldError.not_supported("spec.policy", "X", ["Always", "Never"])
    assert str(error) == 'spec.policy: Unsupported value: "X": supported values: "Always", "Never"'


def test_go_quote_escapes() -> None:
    assert go_quote('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert go_quote("\x00é") == '"\\x00é"'


def test_aggregate_messages() -> None:
    assert aggregate_messages([]) == ""
    assert aggregate_messages(["one"]) == "one"
    assert aggregate_messages(["a", "b", "a"]) == "[a, b]"
