"""Values render as Go's fmt and encoding/json render them."""

from __future__ import annotations

import math

import pytest

from setpoint.api.go_format import GoValue, go_float, go_json, go_string_slice, go_value


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("plain", '"plain"'),
        ('quote"and\\slash', '"quote\\"and\\\\slash"'),
        ("tab\tnew\nline", '"tab\\tnew\\nline"'),
        ("\x01", '"\\x01"'),
        ("héllo", '"héllo"'),
        ("\u00a0\U0001f600\U000e0001", '"\\u00a0\U0001f600\\U000e0001"'),
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
        (GoValue("0x0"), "0x0"),
        ([GoValue("v1.Time{}")], "[]interface {}{v1.Time{}}"),
    ],
)
def test_go_value_rendering(value: object, rendered: str) -> None:
    assert go_value(value) == rendered


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        (-0.0, "-0"),
        (math.inf, "+Inf"),
        (-math.inf, "-Inf"),
        (math.nan, "NaN"),
        (-1.5e-7, "-1.5e-07"),
        (123456.5, "123456.5"),
        (1234567.5, "1.2345675e+06"),
        (0.00012, "0.00012"),
    ],
)
def test_go_float_edge_cases(value: float, rendered: str) -> None:
    assert go_float(value) == rendered


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ({"b": [1, 2.5], "a": None}, '{"a":null,"b":[1,2.5]}'),
        (1.0, "1"),
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (0.000001, "0.000001"),
        ("<&>", '"\\u003c\\u0026\\u003e"'),
        ("a\tb\u2028", '"a\\tb\\u2028"'),
        (True, "true"),
    ],
)
def test_go_json_matches_encoding_json(value: object, encoded: str) -> None:
    assert go_json(value) == encoded


def test_go_string_slice() -> None:
    assert go_string_slice(["a", "b"]).text == '[]string{"a", "b"}'
    assert go_string_slice([]).text == "[]string{}"
    assert go_string_slice(None).text == "[]string(nil)"


def test_go_value_equality_is_by_text() -> None:
    assert GoValue("x") == GoValue("x")
    assert GoValue("x") != GoValue("y")
    assert len({GoValue("x"), GoValue("x")}) == 1
    assert repr(GoValue("x")) == "GoValue('x')"
