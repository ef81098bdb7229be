"""Validation of built-in objects (Pods, ConfigMaps, Deployments, Leases...) against the
upstream OpenAPI schemas shipped by the ``kubernetes-validate`` package.

kube-apiserver decodes a built-in object into its Go type (dropping unknown fields, failing on
wrong JSON types) and then runs hand-written validation. The local cluster approximates the
part that schemas can express, with messages in the same style as for custom resources:

- a wrong JSON type → ``FieldValueTypeInvalid`` (``spec.replicas: Invalid value: "string":
  spec.replicas in body must be of type integer: "string"``);
- a missing string or object field the Go type requires (no ``omitempty``) →
  ``FieldValueRequired`` (missing numbers, booleans and lists decode to valid zero values);
- malformed ``byte`` (base64) and ``date-time`` strings, int-or-string and quantity values
  (``quantities must match the regular expression ...``, as resource.ParseQuantity says).

Unknown fields are not errors (kube-apiserver drops them with a warning); they are reported
separately, as ``spec.foo`` / ``spec.containers[0].foo``, for ``fieldValidation=Strict``/``Warn``,
and pruned unless asked not to. ``null`` is accepted anywhere, as Go decoding accepts it.

Schemas are read lazily: the package's ``_definitions.json`` of the 1.32 "strict" schema set is
loaded on first use (its ``additionalProperties: false`` marks which objects are closed), and each
kind is compiled once, on first use, into the same :class:`SchemaNode` trees CRDs use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema.compiled import NO_DEFAULT, SchemaNode
from setpoint.cluster.apiserver.schema.formats import format_checker
from setpoint.cluster.apiserver.schema.pruning import prune
from setpoint.cluster.apiserver.schema.quantities import QUANTITY_FORMAT
from setpoint.cluster.apiserver.schema.value_validation import ValueValidator
from setpoint.cluster.apiserver.upstream_schema_files import kubernetes_json_schema_root

# The schema set matching the Kubernetes version the local cluster reports (/version = 1.32).
KUBERNETES_SCHEMA_VERSION: Final = "v1.32.0"
#: Fields the packaged schemas still list as required that kube-apiserver 1.32 accepts
#: without: a StatefulSet needs no governing Service (``serviceName`` became optional in 1.32).
OPTIONAL_IN_UPSTREAM: Final[dict[str, frozenset[str]]] = {
    "io.k8s.api.apps.v1.StatefulSetSpec": frozenset({"serviceName"}),
}
_SCHEMA_SET_SUFFIX: Final = "-local-strict"
_DEFINITIONS_FILE: Final = "_definitions.json"
_REF_PREFIX: Final = re.compile(r"^(?:/api/_definitions\.json)?#/\$defs/")

_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1
_INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# resource.ParseQuantity's syntax, and the message its error carries.
_QUANTITY_RE: Final = re.compile(
    r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)
QUANTITY_MESSAGE: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class BuiltinSchemaError(RuntimeError):
    """The ``kubernetes-validate`` schemas are missing or unreadable."""


def _schema_dir(version: str) -> Path:
    try:
        root = kubernetes_json_schema_root()
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise BuiltinSchemaError("the kubernetes-validate package is not installed") from error
    directory = root / f"{version}{_SCHEMA_SET_SUFFIX}"
    if not directory.is_dir():
        raise BuiltinSchemaError(f"kubernetes-validate has no schemas for {version} in {root}")
    return directory


@dataclass(frozen=True, slots=True)
class BuiltinCheck:
    """Result of checking a built-in object: field errors, and unknown fields (pruned or not)."""

    errors: list[FieldError] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether there are no errors (unknown fields are not errors)."""
        return not self.errors


_BYTE_CHECK: Final = format_checker("byte")


def _go_bytes(text: str) -> bool:
    """Whether Go decodes ``text`` into a ``[]byte`` field: padded base64, or "" (no bytes)."""
    return text == "" or bool(_BYTE_CHECK is not None and _BYTE_CHECK(text))


def _must_be_present(child: SchemaNode | None) -> bool:
    """Whether a field the schema lists as required is one kube-apiserver really requires.

    ``required`` in the upstream schemas means "not omitempty in Go", not "validated": a missing
    number, boolean or list decodes to 0, false or nil, which is often valid (a ControllerRevision
    without ``revision``, an EndpointSlice without ``endpoints``). Missing strings and objects
    (names, keys, references) are what upstream validation rejects, so only those are required.
    """
    if child is None:
        return True
    types = set(child.types)
    return not types or bool(types & {"string", "object"})


def _quantity_node() -> SchemaNode:
    node = SchemaNode(types=("string", "number"), nullable=True)
    node.format = QUANTITY_FORMAT
    node.format_check = lambda text: bool(_QUANTITY_RE.match(text))
    node.format_error = QUANTITY_MESSAGE
    return node


class BuiltinSchemas:
    """The built-in kinds' schemas of one Kubernetes version, compiled on demand."""

    def __init__(self, version: str = KUBERNETES_SCHEMA_VERSION) -> None:
        self.version = version
        self._definitions: dict[str, Any] | None = None
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        self._nodes: dict[tuple[str, bool], SchemaNode] = {}

    # --- loading ---

    def _load(self) -> dict[str, Any]:
        if self._definitions is None:
            path = _schema_dir(self.version) / _DEFINITIONS_FILE
            try:
                document = msgspec.json.decode(path.read_bytes())
            except (OSError, msgspec.DecodeError) as error:
                raise BuiltinSchemaError(f"cannot read {path}: {error}") from error
            definitions = document.get("$defs") or document.get("definitions") or {}
            for name, optional in OPTIONAL_IN_UPSTREAM.items():
                schema = definitions.get(name)
                if isinstance(schema, dict) and isinstance(schema.get("required"), list):
                    schema["required"] = [f for f in schema["required"] if f not in optional]
            for name, schema in definitions.items():
                for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                    key = (str(gvk.get("group", "")), str(gvk.get("version", "")), gvk.get("kind"))
                    # Several definitions can claim a GVK (e.g. DeleteOptions); keep the first
                    # whose own name ends in the kind, which is the real type.
                    if key not in self._by_gvk or name.endswith("." + str(key[2])):
                        self._by_gvk[key] = name
            self._definitions = definitions
        return self._definitions

    def field_description(self, definition: str, field: str) -> str:
        """The documentation of ``field`` of a definition (``io.k8s.api.core.v1.PodStatus``):
        what upstream's ``SwaggerDoc()`` returns for it; "" when unknown."""
        schema = self._load().get(definition)
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        entry = properties.get(field) if isinstance(properties, Mapping) else None
        text = entry.get("description") if isinstance(entry, Mapping) else None
        return text if isinstance(text, str) else ""

    def definition_name(self, api_version: str, kind: str) -> str | None:
        """The OpenAPI definition name of a kind (``io.k8s.api.core.v1.Pod``), if known."""
        self._load()
        group, _, version = api_version.rpartition("/")
        return self._by_gvk.get((group, version, kind))

    def node_for(self, api_version: str, kind: str) -> SchemaNode | None:
        """The compiled schema of a kind, or None for kinds without an upstream schema."""
        name = self.definition_name(api_version, kind)
        return self._node(name) if name is not None else None

    # --- compiling ---

    def _node(self, name: str, lenient: bool = False) -> SchemaNode:
        """The node of a definition; ``lenient`` nodes (below ``status``) require nothing."""
        key = (name, lenient)
        node = self._nodes.get(key)
        if node is not None:
            return node
        if name == _INT_OR_STRING:
            node = SchemaNode(types=("integer", "string"), nullable=True, int_or_string=True)
        elif name == _QUANTITY:
            node = _quantity_node()
        else:
            node = SchemaNode()
            self._nodes[key] = node  # registered first: definitions can be recursive
            self._fill(node, self._load().get(name) or {}, lenient, top_level=not lenient)
        self._nodes[key] = node
        return node

    def _compile(self, schema: Mapping[str, Any], lenient: bool) -> SchemaNode:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._node(_REF_PREFIX.sub("", ref), lenient)
        node = SchemaNode()
        self._fill(node, schema, lenient)
        return node

    def _fill(
        self, node: SchemaNode, schema: Mapping[str, Any], lenient: bool, top_level: bool = False
    ) -> None:
        types = schema.get("type")
        type_list = [types] if isinstance(types, str) else list(types or [])
        # Go decoding turns null into the zero value anywhere (and Go clients send null for
        # empty non-omitempty lists), so null is accepted everywhere.
        node.nullable = True
        node.null_means_unset = True
        node.types = tuple(t for t in type_list if t != "null")
        enum = schema.get("enum")
        if isinstance(enum, list):
            node.enum = list(enum)
        format_name = schema.get("format")
        if format_name == "byte":
            node.format_check = _go_bytes
            node.format = format_name
        elif format_name == "date-time":
            node.format_check = format_checker(format_name)
            node.format = format_name
        elif format_name == "int32":
            # Go refuses to decode a number that does not fit the int32 field.
            node.minimum, node.maximum = _INT32_MIN, _INT32_MAX
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            node.properties = {
                # Status is written by controllers and kubelets; kube-apiserver decodes missing
                # fields there as zero values and validates little, so nothing is required.
                key: self._compile(value, lenient or (top_level and key == "status"))
                for key, value in properties.items()
            }
        required = schema.get("required")
        if isinstance(required, list) and not lenient:
            node.required = tuple(
                str(name) for name in required if _must_be_present(node.properties.get(str(name)))
            )
        items = schema.get("items")
        if isinstance(items, Mapping):
            node.items = self._compile(items, lenient)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            node.additional_properties = self._compile(extra, lenient)
        elif extra is True:
            node.additional_properties = True
        # additionalProperties: false only marks a closed object: unknown fields are pruned
        # and reported, never rejected, so it is not turned into a validation rule here.
        for keyword, attribute in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
            subs = schema.get(keyword)
            if isinstance(subs, list):
                setattr(node, attribute, tuple(self._compile(sub, lenient) for sub in subs))
        object_like = not node.types or "object" in node.types
        if object_like and properties is None and extra is None and not node.all_of:
            node.preserve_unknown_fields = True  # RawExtension, JSON, FieldsV1: anything goes
        node.default = NO_DEFAULT

    # --- checking ---

    def check(self, obj: Mapping[str, Any], *, prune_unknown: bool = True) -> BuiltinCheck | None:
        """Validate a built-in object; None if its kind has no upstream schema.

        With ``prune_unknown`` (the default, as kube-apiserver's decoding does) unknown fields
        are removed from ``obj`` in place; they are listed in the result either way.
        """
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return None
        node = self.node_for(api_version, kind)
        if node is None:
            return None
        checker = ValueValidator()
        checker.validate(node, obj, "")
        if prune_unknown:
            unknown = prune(node, obj, resource_root=False)
        else:
            unknown = prune(
                node, msgspec.json.decode(msgspec.json.encode(obj)), resource_root=False
            )
        return BuiltinCheck(checker.errors, unknown)


_default_schemas: BuiltinSchemas | None = None


def builtin_schemas() -> BuiltinSchemas:
    """The shared, lazily loaded schemas of the Kubernetes version the local cluster mimics."""
    global _default_schemas
    if _default_schemas is None:
        _default_schemas = BuiltinSchemas()
    return _default_schemas


def has_builtin_schema(api_version: str, kind: str) -> bool:
    """Whether an upstream schema exists for this built-in kind."""
    return builtin_schemas().definition_name(api_version, kind) is not None


def validate_builtin(obj: Mapping[str, Any], *, prune_unknown: bool = True) -> BuiltinCheck:
    """Validate a built-in object (see :meth:`BuiltinSchemas.check`); kinds without a schema
    pass unchecked."""
    result = builtin_schemas().check(obj, prune_unknown=prune_unknown)
    return result if result is not None else BuiltinCheck()
