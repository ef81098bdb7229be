"""What json_codec.encode sends: plain bodies as they are, integral floats as integers,
datetimes as RFC 3339 with microseconds, wherever they are nested."""

from __future__ import annotations

import datetime
import json
from collections import OrderedDict
from typing import Any

import pytest

from setpoint.client import json_codec

MOMENT = datetime.datetime(2026, 11, 26, 19, 0, 0, 5, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"data": {"i": "5"}}, {"data": {"i": "5"}}),
        ({"a": [True, None, "x", 3, {"b": False}]}, {"a": [True, None, "x", 3, {"b": False}]}),
        ([{"op": "add", "path": "/a", "value": 1}], [{"op": "add", "path": "/a", "value": 1}]),
        ({"spec": {"replicas": 3.0}}, {"spec": {"replicas": 3}}),
        ({"spec": {"ratio": 0.5, "list": [[2.0]]}}, {"spec": {"ratio": 0.5, "list": [[2]]}}),
        ({"a": {"b": ("x", 1.0)}}, {"a": {"b": ["x", 1]}}),
        ({"a": OrderedDict(b=4.0)}, {"a": {"b": 4}}),
        ({"a": [{"t": MOMENT}]}, {"a": [{"t": "2026-11-26T19:00:00.000005Z"}]}),
        (2.0, 2),
        ("s", "s"),
    ],
)
def test_encode(value: Any, expected: Any) -> None:
    encoded = json_codec.encode(value)
    assert json.loads(encoded) == expected
    assert type(json.loads(encoded)) is type(expected)
    if isinstance(expected, dict) and "spec" in expected and "replicas" in expected["spec"]:
        assert b"3.0" not in encoded


def test_encode_does_not_change_its_input() -> None:
    body = {"spec": {"replicas": 3.0, "tags": ["a"]}}
    json_codec.encode(body)
    assert body == {"spec": {"replicas": 3.0, "tags": ["a"]}}
    assert type(body["spec"]["replicas"]) is float  # type: ignore[index]


def test_bools_stay_bools() -> None:
    assert json_codec.encode({"a": True, "b": [False]}) == b'{"a":true,"b":[false]}'
