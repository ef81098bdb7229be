"""Protobuf message classes built at run time from the message tables.

The tables are turned into one ``FileDescriptorProto`` (proto2, so singular fields keep their
presence), added to a private descriptor pool, and the ``protobuf`` package makes a message
class per table entry. The wrapper types get the small messages upstream declares for them.
Built once, on first use.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message as ProtoMessage

from setpoint.cluster.apiserver.http.protobuf.layout import (
    Cardinality,
    Field,
    Message,
    Scalar,
    Wrapper,
)
from setpoint.cluster.apiserver.http.protobuf.messages import MESSAGES

PACKAGE: Final = "setpoint.wire"
#: The name of the field-less message (and its key in :func:`message_classes`).
EMPTY: Final = "wire_Empty"
_FD = descriptor_pb2.FieldDescriptorProto

_SCALAR_TYPES: Final = {
    Scalar.STRING: _FD.TYPE_STRING,
    Scalar.INT32: _FD.TYPE_INT32,
    Scalar.INT64: _FD.TYPE_INT64,
    Scalar.BOOL: _FD.TYPE_BOOL,
    Scalar.BYTES: _FD.TYPE_BYTES,
}

#: The messages behind the wrapper types (apimachinery's ``generated.proto``).
_WRAPPER_FIELDS: Final[dict[Wrapper, tuple[tuple[str, int, int, bool], ...]]] = {
    Wrapper.TIME: (("seconds", 1, _FD.TYPE_INT64, False), ("nanos", 2, _FD.TYPE_INT32, False)),
    Wrapper.MICRO_TIME: (
        ("seconds", 1, _FD.TYPE_INT64, False),
        ("nanos", 2, _FD.TYPE_INT32, False),
    ),
    Wrapper.QUANTITY: (("string", 1, _FD.TYPE_STRING, False),),
    Wrapper.INT_OR_STRING: (
        ("type", 1, _FD.TYPE_INT64, False),
        ("intVal", 2, _FD.TYPE_INT32, False),
        ("strVal", 3, _FD.TYPE_STRING, False),
    ),
    Wrapper.STRING_LIST: (("items", 1, _FD.TYPE_STRING, True),),
    Wrapper.FIELDS_V1: (("Raw", 1, _FD.TYPE_BYTES, False),),
}


def proto_name(name: str) -> str:
    """The descriptor name of a table entry (``core.v1.Pod`` → ``core_v1_Pod``)."""
    return name.replace(".", "_")


def _type_name(value_type: Scalar | Wrapper | str) -> str:
    if isinstance(value_type, Wrapper):
        return f".{PACKAGE}.wrapper_{value_type.value}"
    assert isinstance(value_type, str)
    return f".{PACKAGE}.{proto_name(value_type)}"


def _set_value_type(target: Any, value_type: Scalar | Wrapper | str) -> None:
    if isinstance(value_type, Scalar):
        target.type = _SCALAR_TYPES[value_type]
    else:
        target.type = _FD.TYPE_MESSAGE
        target.type_name = _type_name(value_type)


def _add_field(descriptor: Any, spec: Field) -> None:
    proto = descriptor.field.add()
    proto.name = spec.json_name
    proto.number = spec.number
    if spec.cardinality is Cardinality.SINGLE:
        proto.label = _FD.LABEL_OPTIONAL
        _set_value_type(proto, spec.type)
        return
    proto.label = _FD.LABEL_REPEATED
    if spec.cardinality is Cardinality.UNSUPPORTED:
        # Any length-delimited value parses as bytes: kept to tell empty from set.
        proto.type = _FD.TYPE_BYTES
        return
    if spec.cardinality is Cardinality.REPEATED:
        _set_value_type(proto, spec.type)
        return
    entry = descriptor.nested_type.add()
    entry.name = f"{spec.json_name[:1].upper()}{spec.json_name[1:]}Entry"
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, label=_FD.LABEL_OPTIONAL, type=_FD.TYPE_STRING)
    value = entry.field.add(name="value", number=2, label=_FD.LABEL_OPTIONAL)
    _set_value_type(value, spec.type)
    proto.type = _FD.TYPE_MESSAGE
    proto.type_name = f".{PACKAGE}.{descriptor.name}.{entry.name}"


def file_descriptor(messages: tuple[Message, ...] = MESSAGES) -> Any:
    """The ``FileDescriptorProto`` declaring every table message and wrapper type."""
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="setpoint/wire.proto", package=PACKAGE, syntax="proto2"
    )
    for wrapper, fields in _WRAPPER_FIELDS.items():
        descriptor = file_proto.message_type.add(name=f"wrapper_{wrapper.value}")
        for name, number, type_, is_repeated in fields:
            label = _FD.LABEL_REPEATED if is_repeated else _FD.LABEL_OPTIONAL
            descriptor.field.add(name=name, number=number, label=label, type=type_)
    # No fields: parsing into it lists every field of a value as unknown (see decoding).
    file_proto.message_type.add(name=EMPTY)
    for spec in messages:
        descriptor = file_proto.message_type.add(name=proto_name(spec.name))
        for field_spec in spec.fields:
            _add_field(descriptor, field_spec)
    return file_proto


@functools.cache
def message_classes() -> dict[str, type[ProtoMessage]]:
    """A protobuf message class per table name."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())
    classes = {
        spec.name: message_factory.GetMessageClass(
            pool.FindMessageTypeByName(f"{PACKAGE}.{proto_name(spec.name)}")
        )
        for spec in MESSAGES
    }
    classes[EMPTY] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{PACKAGE}.{EMPTY}")
    )
    return classes


@functools.cache
def layouts() -> dict[str, Message]:
    """The table entries by name."""
    return {spec.name: spec for spec in MESSAGES}
