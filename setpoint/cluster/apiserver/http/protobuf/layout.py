"""The vocabulary of the message tables: fields, messages and the value types they carry.

A :class:`Message` lists its fields as the upstream ``generated.proto`` declares them: the JSON
name, the protobuf field number, the value type and the cardinality. Value types are protobuf
scalars (``STRING``, ``INT32``, ...), the apimachinery wrapper types that have their own JSON
form (``TIME``, ``QUANTITY``, ``INT_OR_STRING`` ...), or the name of another message in the
tables (``"core.v1.PodSpec"``).

Go's protobuf marshaller writes every non-pointer field, even at its zero value, while its JSON
marshaller drops zero values of ``omitempty`` fields. ``keep_zero`` marks the fields whose zero
value the JSON form keeps (pointers such as ``spec.replicas``, and fields without
``omitempty``), so that a decoded body reads like the JSON body the same client would send.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Scalar(Enum):
    """Protobuf scalar types used by the Kubernetes API messages."""

    STRING = "string"
    INT32 = "int32"
    INT64 = "int64"
    BOOL = "bool"
    BYTES = "bytes"  # base64 in JSON (Secret data, ConfigMap binaryData)


class Wrapper(Enum):
    """apimachinery types whose JSON form is not the JSON form of their message."""

    TIME = "Time"  # {seconds, nanos} -> "2006-01-02T15:04:05Z"
    MICRO_TIME = "MicroTime"  # {seconds, nanos} -> "2006-01-02T15:04:05.000000Z"
    QUANTITY = "Quantity"  # {string} -> "100m"
    INT_OR_STRING = "IntOrString"  # {type, intVal, strVal} -> 80 or "http"
    STRING_LIST = "StringList"  # ExtraValue {items} -> ["a", "b"]
    FIELDS_V1 = "FieldsV1"  # {Raw} -> the JSON object Raw holds (managedFields[].fieldsV1)


STRING = Scalar.STRING
INT32 = Scalar.INT32
INT64 = Scalar.INT64
BOOL = Scalar.BOOL
BYTES = Scalar.BYTES
TIME = Wrapper.TIME
MICRO_TIME = Wrapper.MICRO_TIME
QUANTITY = Wrapper.QUANTITY
INT_OR_STRING = Wrapper.INT_OR_STRING
STRING_LIST = Wrapper.STRING_LIST
FIELDS_V1 = Wrapper.FIELDS_V1

#: A field's value type: a scalar, a wrapper, or the table name of a message.
ValueType = Scalar | Wrapper | str


class Cardinality(Enum):
    """How many values a field holds."""

    SINGLE = "single"
    REPEATED = "repeated"
    MAP = "map"  # map<string, value>
    #: Declared upstream but not decoded here: accepted only when absent or empty.
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message."""

    json_name: str
    number: int
    type: ValueType
    cardinality: Cardinality = Cardinality.SINGLE
    keep_zero: bool = False
    #: Go embeds the struct with ``json:",inline"``: its fields join the parent's JSON object.
    inline: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One message type: its table name (``"core.v1.ConfigMap"``) and fields."""

    name: str
    fields: tuple[Field, ...]


def message(name: str, *fields: Field) -> Message:
    """A message with ``fields``."""
    return Message(name, fields)


def field(
    json_name: str, number: int, type_: ValueType, *, keep_zero: bool = False, inline: bool = False
) -> Field:
    """A singular field."""
    return Field(json_name, number, type_, Cardinality.SINGLE, keep_zero, inline)


def repeated(json_name: str, number: int, type_: ValueType) -> Field:
    """A repeated field (a JSON array)."""
    return Field(json_name, number, type_, Cardinality.REPEATED)


def mapping(json_name: str, number: int, type_: ValueType) -> Field:
    """A ``map<string, type>`` field (a JSON object)."""
    return Field(json_name, number, type_, Cardinality.MAP)


def unsupported(json_name: str, number: int) -> Field:
    """A field whose message is not in the tables; a body that sets it is refused."""
    return Field(json_name, number, BYTES, Cardinality.UNSUPPORTED)
