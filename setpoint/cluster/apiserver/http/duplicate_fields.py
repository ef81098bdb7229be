"""Duplicate fields in JSON bodies, reported as kube-apiserver's strict decoding reports them.

A JSON object may repeat a key; decoders keep the last value silently. kube-apiserver's
decoder notices, and the request's ``fieldValidation`` decides what follows: ``Strict`` refuses
the body (``400``: ``ConfigMap in version "v1" cannot be handled as a ConfigMap: strict
decoding error: duplicate field "data.a"``), ``Warn`` (the default) answers with a
``Warning: duplicate field "data.a"`` header, ``Ignore`` says nothing. Paths are written as the
unknown-field paths are (``spec.containers[0].name``).

Finding the paths takes a second parse that keeps every key, so it runs only when a body holds
a duplicate: a JSON body whose ``fieldValidation`` is not ``Ignore`` is first compared, in C,
with its decoded value encoded again (:func:`surely_without_duplicates`), which tells whether a
key was dropped without walking the value in Python.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec
from aiohttp import web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.request_body import JSON, media_type
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_ENCODE: Final = msgspec.json.Encoder().encode


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers which of its keys appeared more than once."""

    __slots__ = ("duplicates",)

    def __init__(self) -> None:
        super().__init__()
        self.duplicates: list[str] = []


def _keep_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    for key, value in pairs:
        if key in obj and key not in obj.duplicates:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def duplicate_paths(body: bytes) -> list[str]:
    """The paths of the repeated keys of a JSON document ([] if none, or not JSON)."""
    try:
        tree = json.loads(body, object_pairs_hook=_keep_pairs)
    except (ValueError, RecursionError):
        return []  # the main decoder reports malformed bodies
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", tree)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Object):
            found.extend(f"{path}.{key}" if path else key for key in node.duplicates)
            stack.extend(
                (f"{path}.{key}" if path else key, value) for key, value in reversed(node.items())
            )
        elif isinstance(node, list):
            stack.extend(
                (f"{path}[{index}]", item) for index, item in reversed(list(enumerate(node)))
            )
    return found


def strings_written(document: bytes) -> int:
    """How many strings (keys and string values) the valid JSON ``document`` writes.

    Every string is written between two quotes that are not escaped. Inside a string a
    backslash starts an escape: ``\\\\`` (a backslash) or ``\\"`` (a quote) among them. Taking
    away the escaped backslashes, pair by pair from the left as a JSON parser reads them,
    leaves every other escape starting with its own backslash, so the escaped quotes are
    exactly the ``\\"`` left. (Outside strings valid JSON has no backslash.)
    """
    if b"\\" not in document:
        return document.count(b'"') // 2
    rest = document.replace(b"\\\\", b"")
    return (rest.count(b'"') - rest.count(b'\\"')) // 2


def surely_without_duplicates(body: bytes, decoded: Any) -> bool:
    """Whether no key of the JSON ``body`` repeats, from its bytes and its decoded value.

    Decoding keeps one of the keys a JSON object repeats and drops the others (each a string of
    the body) with their values; nothing else is dropped. So ``decoded`` encoded again writes as
    many strings as ``body`` if and only if no key repeats (:func:`strings_written`, in C), and
    when the encoding is ``body`` itself, byte for byte, no key repeats either. ``decoded`` must
    be the value decoded from ``body`` and not changed since. False also when it cannot be
    encoded (then the full parse decides).
    """
    try:
        encoded = _ENCODE(decoded)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return False
    return encoded == body or strings_written(encoded) == strings_written(body)


def check_duplicate_fields(
    request: web.BaseRequest, body: bytes, resource: ServedResource, decoded: Any = None
) -> list[str]:
    """Warnings for the body's duplicate fields; raises 400 for ``fieldValidation=Strict``.

    ``decoded``: the body as the request's decoder read it, before anything changed it (it
    lets most bodies skip the second parse).
    """
    validation = request.query.get("fieldValidation", "") or "Warn"
    if validation == "Ignore" or media_type(request) not in ("", JSON):
        return []
    if decoded is not None and surely_without_duplicates(body, decoded):
        return []
    paths = duplicate_paths(body)
    if not paths:
        return []
    if validation == "Strict":
        raise status_errors.bad_request(
            f'{resource.kind} in version "{resource.version}" cannot be handled as a '
            f"{resource.kind}: strict decoding error: "
            + ", ".join(f'duplicate field "{path}"' for path in paths)
        )
    return [f'duplicate field "{path}"' for path in paths]
