"""Duplicate fields in JSON bodies, reported as kube-apiserver's strict decoding reports them.

A JSON object may repeat a key; decoders keep the last value silently. kube-apiserver's
decoder notices, and the request's ``fieldValidation`` decides what follows: ``Strict`` refuses
the body (``400``: ``ConfigMap in version "v1" cannot be handled as a ConfigMap: strict
decoding error: duplicate field "data.a"``), ``Warn`` (the default) answers with a
``Warning: duplicate field "data.a"`` header, ``Ignore`` says nothing. Paths are written as the
unknown-field paths are (``spec.containers[0].name``).

Detecting duplicates takes a second parse that keeps every key, so it runs only when the body
can hold one: a JSON body whose ``fieldValidation`` is not ``Ignore``, for which counting keys
(:func:`surely_without_duplicates`) proves nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from aiohttp import web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.request_body import JSON, media_type
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

#: The end of a key: a closing quote, optional JSON whitespace, a colon.
_KEY_END: Final = re.compile(rb'"[ \t\r\n]*:')


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


def _key_count(value: Any) -> int:
    """How many keys the decoded objects in ``value`` hold, all levels together."""
    if isinstance(value, dict):
        return len(value) + sum(_key_count(child) for child in value.values() if child)
    if isinstance(value, list):
        return sum(_key_count(item) for item in value if item)
    return 0


def surely_without_duplicates(body: bytes, decoded: Any) -> bool:
    """A cheap proof that no key repeats, from the body's bytes and its decoded value.

    Without a backslash in the body every ``"`` delimits a string, so each key's closing quote
    followed by ``:`` is matched by :data:`_KEY_END` (as is, at worst, a string value starting
    with ``:``): the matches are at least the keys written. Decoding keeps one of each repeated
    key, so as many decoded keys as matches means none repeats. Otherwise: no proof, the full
    parse decides.
    """
    if b"\\" in body:
        return False
    return len(_KEY_END.findall(body)) == _key_count(decoded)


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
    if body.count(b'":') < 2:
        return []  # fewer than two keys: nothing can repeat
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
