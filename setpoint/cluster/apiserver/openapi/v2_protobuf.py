"""The v2 document in protobuf, as kubectl 1.27 and 1.28 ask for it.

Those kubectl versions read ``/openapi/v2`` with ``Accept:
application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` only (no JSON fallback) before
validating or explaining. The message is gnostic's ``openapi.v2.Document``; its field numbers
(from gnostic-models' ``OpenAPIv2.proto``) are declared in :data:`GNOSTIC_MESSAGES`, turned
into protobuf classes at run time, and filled from the JSON document. Vendor extensions
(``x-kubernetes-*``) and free-form values (``enum``, ``default``) travel as YAML text, as
gnostic carries them.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import yaml

MEDIA_TYPE: Final = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: What the answer says it is: Go's mime parser refuses the '@' of the requested type, so
#: kube-openapi answers with a '.' in its place.
RESPONSE_MEDIA_TYPE: Final = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_PACKAGE: Final = "setpoint.openapi.v2"

#: message → (field name, number, type; a trailing ``*`` means repeated).
GNOSTIC_MESSAGES: Final[dict[str, tuple[tuple[str, int, str], ...]]] = {
    "Document": (
        ("swagger", 1, "string"),
        ("info", 2, "Info"),
        ("schemes", 5, "string*"),
        ("consumes", 6, "string*"),
        ("produces", 7, "string*"),
        ("paths", 8, "Paths"),
        ("definitions", 9, "Definitions"),
        ("vendor_extension", 16, "NamedAny*"),
    ),
    "Info": (("title", 1, "string"), ("version", 2, "string"), ("description", 3, "string")),
    "Paths": (("vendor_extension", 1, "NamedAny*"), ("path", 2, "NamedPathItem*")),
    "NamedPathItem": (("name", 1, "string"), ("value", 2, "PathItem")),
    "PathItem": (
        ("_ref", 1, "string"),
        ("get", 2, "Operation"),
        ("put", 3, "Operation"),
        ("post", 4, "Operation"),
        ("delete", 5, "Operation"),
        ("options", 6, "Operation"),
        ("head", 7, "Operation"),
        ("patch", 8, "Operation"),
        ("parameters", 9, "ParametersItem*"),
        ("vendor_extension", 10, "NamedAny*"),
    ),
    "Operation": (
        ("tags", 1, "string*"),
        ("summary", 2, "string"),
        ("description", 3, "string"),
        ("operation_id", 5, "string"),
        ("produces", 6, "string*"),
        ("consumes", 7, "string*"),
        ("parameters", 8, "ParametersItem*"),
        ("responses", 9, "Responses"),
        ("schemes", 10, "string*"),
        ("deprecated", 11, "bool"),
        ("vendor_extension", 13, "NamedAny*"),
    ),
    "ParametersItem": (("parameter", 1, "Parameter"), ("json_reference", 2, "JsonReference")),
    "Parameter": (
        ("body_parameter", 1, "BodyParameter"),
        ("non_body_parameter", 2, "NonBodyParameter"),
    ),
    "BodyParameter": (
        ("description", 1, "string"),
        ("name", 2, "string"),
        ("in", 3, "string"),
        ("required", 4, "bool"),
        ("schema", 5, "Schema"),
        ("vendor_extension", 6, "NamedAny*"),
    ),
    "NonBodyParameter": (
        ("query_parameter_sub_schema", 3, "QueryParameterSubSchema"),
        ("path_parameter_sub_schema", 4, "PathParameterSubSchema"),
    ),
    "QueryParameterSubSchema": (
        ("required", 1, "bool"),
        ("in", 2, "string"),
        ("description", 3, "string"),
        ("name", 4, "string"),
        ("type", 6, "string"),
        ("format", 7, "string"),
        ("unique_items", 20, "bool"),
        ("vendor_extension", 23, "NamedAny*"),
    ),
    "PathParameterSubSchema": (
        ("required", 1, "bool"),
        ("in", 2, "string"),
        ("description", 3, "string"),
        ("name", 4, "string"),
        ("type", 5, "string"),
        ("format", 6, "string"),
        ("unique_items", 19, "bool"),
        ("vendor_extension", 22, "NamedAny*"),
    ),
    "JsonReference": (("_ref", 1, "string"), ("description", 2, "string")),
    "Responses": (
        ("response_code", 1, "NamedResponseValue*"),
        ("vendor_extension", 2, "NamedAny*"),
    ),
    "NamedResponseValue": (("name", 1, "string"), ("value", 2, "ResponseValue")),
    "ResponseValue": (("response", 1, "Response"), ("json_reference", 2, "JsonReference")),
    "Response": (
        ("description", 1, "string"),
        ("schema", 2, "SchemaItem"),
        ("vendor_extension", 5, "NamedAny*"),
    ),
    "SchemaItem": (("schema", 1, "Schema"),),
    "Definitions": (("additional_properties", 1, "NamedSchema*"),),
    "NamedSchema": (("name", 1, "string"), ("value", 2, "Schema")),
    "Schema": (
        ("_ref", 1, "string"),
        ("format", 2, "string"),
        ("title", 3, "string"),
        ("description", 4, "string"),
        ("default", 5, "Any"),
        ("multiple_of", 6, "double"),
        ("maximum", 7, "double"),
        ("exclusive_maximum", 8, "bool"),
        ("minimum", 9, "double"),
        ("exclusive_minimum", 10, "bool"),
        ("max_length", 11, "int64"),
        ("min_length", 12, "int64"),
        ("pattern", 13, "string"),
        ("max_items", 14, "int64"),
        ("min_items", 15, "int64"),
        ("unique_items", 16, "bool"),
        ("max_properties", 17, "int64"),
        ("min_properties", 18, "int64"),
        ("required", 19, "string*"),
        ("enum", 20, "Any*"),
        ("additional_properties", 21, "AdditionalPropertiesItem"),
        ("type", 22, "TypeItem"),
        ("items", 23, "ItemsItem"),
        ("all_of", 24, "Schema*"),
        ("properties", 25, "Properties"),
        ("discriminator", 26, "string"),
        ("read_only", 27, "bool"),
        ("example", 30, "Any"),
        ("vendor_extension", 31, "NamedAny*"),
    ),
    "AdditionalPropertiesItem": (("schema", 1, "Schema"), ("boolean", 2, "bool")),
    "TypeItem": (("value", 1, "string*"),),
    "ItemsItem": (("schema", 1, "Schema*"),),
    "Properties": (("additional_properties", 1, "NamedSchema*"),),
    "NamedAny": (("name", 1, "string"), ("value", 2, "Any")),
    "Any": (("yaml", 2, "string"),),
}

#: JSON Schema keywords carried as plain Schema fields: JSON name → proto field.
_SCHEMA_SCALARS: Final = {
    "format": "format",
    "title": "title",
    "description": "description",
    "multipleOf": "multiple_of",
    "maximum": "maximum",
    "exclusiveMaximum": "exclusive_maximum",
    "minimum": "minimum",
    "exclusiveMinimum": "exclusive_minimum",
    "maxLength": "max_length",
    "minLength": "min_length",
    "pattern": "pattern",
    "maxItems": "max_items",
    "minItems": "min_items",
    "uniqueItems": "unique_items",
    "maxProperties": "max_properties",
    "minProperties": "min_properties",
    "discriminator": "discriminator",
    "readOnly": "read_only",
}


@functools.cache
def _classes() -> dict[str, Any]:
    # protobuf is imported with the first request for this document, not at start-up
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fd = descriptor_pb2.FieldDescriptorProto
    scalars = {
        "string": fd.TYPE_STRING,
        "bool": fd.TYPE_BOOL,
        "int64": fd.TYPE_INT64,
        "double": fd.TYPE_DOUBLE,
    }
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="setpoint/openapi_v2.proto", package=_PACKAGE, syntax="proto2"
    )
    for name, fields in GNOSTIC_MESSAGES.items():
        message = file_proto.message_type.add(name=name)
        for field_name, number, type_name in fields:
            repeated = type_name.endswith("*")
            base = type_name.rstrip("*")
            field = message.field.add(name=field_name, number=number)
            field.label = fd.LABEL_REPEATED if repeated else fd.LABEL_OPTIONAL
            if base in scalars:
                field.type = scalars[base]
            else:
                field.type = fd.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{base}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in GNOSTIC_MESSAGES
    }


def _yaml(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return text.removesuffix("...\n")


def _extensions(target: Any, node: dict[str, Any]) -> None:
    for key, value in node.items():
        if key.startswith("x-"):
            entry = target.vendor_extension.add(name=key)
            entry.value.yaml = _yaml(value)


def _schema(target: Any, node: dict[str, Any]) -> None:
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            target._ref = value
        elif key in _SCHEMA_SCALARS and not isinstance(value, dict | list):
            try:
                setattr(target, _SCHEMA_SCALARS[key], value)
            except (TypeError, ValueError):
                pass  # a value the v2 form cannot carry: the keyword is left out
        elif key == "type" and isinstance(value, str):
            target.type.value.append(value)
        elif key == "required" and isinstance(value, list):
            target.required.extend(str(item) for item in value)
        elif key == "enum" and isinstance(value, list):
            for item in value:
                target.enum.add(yaml=_yaml(item))
        elif key in ("default", "example"):
            getattr(target, key).yaml = _yaml(value)
        elif key == "items" and isinstance(value, dict):
            _schema(target.items.schema.add(), value)
        elif key == "allOf" and isinstance(value, list):
            for item in value:
                _schema(target.all_of.add(), item)
        elif key == "properties" and isinstance(value, dict):
            for name, item in value.items():
                _schema(target.properties.additional_properties.add(name=name).value, item)
        elif key == "additionalProperties":
            if isinstance(value, bool):
                target.additional_properties.boolean = value
            elif isinstance(value, dict):
                _schema(target.additional_properties.schema, value)
    _extensions(target, node)


def _parameter(target: Any, node: dict[str, Any]) -> None:
    where = node.get("in")
    if where == "body":
        body = target.parameter.body_parameter
        body.name = node.get("name", "body")
        body.required = bool(node.get("required", False))
        setattr(body, "in", "body")
        _schema(body.schema, node.get("schema", {}))
        return
    if where == "path":
        sub = target.parameter.non_body_parameter.path_parameter_sub_schema
    else:
        sub = target.parameter.non_body_parameter.query_parameter_sub_schema
    setattr(sub, "in", where or "query")
    sub.name = node.get("name", "")
    if "description" in node:
        sub.description = node["description"]
    if node.get("required"):
        sub.required = True
    if isinstance(node.get("type"), str):
        sub.type = node["type"]
    if node.get("uniqueItems"):
        sub.unique_items = True
    _extensions(sub, node)


def _operation(target: Any, node: dict[str, Any]) -> None:
    for key, field_name in (("description", "description"), ("operationId", "operation_id")):
        if key in node:
            setattr(target, field_name, node[key])
    for key in ("tags", "produces", "consumes", "schemes"):
        getattr(target, key).extend(node.get(key, []))
    for parameter in node.get("parameters", []):
        _parameter(target.parameters.add(), parameter)
    for code, response in node.get("responses", {}).items():
        value = target.responses.response_code.add(name=code).value.response
        value.description = response.get("description", "")
        if isinstance(response.get("schema"), dict):
            _schema(value.schema.schema, response["schema"])
    _extensions(target, node)


def encode_v2(document: dict[str, Any]) -> bytes:
    """The gnostic protobuf encoding of a Swagger 2.0 JSON document."""
    message = _classes()["Document"]()
    message.swagger = document.get("swagger", "2.0")
    info = document.get("info", {})
    message.info.title = info.get("title", "")
    message.info.version = info.get("version", "")
    for path, item in document.get("paths", {}).items():
        entry = message.paths.path.add(name=path)
        for method, operation in item.items():
            if method == "parameters":
                for parameter in operation:
                    _parameter(entry.value.parameters.add(), parameter)
            elif method in ("get", "put", "post", "delete", "options", "head", "patch"):
                _operation(getattr(entry.value, method), operation)
    for name, schema in document.get("definitions", {}).items():
        _schema(message.definitions.additional_properties.add(name=name).value, schema)
    encoded: bytes = message.SerializeToString()
    return encoded
