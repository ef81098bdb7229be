"""Duplicate fields in JSON bodies: refused with Strict, warned about by default, as upstream."""

from __future__ import annotations

import json

import pytest

from setpoint.cluster.apiserver.http.duplicate_fields import (
    duplicate_paths,
    surely_without_duplicates,
)
from tests.cluster.raw_api import RawAPI

DUPLICATED = (
    b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}'
)


def _path(namespace: str, query: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps{query}"


async def test_strict_refuses_a_duplicate_field(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _path(namespace, "?fieldValidation=Strict"), data=DUPLICATED)
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "data.a"'
    )
    missing = await api.request("GET", _path(namespace, "/dup"))
    assert missing.status == 404  # nothing was stored


async def test_warn_is_the_default(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _path(namespace), data=DUPLICATED)
    assert reply.status == 201
    assert reply.body["data"] == {"a": "2"}  # the last value wins, as upstream
    assert reply.headers.getall("Warning") == ['299 - "duplicate field \\"data.a\\""']
    ignored = await api.request(
        "PUT", _path(namespace, "/dup?fieldValidation=Ignore"), data=DUPLICATED
    )
    assert ignored.status == 200
    assert "Warning" not in ignored.headers


def test_paths_of_nested_duplicates() -> None:
    body = b'{"a":1,"spec":{"containers":[{"name":"x","name":"y"}]},"a":2}'
    assert duplicate_paths(body) == ["a", "spec.containers[0].name"]
    assert duplicate_paths(b'{"a":1,"b":{"a":2}}') == []
    assert duplicate_paths(b"not json") == []


@pytest.mark.parametrize(
    ("body", "proven"),
    [
        (b'{"metadata":{"name":"a"},"data":{"a":"1","b":"2"},"l":[{"x":1},{"x":2}]}', True),
        (b'{"data":{"a":"1","a":"2"}}', False),
        (b'{"data":{"a" :"1","a":"2","b":"3"}}', False),  # a key end with whitespace
        (b'{"data":{"a\\\\":"1","b":"2","b":"3"}}', False),  # a key ending in a backslash
        (b'{"data":{"a":":x","a":"y"}}', False),  # a value starting with a colon
        (b'{"data":{"a":":x"}}', False),  # not proven, though nothing repeats
    ],
)
def test_the_key_count_proof_never_hides_a_duplicate(body: bytes, proven: bool) -> None:
    decoded = json.loads(body)

    assert surely_without_duplicates(body, decoded) is proven
    if proven:
        assert duplicate_paths(body) == []
