"""OpenAPI value validation with kube-openapi's semantics and messages.

This mirrors ``k8s.io/kube-openapi/pkg/validation/validate`` as kube-apiserver runs it on custom
resources, and the translation of its results into field errors
(``apiextensions-apiserver/pkg/apiserver/validation.kubeOpenAPIResultToFieldErrors``):

- each schema node runs, in order: type, anyOf/oneOf/allOf/not, string, format, number, array,
  enum, object checks; a wrong type does not stop the other checks;
- a type error names the JSON *type* it got, not the value:
  ``spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"``;
- an integer-valued float (``1.0``) is a valid integer; an integer is a valid number;
- ``enum`` → ``Unsupported value``; ``maxLength`` → ``Too long``; ``maxItems``/``maxProperties``
  → ``Too many``; ``required`` → ``Required value``; everything else → ``Invalid value``.

Ratcheting (kube-apiserver's ``CRDValidationRatcheting``, on by default since 1.30): on update,
a value equal to the old value at the same place is not re-validated, so objects stored before
a schema was tightened stay writable.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError, go_float, go_json, go_quote
from setpoint.cluster.apiserver.schema.compiled import SchemaNode

# No old value at this place (create, or a new map key / list item).
MISSING: Final = object()

# swag.IsFloat64AJSONInteger: integers are exact in a float64 up to 2^53; a relative error
# below 1e-9 still counts as integral (so 0.3 is a multiple of 0.1).
_MAX_JSON_INTEGER: Final = float(1 << 53)
_INTEGRAL_EPSILON: Final = 1e-9


#: JSON schema type of each exact Python type msgspec decodes a non-null JSON value into.
KIND_OF_VALUE_TYPE: Final[dict[type, str]] = {
    dict: "object",
    str: "string",
    list: "array",
    int: "integer",
    float: "number",
    bool: "boolean",
}
_KIND_OF_TYPE: Final[dict[type, str]] = {**KIND_OF_VALUE_TYPE, type(None): "null"}


def json_kind(value: object) -> str:
    """The JSON schema type name of a decoded JSON value."""
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is not None:
        return kind
    for base, name in _KIND_OF_TYPE.items():  # subclasses (a dict subclass, say)
        if isinstance(value, base):
            return "boolean" if isinstance(value, bool) else name
    return type(value).__name__


def _go_format_of(kind: str) -> str:
    # kube-openapi's schemaInfoForType: decoded JSON numbers are int64 / float64.
    return "int64" if kind == "integer" else "float64" if kind == "number" else ""


def is_json_integer(value: float) -> bool:
    """Whether a float is integral the way go-openapi's ``IsFloat64AJSONInteger`` decides."""
    if math.isnan(value) or math.isinf(value) or abs(value) > _MAX_JSON_INTEGER:
        return False
    if value.is_integer():
        return True
    truncated = float(math.trunc(value))
    magnitude = abs(value)
    if magnitude <= 1:
        return abs(value - truncated) < _INTEGRAL_EPSILON
    return abs(value - truncated) / magnitude < _INTEGRAL_EPSILON


def strict_equal(a: object, b: object) -> bool:
    """JSON equality that, like Go's DeepEqual on decoded JSON, tells ``true`` from ``1``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(strict_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def canonical_json(value: object) -> str:
    """A canonical text of a JSON value, to detect duplicates (1 and 1.0 stay different)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _number_text(value: float) -> str:
    return str(value) if isinstance(value, int) else go_float(value)


class ValueValidator:
    """Validates decoded JSON against a :class:`SchemaNode` tree, collecting field errors.

    ``field_prefix`` is the field path under which the value sits (``""`` for a whole object,
    ``"status"`` for a status update); errors not tied to a property are reported at the prefix,
    or at ``<nil>`` when there is none, exactly as upstream prints a nil field path.
    """

    __slots__ = ("errors", "field_prefix")

    def __init__(self, field_prefix: str = "") -> None:
        self.field_prefix = field_prefix
        self.errors: list[FieldError] = []

    # --- paths ---

    def field_of(self, name: str) -> str:
        """The field path of a kube-openapi error name (``.spec`` / ``spec.x`` / ``""``)."""
        if name.startswith("."):
            name = name[1:]
        if name:
            return f"{self.field_prefix}.{name}" if self.field_prefix else name
        return self.field_prefix or "<nil>"

    def _root_field(self) -> str:
        return self.field_prefix or "<nil>"

    # --- entry point ---

    def validate(self, node: SchemaNode, value: Any, path: str, old: Any = MISSING) -> None:
        """Validate ``value`` at kube-openapi path ``path`` (``""`` at the root)."""
        if old is not MISSING and value == old and strict_equal(value, old):
            # Ratcheting: unchanged values are not re-validated (== in C rules out most
            # changed values before the type-strict walk).
            return
        if value is None:
            self._check_type(node, value, "null", path)
            if not node.null_means_unset:  # Go-typed objects decode null as "not set"
                self._check_enum(node, value, path)
            return
        kind = json_kind(value)
        if node.types or node.format:
            self._check_type(node, value, kind, path)
        if node.any_of or node.one_of or node.all_of or node.not_ is not None:
            self._check_combinators(node, value, path, old)
        if kind == "string":
            self._check_string(node, value, path)
            if node.format_check is not None and not node.format_check(value):
                if node.format_error:
                    self.errors.append(fe.invalid(self.field_of(path), value, node.format_error))
                else:
                    message = f"{path} in body must be of type {node.format}: {go_quote(value)}"
                    self.errors.append(fe.type_invalid(self.field_of(path), value, message))
        elif kind in ("integer", "number"):
            self._check_number(node, value, path)
        elif kind == "array":
            self._check_array(node, value, path, old)
        if node.enum is not None:
            self._check_enum(node, value, path)
        if kind == "object":
            self._check_object(node, value, path, old)

    # --- the individual validators ---

    def _type_error(self, path: str, expected: str, got: str) -> None:
        message = f"{path} in body must be of type {expected}: {go_quote(got)}"
        self.errors.append(fe.type_invalid(self.field_of(path), got, message))

    def _check_type(self, node: SchemaNode, value: Any, kind: str, path: str) -> None:
        types = node.types
        if value is None:
            if types and "null" not in types and not node.nullable:
                self._type_error(path, ",".join(types), "null")
            return
        is_float_int = kind == "number" and "integer" in types and is_json_integer(value)
        is_int_float = kind == "integer" and "number" in types
        fmt = node.format
        if kind not in ("string", "array") and fmt:
            go_format = _go_format_of(kind)
            if not (kind in types or go_format == fmt or is_float_int or is_int_float):
                self._type_error(path, fmt, go_format)
                return
        if fmt and kind in ("string", "array") and "number" not in types and "integer" not in types:
            return  # a formatted non-numeric schema: the format check decides
        if not (kind in types or is_float_int or is_int_float):
            self._type_error(path, ",".join(types), kind)

    def _check_string(self, node: SchemaNode, value: str, path: str) -> None:
        # Upstream stops at the first failing string check.
        length = len(value)
        if node.max_length is not None and length > node.max_length:
            self.errors.append(fe.too_long(self.field_of(path), node.max_length))
            return
        if node.min_length is not None and length < node.min_length:
            message = f"{path} in body should be at least {node.min_length} chars long"
            self.errors.append(fe.invalid(self.field_of(path), value, message))
            return
        if node.pattern_re is not None and node.pattern_re.search(value) is None:
            message = f"{path} in body should match '{node.pattern}'"
            self.errors.append(fe.invalid(self.field_of(path), value, message))

    def _check_number(self, node: SchemaNode, value: float, path: str) -> None:
        field = self.field_of(path)
        is_int = isinstance(value, int)
        factor = node.multiple_of
        if factor is not None:
            bound: float = int(factor) if is_int else factor
            if bound <= 0:
                message = f"factor MultipleOf declared for {path} must be positive: "
                message += _number_text(bound)
                self.errors.append(fe.invalid(field, bound, message))
            elif not self._is_multiple(value, bound):
                message = f"{path} in body should be a multiple of {_number_text(bound)}"
                self.errors.append(fe.invalid(field, value, message))
        if node.minimum is not None:
            low: float = int(node.minimum) if is_int else node.minimum
            exclusive = node.exclusive_minimum
            if value < low or (exclusive and value == low):
                words = "greater than" if exclusive else "greater than or equal to"
                message = f"{path} in body should be {words} {_number_text(low)}"
                self.errors.append(fe.invalid(field, value, message))
        if node.maximum is not None:
            high: float = int(node.maximum) if is_int else node.maximum
            exclusive = node.exclusive_maximum
            if value > high or (exclusive and value == high):
                words = "less than" if exclusive else "less than or equal to"
                message = f"{path} in body should be {words} {_number_text(high)}"
                self.errors.append(fe.invalid(field, value, message))

    @staticmethod
    def _is_multiple(value: float, factor: float) -> bool:
        if isinstance(value, int) and isinstance(factor, int):
            return value % factor == 0
        quotient = (1 / factor * value) if factor < 1 else (value / factor)
        return is_json_integer(float(quotient))

    def _check_array(self, node: SchemaNode, value: list[Any], path: str, old: Any) -> None:
        items = node.items
        if items is not None:
            olds = _correlate_items(node, value, old)
            for index, item in enumerate(value):
                self.validate(items, item, f"{path}[{index}]", olds[index] if olds else MISSING)
        size = len(value)
        self._check_count(path, size, node.min_items, node.max_items, "items")
        if node.unique_items and size > 1:
            seen = {canonical_json(item) for item in value}
            if len(seen) != size:
                message = f"{path} in body shouldn't contain duplicates"
                self.errors.append(fe.invalid(self.field_of(path), "", message))

    def _check_count(
        self, path: str, size: int, minimum: int | None, maximum: int | None, noun: str
    ) -> None:
        """minItems/maxItems or minProperties/maxProperties, worded as upstream."""
        if minimum is not None and size < minimum:
            message = f"{path} in body should have at least {minimum} {noun}"
            self.errors.append(fe.invalid(self.field_of(path), size, message))
        if maximum is not None and size > maximum:
            self.errors.append(fe.too_many(self.field_of(path), size, maximum))

    def _check_enum(self, node: SchemaNode, value: Any, path: str) -> None:
        allowed = node.enum
        if not allowed:
            return
        for candidate in allowed:
            if _enum_matches(value, candidate):
                return
        names = [c if isinstance(c, str) else go_json(c) for c in allowed]
        self.errors.append(fe.not_supported(self.field_of(path), value, names))

    def _check_object(self, node: SchemaNode, value: dict[str, Any], path: str, old: Any) -> None:
        self._check_count(path, len(value), node.min_properties, node.max_properties, "properties")
        old_map = old if isinstance(old, dict) else None
        properties = node.properties
        extra = node.additional_properties
        if extra is False:
            for key in value:
                if key not in properties:
                    message = f"{path}.{key} in body is a forbidden property"
                    self.errors.append(fe.invalid(self.field_of(path), key, message))
        elif isinstance(extra, SchemaNode):
            for key, item in value.items():
                if key not in properties:
                    previous = old_map.get(key, MISSING) if old_map is not None else MISSING
                    self.validate(extra, item, f"{path}.{key}", previous)
        if properties:
            # Walk the object's keys, not the schema's: objects are usually the smaller side.
            # Errors therefore come in the object's key order (upstream's is random).
            prefix = f"{path}." if path else ""
            for name, item in value.items():
                child = properties.get(name)
                if child is not None:
                    previous = old_map.get(name, MISSING) if old_map is not None else MISSING
                    self.validate(child, item, prefix + name, previous)
        for name in node.required:
            if name not in value:
                self.errors.append(fe.required(self.field_of(f"{path}.{name}")))

    def _check_combinators(self, node: SchemaNode, value: Any, path: str, old: Any) -> None:
        if node.any_of:
            failures: list[list[FieldError]] = []
            for schema in node.any_of:
                errors = self._sub_errors(schema, value, path, old)
                if not errors:
                    failures = []
                    break
                failures.append(errors)
            if failures:
                message = f"{go_quote(path)} must validate at least one schema (anyOf)"
                self.errors.append(fe.invalid(self._root_field(), "", message))
                self.errors.extend(_fewest(failures))
        if node.one_of:
            failures_one: list[list[FieldError]] = []
            valid = 0
            for schema in node.one_of:
                errors = self._sub_errors(schema, value, path, old)
                if errors:
                    failures_one.append(errors)
                else:
                    valid += 1
            if valid != 1:
                found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                message = f"{go_quote(path)} must validate one and only one schema (oneOf). {found}"
                self.errors.append(fe.invalid(self._root_field(), "", message))
                if valid == 0 and failures_one:
                    self.errors.extend(_fewest(failures_one))
        if node.all_of:
            passed = 0
            for schema in node.all_of:
                errors = self._sub_errors(schema, value, path, old)
                self.errors.extend(errors)
                passed += not errors
            if passed != len(node.all_of):
                none = ". None validated" if passed == 0 else ""
                message = f"{go_quote(path)} must validate all the schemas (allOf){none}"
                self.errors.append(fe.invalid(self._root_field(), "", message))
        if node.not_ is not None and not self._sub_errors(node.not_, value, path, MISSING):
            message = f"{go_quote(path)} must not validate the schema (not)"
            self.errors.append(fe.invalid(self._root_field(), "", message))

    def _sub_errors(self, node: SchemaNode, value: Any, path: str, old: Any) -> list[FieldError]:
        sub = ValueValidator(self.field_prefix)
        sub.validate(node, value, path, old)
        return sub.errors


def _fewest(failures: list[list[FieldError]]) -> list[FieldError]:
    """The errors of the alternative that came closest (fewest errors, first on ties)."""
    return min(failures, key=lambda errors: len(errors))


def _enum_matches(value: Any, candidate: Any) -> bool:
    # Go converts the value to the enum entry's type, so 1 matches 1.0 but true never matches 1.
    # A null never matches, not even a null entry (kube-openapi skips untyped entries).
    if value is None or candidate is None:
        return False
    if isinstance(value, bool) or isinstance(candidate, bool):
        return isinstance(value, bool) and isinstance(candidate, bool) and value == candidate
    if isinstance(value, int | float) and isinstance(candidate, int | float):
        return bool(value == candidate)
    return strict_equal(value, candidate)


def _correlate_items(node: SchemaNode, value: list[Any], old: Any) -> list[Any] | None:
    """Old list items matching new ones, for ratcheting: map lists by key, sets by value."""
    if not isinstance(old, list) or not old:
        return None
    if node.list_type == "map" and node.list_map_keys:
        keys = node.list_map_keys
        by_key: dict[str, Any] = {}
        for item in old:
            if isinstance(item, dict):
                by_key[canonical_json([item.get(k) for k in keys])] = item
        return [
            by_key.get(canonical_json([item.get(k) for k in keys]), MISSING)
            if isinstance(item, dict)
            else MISSING
            for item in value
        ]
    if node.list_type == "set":
        olds = {canonical_json(item) for item in old}
        return [item if canonical_json(item) in olds else MISSING for item in value]
    return None  # atomic lists: items have no identity, nothing to correlate
