"""Duplicate fields in JSON bodies: refused with Strict, warned about by default, as upstream.

The proof that lets most bodies skip the second parse is checked against that parse on random
JSON documents: keys drawn from a few so that objects repeat them, strings holding quotes,
backslashes, colons and non-ASCII characters, each character written raw or escaped (short or
``\\u`` escapes, surrogate pairs), and random whitespace between tokens.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.http.duplicate_fields import (
    duplicate_paths,
    strings_written,
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
        (b'{"data":{"a":":x"}}', True),
        (b'{"a\\"":"\\\\","b":"\\u0022","c":"\\\\\\""}', True),  # escaped quotes
        (b'{"a":"\\u0022\\u0022","a":1}', False),  # escapes that decode to quotes
        (b'{"a":1,"a":"\\u0022\\u0022"}', False),
        (b'{ "a" : [ 1 , { "b" : "c" } ] }\n', True),  # whitespace everywhere
    ],
)
def test_the_key_count_proof_never_hides_a_duplicate(body: bytes, proven: bool) -> None:
    decoded = msgspec.json.decode(body)  # as the handler decodes

    assert surely_without_duplicates(body, decoded) is proven
    assert (duplicate_paths(body) == []) is proven


_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_TEXT = st.text(
    alphabet=st.sampled_from('ab:"\\/ \n\u00e9\u2028\U0001f600') | st.characters(codec="utf-8"),
    max_size=4,
)
_KEYS = st.sampled_from(["a", "b", "", ":", 'a"', "a\\", "\u00e9"]) | _TEXT
_SCALARS = (
    st.tuples(st.just("string"), _TEXT)
    | st.tuples(
        st.just("number"),
        st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False),
    )
    | st.tuples(st.just("literal"), st.sampled_from(["true", "false", "null"]))
)
_TREES = st.recursive(
    _SCALARS,
    lambda children: (
        st.tuples(st.just("array"), st.lists(children, max_size=4))
        | st.tuples(st.just("object"), st.lists(st.tuples(_KEYS, children), max_size=5))
    ),
    max_leaves=20,
)


def _escaped_char(draw: st.DrawFn, char: str) -> str:
    """``char`` inside a JSON string: raw when JSON allows it, or any escape that means it."""
    code = ord(char)
    ways = [char] if char not in '"\\' and code >= 0x20 else []
    if char in _SHORT_ESCAPES:
        ways.append(_SHORT_ESCAPES[char])
    if code > 0xFFFF:
        high = 0xD800 + ((code - 0x10000) >> 10)
        low = 0xDC00 + ((code - 0x10000) & 0x3FF)
        ways.append(f"\\u{high:04x}\\u{low:04X}")
    else:
        ways.append(f"\\u{code:04x}")
        ways.append(f"\\u{code:04X}")
    return draw(st.sampled_from(ways))


def _written(draw: st.DrawFn, tree: tuple[str, Any]) -> tuple[str, int]:
    """``tree`` as JSON text in a randomly drawn style, and how many strings it writes."""
    space = st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n"])
    kind, value = tree
    if kind == "string":
        return '"' + "".join(_escaped_char(draw, char) for char in value) + '"', 1
    if kind == "number":
        return json.dumps(value), 0
    if kind == "literal":
        return value, 0
    parts: list[str] = []
    strings = 0
    if kind == "array":
        for child in value:
            text, count = _written(draw, child)
            parts.append(draw(space) + text + draw(space))
            strings += count
        return "[" + ",".join(parts) + "]", strings
    for key, child in value:
        key_text, _ = _written(draw, ("string", key))
        text, count = _written(draw, child)
        parts.append(draw(space) + key_text + draw(space) + ":" + draw(space) + text + draw(space))
        strings += 1 + count
    return "{" + ",".join(parts) + "}", strings


@st.composite
def _documents(draw: st.DrawFn) -> tuple[bytes, int]:
    """A JSON object whose members may repeat keys, and the number of strings it writes."""
    members = draw(st.lists(st.tuples(_KEYS, _TREES), max_size=6))
    text, strings = _written(draw, ("object", members))
    return text.encode(), strings


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_the_proof_agrees_with_the_full_parse(document: tuple[bytes, int]) -> None:
    body, strings = document
    decoded = msgspec.json.decode(body)  # as the handler decodes

    assert strings_written(body) == strings
    repeated = duplicate_paths(body)
    assert surely_without_duplicates(body, decoded) is (repeated == [])


@settings(max_examples=100, deadline=None)
@given(_TREES)
def test_bodies_encoded_compactly_are_proven_without_the_count(tree: tuple[str, Any]) -> None:
    decoded = json.loads(_compact(tree))
    body = msgspec.json.encode(decoded)

    assert surely_without_duplicates(body, msgspec.json.decode(body))
    assert duplicate_paths(body) == []


def _compact(tree: tuple[str, Any]) -> str:
    kind, value = tree
    if kind == "array":
        return "[" + ",".join(_compact(child) for child in value) + "]"
    if kind == "object":
        members = (json.dumps(key) + ":" + _compact(child) for key, child in value)
        return "{" + ",".join(members) + "}"
    if kind == "string":
        return json.dumps(value)
    return json.dumps(value) if kind == "number" else str(value)
