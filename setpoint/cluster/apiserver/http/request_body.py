"""Reading and decoding request bodies: size limit, media types, JSON/YAML, error messages.

kube-apiserver refuses bodies above 3 MiB with 413, decodes JSON, YAML and (for the kinds in
:mod:`.protobuf`'s tables) protobuf, and reports malformed bodies as 400. A protobuf body this
server cannot decode is a 415 naming the kind.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import msgspec
import yaml
from aiohttp import web

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import body_limits, protobuf
from setpoint.cluster.apiserver.status_errors import APIError

#: kube-apiserver's limit on request bodies (``MaxRequestBodyBytes``, 3 MiB).
MAX_REQUEST_BODY_BYTES: Final = 3 * 1024 * 1024

JSON: Final = "application/json"
YAML: Final = "application/yaml"
MERGE_PATCH: Final = "application/merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
#: Media types a create or update body may use here.
BODY_MEDIA_TYPES: Final = (JSON, YAML, protobuf.PROTOBUF_MEDIA_TYPE)

_DECODER = msgspec.json.Decoder()


#: Content-Type headers remembered with their media types; starts over when full.
_MEDIA_TYPE_MEMO_SIZE: Final = 64
_media_types: dict[str, str] = {}


def media_type_of(content_type: str) -> str:
    """A Content-Type header's media type: without parameters, lower-cased."""
    return content_type.split(";", 1)[0].strip().lower()


def media_type(request: web.BaseRequest) -> str:
    """The request's Content-Type without parameters, lower-cased ('' when absent)."""
    raw = request.headers.get("Content-Type", "")
    known = _media_types.get(raw)
    if known is None:
        known = media_type_of(raw)
        if len(_media_types) >= _MEDIA_TYPE_MEMO_SIZE:
            _media_types.clear()
        _media_types[raw] = known
    return known


#: The body :func:`read_body` read, kept on the request (the audit log's ``Request`` level).
REQUEST_BODY_KEY: Final = web.RequestKey("setpoint.body", bytes)


async def read_body(request: web.BaseRequest) -> bytes:
    """The whole body, or 413 when it is larger than :data:`MAX_REQUEST_BODY_BYTES`."""
    length = request.content_length
    content = request.content
    if length is not None and length <= MAX_REQUEST_BODY_BYTES and content.is_eof():
        # The parser never delivers more than Content-Length, and once it has ended the body
        # all of it is here: what readexactly returns too, short or not, without coroutines.
        body = content.read_nowait()
    else:
        body = await _read(request)
    request[REQUEST_BODY_KEY] = body
    return body


async def _read(request: web.BaseRequest) -> bytes:
    length = request.content_length
    if length is not None and length > MAX_REQUEST_BODY_BYTES:
        raise status_errors.request_entity_too_large(MAX_REQUEST_BODY_BYTES)
    if length is not None:
        # The parser never delivers more than Content-Length: one read takes it all.
        try:
            return await request.content.readexactly(length)
        except asyncio.IncompleteReadError as short:
            return short.partial  # the client hung up early; decoding will say what is wrong
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.readany()
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_REQUEST_BODY_BYTES:
            raise status_errors.request_entity_too_large(MAX_REQUEST_BODY_BYTES)
        chunks.append(chunk)
    return b"".join(chunks)


def decode_json(body: bytes) -> Any:
    """Decode JSON; 400 with the parser's complaint when it is malformed."""
    try:
        value = _DECODER.decode(body)
    except msgspec.DecodeError as exc:
        raise status_errors.bad_request(
            f"couldn't get version/kind; json parse error: {_parse_error(exc)}"
        ) from exc
    except RecursionError:
        raise body_limits.too_deep() from None
    # Counting brackets (in C) rules out deep nesting for almost every body without a walk.
    if body.count(b"{") + body.count(b"[") > body_limits.MAX_NESTING_DEPTH:
        body_limits.check_depth(value)
    return value


def _parse_error(exc: Exception) -> str:
    text = str(exc)
    return text[0].lower() + text[1:] if text else "malformed JSON"


def decode_object_body(request: web.BaseRequest, body: bytes) -> dict[str, Any]:
    """A create/update body as a dict, from JSON or YAML; 400/415 otherwise."""
    kind = media_type(request)
    if not body.strip():
        raise status_errors.bad_request("the body of the request is empty")
    if kind in ("", JSON, "*/*"):
        obj = decode_json(body)
    elif kind in (YAML, "application/x-yaml", "text/yaml"):
        try:
            obj = body_limits.load_yaml(body)
        except yaml.YAMLError as exc:
            raise status_errors.bad_request(
                f"couldn't get version/kind; yaml parse error: {exc}"
            ) from exc
    elif kind == protobuf.PROTOBUF_MEDIA_TYPE:
        try:
            obj = protobuf.decode_object(body)
        except protobuf.ProtobufBodyError as exc:
            raise APIError(415, StatusReason.UNSUPPORTED_MEDIA_TYPE, str(exc)) from exc
    else:
        raise status_errors.unsupported_media_type(kind, BODY_MEDIA_TYPES)
    if not isinstance(obj, dict):
        raise status_errors.bad_request(
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_json_type(obj)} into Go value of type struct "
            '{ APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            '"json:\\"kind,omitempty\\"" }'
        )
    return obj


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else "value"
