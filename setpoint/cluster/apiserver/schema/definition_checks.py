"""Checks of a CRD's ``openAPIV3Schema`` itself: is it an allowed, *structural* schema?

kube-apiserver rejects a CustomResourceDefinition whose schema it could not prune, default or
validate with. This module mirrors, with the same paths and messages:

- ``apiextensions/validation.ValidateCustomResourceDefinitionOpenAPISchema`` (forbidden
  keywords, list/map type extensions, ``uniqueItems``, list-map keys, defaults in metadata);
- ``apiserver/schema.ValidateStructural`` (every specified field has a type, ``items`` for
  arrays, nothing but value validations inside ``anyOf``/``allOf``/``oneOf``/``not``, root
  ``metadata`` restricted to ``name``/``generateName``, embedded resources), errors sorted;
- ``apiserver/schema/defaulting.ValidateDefaults`` (defaults are pruned and valid).

Paths look like ``spec.versions[0].schema.openAPIV3Schema.properties[spec].type``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError, GoValue
from setpoint.api.go_format import go_quote
from setpoint.cluster.apiserver.schema.cel_rules import (
    SUPPORTED_REASONS,
    RuleCompileError,
    compile_rule,
    message_expression_compile_error,
)
from setpoint.cluster.apiserver.schema.compiled import SchemaError, compile_node
from setpoint.cluster.apiserver.schema.pruning import prune
from setpoint.cluster.apiserver.schema.re2_pattern import pattern_error
from setpoint.cluster.apiserver.schema.value_validation import ValueValidator, strict_equal

OPENAPI_V3_TYPES: Final = ("array", "boolean", "integer", "number", "object", "string")
_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})
_LIST_TYPES: Final = ("atomic", "set", "map")
_MAP_TYPES: Final = ("atomic", "granular")
# Keywords allowed at the root when the status subresource is on (allowedFieldsAtRootSchema).
_ALLOWED_AT_ROOT_WITH_STATUS: Final = frozenset(
    {
        "description",
        "type",
        "format",
        "title",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "required",
        "items",
        "properties",
        "externalDocs",
        "example",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)
_ALLOWED_AT_ROOT_TEXT: Final = (
    "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
    "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
    "ExternalDocs Example XPreserveUnknownFields XValidations]"
)
# The int-or-string spelling older CRDs used: anyOf [{type: integer}, {type: string}].
_INT_OR_STRING_ANY_OF: Final = [{"type": "integer"}, {"type": "string"}]

_ROOT, _ITEM, _FIELD = "root", "item", "field"


def _key(path: str, name: str) -> str:
    return f"{path}[{name}]"


def _schema_value() -> GoValue:
    # Upstream prints the Go struct (%#v); its exact text cannot be reproduced meaningfully.
    return GoValue("apiextensions.JSONSchemaProps{...}")


def validate_crd_schema(
    schema: Any, path: str, *, status_enabled: bool = False
) -> list[FieldError]:
    """All problems of one version's ``openAPIV3Schema`` at ``path`` (``...schema``)."""
    root_path = f"{path}.openAPIV3Schema"
    if not isinstance(schema, Mapping):
        return [fe.invalid(root_path, schema, "must be an object")]
    decoding = keyword_type_errors(schema, root_path)
    if decoding:
        return decoding  # upstream cannot even decode such a schema; nothing else is checked
    errors: list[FieldError] = []
    if status_enabled:
        errors.extend(_status_root_errors(schema, path))
    if schema.get("nullable"):
        errors.append(fe.forbidden(f"{root_path}.nullable", "nullable cannot be true at the root"))
    structural = structural_errors(schema, root_path)
    if structural:
        errors.extend(structural)
    else:
        errors.extend(default_errors(schema, root_path))
    errors.extend(_openapi_errors(schema, root_path, is_root=True, ctx=_Context()))
    return errors


def _status_root_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    for key, value in schema.items():
        # Zero values are skipped, as upstream's reflection does; additionalProperties is a
        # pointer there, so even ``false`` counts as set.
        if value is None or value == "" or (value is False and key != "additionalProperties"):
            continue
        if key == "type":
            if value != "object":
                detail = (
                    'only "object" is allowed as the type at the root of the schema '
                    "if the status subresource is enabled"
                )
                return [fe.invalid(f"{path}.openAPIV3Schema.type", value, detail)]
            continue
        if key not in _ALLOWED_AT_ROOT_WITH_STATUS:
            detail = (
                f"only {_ALLOWED_AT_ROOT_TEXT} fields are allowed at the root of the schema "
                "if the status subresource is enabled"
            )
            return [fe.invalid(f"{path}.openAPIV3Schema", _schema_value(), detail)]
    return []


# --- decoding: every keyword must have the JSON type JSONSchemaProps declares ---

_STRING_KEYWORDS: Final = frozenset(
    {
        "id",
        "$schema",
        "$ref",
        "description",
        "type",
        "format",
        "title",
        "pattern",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    }
)
_NUMBER_KEYWORDS: Final = frozenset({"maximum", "minimum", "multipleOf"})
_INTEGER_KEYWORDS: Final = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"}
)
_BOOLEAN_KEYWORDS: Final = frozenset(
    {
        "exclusiveMaximum",
        "exclusiveMinimum",
        "uniqueItems",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    }
)
_STRING_LIST_KEYWORDS: Final = frozenset({"required", "x-kubernetes-list-map-keys"})
_SCHEMA_LIST_KEYWORDS: Final = frozenset({"allOf", "oneOf", "anyOf", "x-kubernetes-validations"})
_SCHEMA_MAP_KEYWORDS: Final = frozenset({"properties", "definitions", "patternProperties"})


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else "null"


def _keyword_problem(keyword: str, value: Any) -> str | None:
    """What JSON type ``keyword`` needs, if ``value`` does not have it (null is always fine)."""
    kind = _json_type(value)
    if value is None:
        return None
    if keyword in _STRING_KEYWORDS and kind != "string":
        return "string"
    if keyword in _NUMBER_KEYWORDS and kind not in ("integer", "number"):
        return "number"
    if keyword in _INTEGER_KEYWORDS and not (
        kind == "integer" or (kind == "number" and float(value).is_integer())
    ):
        return "integer"
    if keyword in _BOOLEAN_KEYWORDS and kind != "boolean":
        return "boolean"
    if keyword in _STRING_LIST_KEYWORDS and (
        kind != "array" or not all(isinstance(item, str) for item in value)
    ):
        return "array of strings"
    if keyword == "enum" and kind != "array":
        return "array"
    if keyword in _SCHEMA_LIST_KEYWORDS and (
        kind != "array" or not all(isinstance(item, Mapping) for item in value)
    ):
        return "array of objects"
    if keyword in _SCHEMA_MAP_KEYWORDS and (
        kind != "object" or not all(isinstance(item, Mapping) for item in value.values())
    ):
        return "object of schemas"
    if keyword == "not" and kind != "object":
        return "object"
    if keyword in ("additionalProperties", "additionalItems") and kind not in ("object", "boolean"):
        return "object or boolean"
    if keyword == "items" and (
        kind not in ("object", "array")
        or (kind == "array" and not all(isinstance(item, Mapping) for item in value))
    ):
        return "object or array of objects"
    return None


def keyword_type_errors(schema: Any, path: str) -> list[FieldError]:
    """Keywords whose JSON type is wrong anywhere in ``schema`` (they would not decode)."""
    if not isinstance(schema, Mapping):
        return [fe.type_invalid(path, _json_type(schema), "must be of type object")]
    errors: list[FieldError] = []
    for keyword, value in schema.items():
        expected = _keyword_problem(keyword, value)
        if expected is not None:
            errors.append(
                fe.type_invalid(
                    f"{path}.{keyword}", _json_type(value), f"must be of type {expected}"
                )
            )
            continue
        if keyword in ("properties", "definitions", "patternProperties") and value:
            for name, child in value.items():
                errors.extend(keyword_type_errors(child, _key(f"{path}.{keyword}", name)))
        elif keyword in ("allOf", "oneOf", "anyOf") and value:
            for index, child in enumerate(value):
                errors.extend(keyword_type_errors(child, f"{path}.{keyword}[{index}]"))
        elif keyword in ("not", "additionalProperties", "additionalItems") and isinstance(
            value, Mapping
        ):
            errors.extend(keyword_type_errors(value, f"{path}.{keyword}"))
        elif keyword == "items" and isinstance(value, Mapping):
            errors.extend(keyword_type_errors(value, f"{path}.items"))
        elif keyword == "items" and isinstance(value, list):
            for index, child in enumerate(value):
                errors.extend(keyword_type_errors(child, f"{path}.items[{index}]"))
    return errors


# --- ValidateCustomResourceDefinitionOpenAPISchema ---


class _Context:
    """What the standard validator knows about where it is (specStandardValidatorV3)."""

    __slots__ = ("allow_defaults", "defaults_reason", "inside_resource_meta")

    def __init__(
        self,
        allow_defaults: bool = True,
        defaults_reason: str = "",
        inside_resource_meta: bool = False,
    ) -> None:
        self.allow_defaults = allow_defaults
        self.defaults_reason = defaults_reason
        self.inside_resource_meta = inside_resource_meta

    def forbid_defaults(self, reason: str) -> _Context:
        return _Context(False, reason, self.inside_resource_meta)

    def inside_meta(self) -> _Context:
        return _Context(self.allow_defaults, self.defaults_reason, True)


def _standard_errors(schema: Mapping[str, Any], path: str, ctx: _Context) -> list[FieldError]:
    errors: list[FieldError] = []
    schema_type = schema.get("type")
    if isinstance(schema_type, str) and schema_type and schema_type not in OPENAPI_V3_TYPES:
        errors.append(fe.not_supported(f"{path}.type", schema_type, OPENAPI_V3_TYPES))
    if "default" in schema and schema["default"] is not None and not ctx.allow_defaults:
        detail = "must not be set"
        if ctx.defaults_reason:
            detail += " " + ctx.defaults_reason
        errors.append(fe.forbidden(f"{path}.default", detail))
    if schema.get("id"):
        errors.append(fe.forbidden(f"{path}.id", "id is not supported"))
    if schema.get("additionalItems") is not None:
        errors.append(fe.forbidden(f"{path}.additionalItems", "additionalItems is not supported"))
    if schema.get("patternProperties"):
        detail = "patternProperties is not supported"
        errors.append(fe.forbidden(f"{path}.patternProperties", detail))
    if schema.get("definitions"):
        errors.append(fe.forbidden(f"{path}.definitions", "definitions is not supported"))
    if schema.get("dependencies") is not None:
        errors.append(fe.forbidden(f"{path}.dependencies", "dependencies is not supported"))
    if schema.get("$ref") is not None:
        errors.append(fe.forbidden(f"{path}.$ref", "$ref is not supported"))
    if schema_type == "null":
        detail = "type cannot be set to null, use nullable as an alternative"
        errors.append(fe.forbidden(f"{path}.type", detail))
    if isinstance(schema.get("items"), list):
        detail = "items must be a schema object and not an array"
        errors.append(fe.forbidden(f"{path}.items", detail))
    if ctx.inside_resource_meta and schema.get("x-kubernetes-embedded-resource"):
        detail = "must not be used inside of resource meta"
        errors.append(fe.forbidden(f"{path}.x-kubernetes-embedded-resource", detail))
    return errors


def _openapi_errors(schema: Any, path: str, *, is_root: bool, ctx: _Context) -> list[FieldError]:
    if not isinstance(schema, Mapping):
        return []
    errors = _standard_errors(schema, path, ctx)
    if schema.get("uniqueItems"):
        detail = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        errors.append(fe.forbidden(f"{path}.uniqueItems", detail))
    extra = schema.get("additionalProperties")
    properties = schema.get("properties")
    if extra is not None:
        if properties and (extra is False or isinstance(extra, Mapping)):
            detail = "additionalProperties and properties are mutual exclusive"
            errors.append(fe.forbidden(f"{path}.additionalProperties", detail))
        sub_ctx = ctx
        if ctx.inside_resource_meta:
            sub_ctx = ctx.forbid_defaults("inside additionalProperties applying to object metadata")
        errors.extend(
            _openapi_errors(extra, f"{path}.additionalProperties", is_root=False, ctx=sub_ctx)
        )
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            sub_ctx = ctx
            if (is_root or schema.get("x-kubernetes-embedded-resource")) and name in _META_FIELDS:
                sub_ctx = sub_ctx.inside_meta()
                if is_root:
                    sub_ctx = sub_ctx.forbid_defaults(f"in top-level {name}")
            errors.extend(
                _openapi_errors(child, _key(f"{path}.properties", name), is_root=False, ctx=sub_ctx)
            )
    errors.extend(_openapi_errors(schema.get("not"), f"{path}.not", is_root=False, ctx=ctx))
    for keyword in ("allOf", "oneOf", "anyOf"):
        for index, sub in enumerate(_list(schema.get(keyword))):
            errors.extend(
                _openapi_errors(sub, f"{path}.{keyword}[{index}]", is_root=False, ctx=ctx)
            )
    items = schema.get("items")
    if isinstance(items, Mapping):
        errors.extend(_openapi_errors(items, f"{path}.items", is_root=False, ctx=ctx))
    errors.extend(_extension_errors(schema, path))
    return errors


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _wrong_type(path: str, schema_type: str, detail: str) -> FieldError:
    """``<path>.type`` is missing (Required) or another type (Invalid) than an extension needs."""
    if not schema_type:
        return fe.required(f"{path}.type", detail)
    return fe.invalid(f"{path}.type", schema_type, detail)


def _extension_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    schema_type = schema.get("type") or ""
    if schema.get("x-kubernetes-preserve-unknown-fields") is False:
        detail = "must be true or undefined"
        errors.append(fe.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, detail))
    map_type = schema.get("x-kubernetes-map-type")
    if map_type is not None and schema_type != "object":
        errors.append(
            _wrong_type(path, schema_type, "must be object if x-kubernetes-map-type is specified")
        )
    if map_type is not None and map_type not in _MAP_TYPES:
        errors.append(fe.not_supported(f"{path}.x-kubernetes-map-type", map_type, _MAP_TYPES))
    list_type = schema.get("x-kubernetes-list-type")
    items = schema.get("items")
    if list_type is not None and schema_type != "array":
        errors.append(
            _wrong_type(path, schema_type, "must be array if x-kubernetes-list-type is specified")
        )
    elif list_type == "set" and isinstance(items, Mapping):
        detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
        item_type = items.get("type")
        item_list_type = items.get("x-kubernetes-list-type")
        if item_type == "array" and item_list_type not in (None, "atomic"):
            errors.append(
                fe.invalid(f"{path}.items.x-kubernetes-list-type", item_list_type, detail)
            )
        elif item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errors.append(fe.invalid(f"{path}.items.x-kubernetes-map-type", item_list_type, detail))
    if list_type is not None and list_type not in _LIST_TYPES:
        errors.append(fe.not_supported(f"{path}.x-kubernetes-list-type", list_type, _LIST_TYPES))
    map_keys = _list(schema.get("x-kubernetes-list-map-keys"))
    if map_keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errors.append(fe.required(f"{path}.x-kubernetes-list-type", detail))
        elif list_type != "map":
            errors.append(fe.invalid(f"{path}.x-kubernetes-list-type", list_type, detail))
    if list_type == "map":
        errors.extend(_list_map_errors(schema, path, map_keys))
    errors.extend(_map_list_keys_map_set_errors(schema, path, list_type, map_keys))
    for index, rule in enumerate(_list(schema.get("x-kubernetes-validations"))):
        rule_path = f"{path}.x-kubernetes-validations[{index}]"
        text = rule.get("rule", "") if isinstance(rule, Mapping) else ""
        if not isinstance(text, str) or not text.strip():
            errors.append(fe.required(f"{rule_path}.rule", "rule is not specified"))
        elif isinstance(rule, Mapping):
            entry_errors = rule_entry_errors(rule, rule_path)
            errors.extend(entry_errors)
            if not entry_errors:  # upstream compiles only rules whose entry is well-formed
                errors.extend(cel_rule_errors(rule, rule_path))
    return errors


def rule_entry_errors(rule: Mapping[str, Any], path: str) -> list[FieldError]:
    """The shape checks of one ``x-kubernetes-validations`` entry, as upstream words them."""
    errors: list[FieldError] = []
    text = str(rule.get("rule") or "").strip()
    message = str(rule.get("message") or "")
    trimmed = message.strip()
    if message and not trimmed:
        errors.append(
            fe.invalid(f"{path}.message", message, "message must be non-empty if specified")
        )
    elif "\n" in trimmed or "\r" in trimmed:
        errors.append(
            fe.invalid(f"{path}.message", message, "message must not contain line breaks")
        )
    elif ("\n" in text or "\r" in text) and not trimmed:
        detail = "message must be specified if rule contains line breaks"
        errors.append(fe.required(f"{path}.message", detail))
    expression = str(rule.get("messageExpression") or "")
    if expression and not expression.strip():
        detail = "messageExpression must be non-empty if specified"
        errors.append(fe.required(f"{path}.messageExpression", detail))
    reason = rule.get("reason")
    if reason is not None and reason not in SUPPORTED_REASONS:
        errors.append(fe.not_supported(f"{path}.reason", reason, SUPPORTED_REASONS))
    field_path = str(rule.get("fieldPath") or "")
    if field_path and not field_path.strip():
        detail = "fieldPath must be non-empty if specified"
        errors.append(fe.invalid(f"{path}.fieldPath", field_path, detail))
    if "\n" in field_path or "\r" in field_path:
        detail = "fieldPath must not contain line breaks"
        errors.append(fe.invalid(f"{path}.fieldPath", field_path, detail))
    return errors


def cel_rule_errors(rule: Mapping[str, Any], path: str) -> list[FieldError]:
    """Whether a rule and its messageExpression compile, in upstream's words."""
    errors: list[FieldError] = []
    try:
        compiled = compile_rule({**rule, "messageExpression": None})
    except RuleCompileError as exc:
        errors.append(fe.invalid(f"{path}.rule", _go_validation_rule(rule), str(exc)))
        return errors
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression.strip():
        problem = message_expression_compile_error(expression)
        if problem is not None:
            errors.append(
                fe.invalid(f"{path}.messageExpression", _go_validation_rule(rule), problem)
            )
    if not compiled.uses_old_self and rule.get("optionalOldSelf") is not None:
        detail = "may not be set if oldSelf is not used in rule"
        errors.append(fe.invalid(f"{path}.optionalOldSelf", rule["optionalOldSelf"], detail))
    return errors


def _go_validation_rule(rule: Mapping[str, Any]) -> GoValue:
    """The rule as Go's ``%#v`` prints apiextensions.ValidationRule (pointers as set/nil)."""

    def text(key: str) -> str:
        return go_quote(str(rule.get(key) or ""))

    def pointer(key: str, go_type: str) -> str:
        # Go prints the address of a set pointer; a fixed placeholder keeps messages stable.
        return f"(*{go_type})(nil)" if rule.get(key) is None else f"(*{go_type})(0xc000000000)"

    return GoValue(
        "apiextensions.ValidationRule{"
        f"Rule:{text('rule')}, Message:{text('message')}, "
        f"MessageExpression:{text('messageExpression')}, "
        f"Reason:{pointer('reason', 'apiextensions.FieldValueErrorReason')}, "
        f"FieldPath:{text('fieldPath')}, OptionalOldSelf:{pointer('optionalOldSelf', 'bool')}"
        "}"
    )


def _list_map_errors(schema: Mapping[str, Any], path: str, map_keys: list[Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    items = schema.get("items")
    if not map_keys:
        detail = "must not be empty if x-kubernetes-list-type is map"
        errors.append(fe.required(f"{path}.x-kubernetes-list-map-keys", detail))
    if items is None:
        detail = "must have a schema if x-kubernetes-list-type is map"
        errors.append(fe.required(f"{path}.items", detail))
        return errors
    if not isinstance(items, Mapping):
        detail = "must only have a single schema if x-kubernetes-list-type is map"
        errors.append(fe.invalid(f"{path}.items", items, detail))
        return errors
    item_type = items.get("type") or ""
    if item_type != "object":
        detail = "must be object if parent array's x-kubernetes-list-type is map"
        errors.append(fe.invalid(f"{path}.items.type", item_type, detail))
        return errors
    properties = items.get("properties") or {}
    seen: set[str] = set()
    for key in map_keys:
        prop = properties.get(key) if isinstance(properties, Mapping) else None
        if isinstance(prop, Mapping):
            if prop.get("type") in ("array", "object"):
                detail = "must be a scalar type if parent array's x-kubernetes-list-type is map"
                key_path = _key(f"{path}.items.properties", str(key))
                errors.append(fe.invalid(f"{key_path}.type", item_type, detail))
        else:
            detail = "entries must all be names of item properties"
            errors.append(fe.invalid(f"{path}.x-kubernetes-list-map-keys", map_keys, detail))
        if key in seen:
            detail = "must not contain duplicate entries"
            errors.append(fe.invalid(f"{path}.x-kubernetes-list-map-keys", map_keys, detail))
        seen.add(str(key))
    return errors


def _map_list_keys_map_set_errors(
    schema: Mapping[str, Any], path: str, list_type: Any, map_keys: list[Any]
) -> list[FieldError]:
    items = schema.get("items")
    if not isinstance(items, Mapping) or list_type not in ("set", "map"):
        return []
    errors: list[FieldError] = []
    if items.get("nullable"):
        detail = f"cannot be nullable when x-kubernetes-list-type is {list_type}"
        errors.append(fe.forbidden(f"{path}.items.nullable", detail))
    if list_type == "map":
        required = set(_list(items.get("required")))
        properties = items.get("properties") or {}
        for key in map_keys:
            prop = properties.get(key) if isinstance(properties, Mapping) else None
            if not isinstance(prop, Mapping):
                continue
            key_path = _key(f"{path}.items.properties", str(key))
            if key not in required and prop.get("default") is None:
                detail = (
                    "this property is in x-kubernetes-list-map-keys, "
                    "so it must have a default or be a required property"
                )
                errors.append(fe.required(f"{key_path}.default", detail))
            if prop.get("nullable"):
                detail = "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                errors.append(fe.forbidden(f"{key_path}.nullable", detail))
    return errors


# --- ValidateStructural ---


def structural_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    """Why ``schema`` is not structural (sorted by message, like upstream); empty if it is."""
    errors = _invariants(schema, _ROOT, path)
    errors.extend(_completeness(schema, schema, path, path))
    errors.sort(key=lambda error: error.message)
    return errors


def _invariants(schema: Any, level: str, path: str) -> list[FieldError]:
    if not isinstance(schema, Mapping):
        return []
    errors: list[FieldError] = []
    schema_type = schema.get("type") or ""
    items = schema.get("items")
    if schema_type == "array" and items is None:
        errors.append(fe.required(f"{path}.items", "must be specified"))
    if isinstance(items, Mapping):
        errors.extend(_invariants(items, _ITEM, f"{path}.items"))
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            errors.extend(_invariants(child, _FIELD, _key(f"{path}.properties", name)))
    extra = schema.get("additionalProperties")
    if extra is not None:
        if level == _ROOT:
            errors.append(
                fe.forbidden(f"{path}.additionalProperties", "must not be used at the root")
            )
        if isinstance(extra, Mapping):
            errors.extend(_invariants(extra, _FIELD, f"{path}.additionalProperties"))
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errors.append(fe.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True, detail))
    if int_or_string and embedded:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errors.append(fe.invalid(f"{path}.x-kubernetes-embedded-resource", True, detail))
    errors.extend(_value_validation_errors(schema, path, level))
    check_metadata = level == _ROOT or embedded
    if embedded and schema_type != "object":
        errors.append(
            _wrong_type(
                path, schema_type, "must be object if x-kubernetes-embedded-resource is true"
            )
        )
    elif not schema_type and not int_or_string and not preserve:
        detail = {
            _ROOT: "must not be empty at the root",
            _ITEM: "must not be empty for specified array items",
            _FIELD: "must not be empty for specified object fields",
        }[level]
        errors.append(fe.required(f"{path}.type", detail))
    if embedded and extra is not None:
        detail = "must not be used if x-kubernetes-embedded-resource is set"
        errors.append(fe.forbidden(f"{path}.additionalProperties", detail))
    if level == _ROOT and schema_type and schema_type != "object":
        errors.append(fe.invalid(f"{path}.type", schema_type, "must be object at the root"))
    props = properties if isinstance(properties, Mapping) else {}
    if check_metadata:
        for name in ("kind", "apiVersion"):
            prop = props.get(name)
            if isinstance(prop, Mapping) and prop.get("type") != "string":
                prop_path = _key(f"{path}.properties", name)
                errors.append(
                    fe.invalid(f"{prop_path}.type", prop.get("type") or "", "must be string")
                )
    metadata = props.get("metadata")
    if isinstance(metadata, Mapping):
        errors.extend(
            _metadata_errors(
                metadata, check_metadata, level, _key(f"{path}.properties", "metadata")
            )
        )
    if embedded and not preserve and not props:
        detail = (
            "must not be empty if x-kubernetes-embedded-resource is true "
            "without x-kubernetes-preserve-unknown-fields"
        )
        errors.append(fe.required(f"{path}.properties", detail))
    return errors


def _metadata_errors(
    metadata: Mapping[str, Any], check_metadata: bool, level: str, path: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    if check_metadata and metadata.get("type") != "object":
        errors.append(fe.invalid(f"{path}.type", metadata.get("type") or "", "must be object"))
    if level == _ROOT:
        rest = {k: v for k, v in metadata.items() if k not in ("type", "default")}
        properties = rest.pop("properties", None) or {}
        if set(properties) - {"name", "generateName"}:
            rest["properties"] = properties
        if rest:
            detail = (
                "must not specify anything other than name and generateName, "
                "but metadata is implicitly specified"
            )
            errors.append(fe.forbidden(path, detail))
    return errors


# Keywords that are not "value validation" and so may not appear inside anyOf/allOf/oneOf/not.
_NESTED_FORBIDDEN: Final = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _is_int_or_string_any_of(schema: Mapping[str, Any]) -> bool:
    return bool(strict_equal(schema.get("anyOf"), _INT_OR_STRING_ANY_OF))


def _value_validation_errors(
    schema: Mapping[str, Any], path: str, level: str, *, skip_any_of: bool | None = None
) -> list[FieldError]:
    errors: list[FieldError] = []
    if skip_any_of is None:
        skip_any_of = _is_int_or_string_any_of(schema)
    all_of = _list(schema.get("allOf"))
    skip_first_all_of_any_of = bool(
        all_of and isinstance(all_of[0], Mapping) and _is_int_or_string_any_of(all_of[0])
    )
    if not skip_any_of:
        for index, sub in enumerate(_list(schema.get("anyOf"))):
            errors.extend(_nested_errors(sub, f"{path}.anyOf[{index}]", level))
    for index, sub in enumerate(all_of):
        skip = skip_first_all_of_any_of and index == 0
        errors.extend(_nested_errors(sub, f"{path}.allOf[{index}]", level, skip_any_of=skip))
    for index, sub in enumerate(_list(schema.get("oneOf"))):
        errors.extend(_nested_errors(sub, f"{path}.oneOf[{index}]", level))
    if isinstance(schema.get("not"), Mapping):
        errors.extend(_nested_errors(schema["not"], f"{path}.not", level))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        error = pattern_error(pattern)
        if error is not None:
            detail = f"must be a valid regular expression, but isn't: {error}"
            errors.append(fe.invalid(f"{path}.pattern", pattern, detail))
    return errors


def _nested_errors(
    schema: Any, path: str, level: str, *, skip_any_of: bool = False
) -> list[FieldError]:
    if not isinstance(schema, Mapping):
        return []
    errors = _value_validation_errors(schema, path, level, skip_any_of=skip_any_of)
    items = schema.get("items")
    if isinstance(items, Mapping):
        errors.extend(_nested_errors(items, f"{path}.items", level))
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            errors.extend(_nested_errors(child, _key(f"{path}.properties", name), _FIELD))
    for keyword, detail in _NESTED_FORBIDDEN:
        value = schema.get(keyword)
        if value not in (None, False, "", [], {}):
            errors.append(fe.forbidden(f"{path}.{keyword}", detail))
    if schema.get("additionalProperties") is not None:
        detail = "must be undefined to be structural"
        errors.append(fe.forbidden(f"{path}.additionalProperties", detail))
    if isinstance(properties, Mapping) and "metadata" in properties:
        detail = "must not be specified in a nested context"
        errors.append(fe.forbidden(_key(f"{path}.properties", "metadata"), detail))
    return errors


def _completeness(structural: Any, validation: Any, s_path: str, v_path: str) -> list[FieldError]:
    """Every property named inside anyOf/allOf/oneOf/not must exist in the structural part."""
    if not isinstance(validation, Mapping):
        return []
    errors: list[FieldError] = []
    nested: list[tuple[Any, str]] = []
    if isinstance(validation.get("not"), Mapping):
        nested.append((validation["not"], f"{v_path}.not"))
    for keyword in ("allOf", "anyOf", "oneOf"):
        for index, sub in enumerate(_list(validation.get(keyword))):
            nested.append((sub, f"{v_path}.{keyword}[{index}]"))
    for sub, sub_path in nested:
        errors.extend(_nested_completeness(structural, sub, s_path, sub_path))
    return errors


def _nested_completeness(
    structural: Any, nested: Any, s_path: str, v_path: str
) -> list[FieldError]:
    if not isinstance(nested, Mapping):
        return []
    if not isinstance(structural, Mapping):
        return [fe.required(s_path, f"because it is defined in {v_path}")]
    errors = _completeness(structural, nested, s_path, v_path)
    if isinstance(nested.get("items"), Mapping):
        items = structural.get("items")
        errors.extend(
            _nested_completeness(
                items if isinstance(items, Mapping) else None,
                nested["items"],
                f"{s_path}.items",
                f"{v_path}.items",
            )
        )
    properties = nested.get("properties")
    if isinstance(properties, Mapping):
        known = structural.get("properties") or {}
        for name, sub in properties.items():
            sub_s_path = _key(f"{s_path}.properties", name)
            sub_v_path = _key(f"{v_path}.properties", name)
            if name not in known:
                errors.append(fe.required(sub_s_path, f"because it is defined in {sub_v_path}"))
            else:
                errors.extend(_nested_completeness(known[name], sub, sub_s_path, sub_v_path))
    return errors


# --- ValidateDefaults ---


def default_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    """Defaults that would be pruned or that do not validate against their own schema."""
    errors: list[FieldError] = []
    _walk_defaults(schema, path, errors, inside_meta=False, is_root=True)
    return errors


def _walk_defaults(
    schema: Any, path: str, errors: list[FieldError], *, inside_meta: bool, is_root: bool
) -> None:
    if not isinstance(schema, Mapping):
        return
    embedded = bool(schema.get("x-kubernetes-embedded-resource")) or is_root
    if embedded:
        inside_meta = False
    default = schema.get("default")
    if default is not None and not inside_meta:
        try:
            node = compile_node(schema)
        except SchemaError as error:
            errors.append(fe.invalid(path, _schema_value(), str(error)))
            return
        pruned = copy.deepcopy(default)
        prune(node, pruned, resource_root=bool(schema.get("x-kubernetes-embedded-resource")))
        if not strict_equal(pruned, default):
            errors.append(fe.invalid(f"{path}.default", default, "must not have unknown fields"))
        checker = ValueValidator(f"{path}.default")
        checker.validate(node, default, "")
        errors.extend(checker.errors)
    items = schema.get("items")
    if isinstance(items, Mapping):
        _walk_defaults(items, f"{path}.items", errors, inside_meta=inside_meta, is_root=False)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            child_meta = inside_meta or (embedded and name in _META_FIELDS)
            _walk_defaults(
                child,
                _key(f"{path}.properties", name),
                errors,
                inside_meta=child_meta,
                is_root=False,
            )
