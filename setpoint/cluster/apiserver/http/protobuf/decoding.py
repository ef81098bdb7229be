"""From protobuf bytes to the JSON object a JSON body of the same request would have been.

:func:`decode_object` reads the ``k8s\\0`` envelope (``runtime.Unknown``), looks up the message
of its ``apiVersion``/``kind``, parses the raw bytes with the class built from the tables, and
walks the parsed message along its table to produce plain JSON values: unset and zero fields
are left out (unless the JSON form keeps them), bytes become base64, times RFC 3339, quantities
and int-or-strings their JSON scalars. Fields that the wire carries but the tables do not
declare, and ``unsupported`` fields with content, stop the decoding with
:class:`ProtobufBodyError`: a partial object is never created.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any, Final

import msgspec
from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage

from setpoint.cluster.apiserver.http.protobuf.descriptors import EMPTY, layouts, message_classes
from setpoint.cluster.apiserver.http.protobuf.framing import MAGIC, ProtobufBodyError
from setpoint.cluster.apiserver.http.protobuf.kinds import KIND_MESSAGES
from setpoint.cluster.apiserver.http.protobuf.layout import (
    Cardinality,
    Field,
    Scalar,
    Wrapper,
)
from setpoint.cluster.apiserver.http.protobuf.messages import ENVELOPE

#: protobuf's wire type of length-delimited values (messages, strings, bytes).
_LENGTH_DELIMITED: Final = 2
_MAX_ZERO_DEPTH: Final = 8
_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def decode_object(body: bytes) -> dict[str, Any]:
    """The JSON object carried by a ``application/vnd.kubernetes.protobuf`` body."""
    if not body.startswith(MAGIC):
        raise ProtobufBodyError("the body does not start with the Kubernetes protobuf prefix")
    envelope = _parse(ENVELOPE, body[len(MAGIC) :], "")
    type_meta = envelope.typeMeta
    try:
        api_version = _text(type_meta.apiVersion)
        kind = _text(type_meta.kind)
    except UnicodeDecodeError as error:
        raise ProtobufBodyError("the protobuf envelope's type is not valid UTF-8") from error
    described = f"{kind} ({api_version})" if kind else "an object without a kind"
    if envelope.contentEncoding:
        raise ProtobufBodyError(
            f"the protobuf body of {described} uses content encoding "
            f"{_shown(envelope.contentEncoding)!r}, which is not decoded here",
            kind,
        )
    name = KIND_MESSAGES.get((api_version, kind))
    if name is None:
        raise ProtobufBodyError(
            f"the protobuf body of {described} cannot be decoded here (no message layout for "
            "that kind); send it as application/json",
            kind,
        )
    parsed = _parse(name, envelope.raw, described)
    obj: dict[str, Any] = {"kind": kind, "apiVersion": api_version}
    try:
        obj.update(_to_json(name, parsed, kind, ""))
    except UnicodeDecodeError as error:
        # proto2 strings are not checked for UTF-8 when parsed; reading one is.
        raise ProtobufBodyError(
            f"the protobuf body of {described} carries a string that is not valid UTF-8", kind
        ) from error
    return obj


def _parse(name: str, data: bytes, described: str) -> ProtoMessage:
    message = message_classes()[name]()
    try:
        message.ParseFromString(data)
    except DecodeError as error:
        what = f"the protobuf body of {described}" if described else "the protobuf envelope"
        raise ProtobufBodyError(f"{what} is malformed: {error}") from error
    return message


def _to_json(name: str, message: ProtoMessage, kind: str, path: str) -> dict[str, Any]:
    layout = layouts()[name]
    _refuse_unknown_fields(message, name, kind, path)
    obj: dict[str, Any] = {}
    for spec in layout.fields:
        here = f"{path}.{spec.json_name}" if path else spec.json_name
        if spec.cardinality is Cardinality.UNSUPPORTED:
            if not all(_zero_valued(value) for value in getattr(message, spec.json_name)):
                raise ProtobufBodyError(
                    f"the protobuf body of {kind} sets {here}, which is not decoded here; "
                    "send it as application/json",
                    kind,
                )
            continue
        if spec.cardinality is Cardinality.REPEATED:
            values = getattr(message, spec.json_name)
            if values:
                obj[spec.json_name] = [
                    _value(spec, value, kind, f"{here}[{index}]")
                    for index, value in enumerate(values)
                ]
            continue
        if spec.cardinality is Cardinality.MAP:
            entries = getattr(message, spec.json_name)
            if entries:
                decoded = {_text(key): key for key in entries}
                obj[spec.json_name] = {
                    key: _value(spec, entries[raw], kind, f"{here}[{key}]")
                    for key, raw in sorted(decoded.items())
                }
            continue
        if not message.HasField(spec.json_name):
            continue
        value = _value(spec, getattr(message, spec.json_name), kind, here)
        if spec.inline and isinstance(value, dict):
            obj.update(value)
        elif spec.keep_zero or _is_set(value):
            obj[spec.json_name] = value
    return obj


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _shown(value: str | bytes) -> str:
    """For messages: any bytes, shown whatever their encoding."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _is_set(value: Any) -> bool:
    """Go's ``omitempty``: "", 0, false, empty collections (and here empty structs) are left out."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str | dict | list):
        return bool(value)
    if isinstance(value, int):
        return value != 0
    return True


def _value(spec: Field, value: Any, kind: str, path: str) -> Any:
    value_type = spec.type
    if isinstance(value_type, Scalar):
        if value_type is Scalar.BYTES:
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, bytes):  # a string that failed UTF-8 decoding
            return value.decode("utf-8")
        return value
    if isinstance(value_type, Wrapper):
        return _wrapper(value_type, value)
    return _to_json(value_type, value, kind, path)


def _wrapper(wrapper: Wrapper, value: Any) -> Any:
    if wrapper is Wrapper.QUANTITY:
        return _text(value.string) or None
    if wrapper is Wrapper.INT_OR_STRING:
        return _text(value.strVal) if value.type == 1 else value.intVal
    if wrapper is Wrapper.STRING_LIST:
        return [_text(item) for item in value.items]
    if wrapper is Wrapper.FIELDS_V1:
        return msgspec.json.decode(value.Raw) if value.Raw else {}
    if value.seconds == 0 and value.nanos == 0:
        return None  # the zero Time is null in JSON
    moment = _EPOCH + datetime.timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)
    if wrapper is Wrapper.MICRO_TIME:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _zero_valued(data: bytes, depth: int = 0) -> bool:
    """Whether ``data`` encodes a message whose fields are all zero values.

    Go's protobuf marshaller writes non-pointer fields even when they are zero, so an untouched
    ``status`` arrives as a few zero integers and empty strings: such a value says nothing and
    may be dropped even where the tables do not describe it.
    """
    if not data:
        return True
    if depth > _MAX_ZERO_DEPTH:
        return False
    probe = message_classes()[EMPTY]()
    try:
        probe.ParseFromString(data)
    except DecodeError:
        return False  # not a message: a non-empty string or bytes
    return all(
        _zero_field(unknown.wire_type, unknown.data, depth)
        for unknown in unknown_fields.UnknownFieldSet(probe)
    )


def _zero_field(wire_type: int, data: Any, depth: int = 0) -> bool:
    if wire_type == _LENGTH_DELIMITED:
        return isinstance(data, bytes) and _zero_valued(data, depth + 1)
    return bool(data == 0)


def _refuse_unknown_fields(message: ProtoMessage, name: str, kind: str, path: str) -> None:
    for unknown in unknown_fields.UnknownFieldSet(message):
        if _zero_field(unknown.wire_type, unknown.data):
            continue  # a zero value Go writes for a non-pointer field: nothing to lose
        where = f" in {path}" if path else ""
        raise ProtobufBodyError(
            f"the protobuf body of {kind or name} carries field number {unknown.field_number}"
            f"{where}, which is not decoded here; send it as application/json",
            kind,
        )
