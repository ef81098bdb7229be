"""Objects embedded in a custom resource (``x-kubernetes-embedded-resource: true``).

An embedded resource is a whole Kubernetes object inside a field (a Pod template, say): it needs
``apiVersion`` and ``kind``, and its ``metadata`` is an ObjectMeta. Upstream
(``apiextensions-apiserver/pkg/apiserver/schema/objectmeta``) does two things with it, mirrored
here: on decode it *coerces* ``metadata`` to ObjectMeta, dropping unknown fields (reported as
unknown field paths like ``spec.template.metadata.foo``), and on validation it checks apiVersion,
kind and the metadata (names, labels, annotations, finalizers) with the usual messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.names import (
    validate_dns1035_label,
    validate_dns1123_label,
    validate_label_value,
    validate_qualified_name,
)
from setpoint.cluster.apiserver.schema.compiled import SchemaNode

# ObjectMeta's JSON fields and the Go type each decodes into (for decode error messages).
OBJECT_META_FIELDS: Final[dict[str, str]] = {
    "name": "string",
    "generateName": "string",
    "namespace": "string",
    "selfLink": "string",
    "uid": "types.UID",
    "resourceVersion": "string",
    "generation": "int64",
    "creationTimestamp": "v1.Time",
    "deletionTimestamp": "v1.Time",
    "deletionGracePeriodSeconds": "int64",
    "labels": "map[string]string",
    "annotations": "map[string]string",
    "ownerReferences": "[]v1.OwnerReference",
    "finalizers": "[]string",
    "managedFields": "[]v1.ManagedFieldsEntry",
}

# Upstream limit on the summed size of all annotation keys and values (256 KiB).
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024

_GO_JSON_TYPE_NAMES: Final = {
    bool: "bool",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def _child(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


# --- coercion (decode time) ---


def _decodes(go_type: str, value: Any) -> bool:
    """Whether ``value`` decodes into the Go type (null always does)."""
    if value is None:
        return True
    if go_type in ("string", "types.UID", "v1.Time"):
        return isinstance(value, str)
    if go_type == "int64":
        return not isinstance(value, bool) and (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        )
    if go_type == "map[string]string":
        return isinstance(value, dict) and all(
            v is None or isinstance(v, str) for v in value.values()
        )
    if go_type == "[]string":
        return isinstance(value, list) and all(v is None or isinstance(v, str) for v in value)
    if go_type.startswith("[]"):
        return isinstance(value, list) and all(v is None or isinstance(v, dict) for v in value)
    return True


def object_meta_decode_error(metadata: Any) -> str | None:
    """The Go JSON decode error for ``metadata`` as ObjectMeta, or None if it decodes."""
    if not isinstance(metadata, dict):
        got = _GO_JSON_TYPE_NAMES.get(type(metadata), "value")
        return f"json: cannot unmarshal {got} into Go value of type v1.ObjectMeta"
    for key, value in metadata.items():
        go_type = OBJECT_META_FIELDS.get(key)
        if go_type is not None and not _decodes(go_type, value):
            got = _GO_JSON_TYPE_NAMES.get(type(value), "value")
            return (
                f"json: cannot unmarshal {got} into Go struct field ObjectMeta.{key} "
                f"of type {go_type}"
            )
    return None


def _is_empty(key: str, value: Any) -> bool:
    """Whether ObjectMeta's ``omitempty`` JSON encoding leaves this field out."""
    if value is None or value == "" or value == {} or value == []:
        return True
    return key == "generation" and value == 0


def coerce_object_meta(metadata: dict[str, Any], field_path: str) -> list[str]:
    """Drop what an ObjectMeta round trip drops; return the unknown field paths removed.

    Unknown keys go (reported as ``<field_path>.<key>``); empty values go too, since ObjectMeta
    serializes with ``omitempty`` (a zero ``creationTimestamp`` is removed the same way).
    Metadata that does not decode is left alone for validation to report.
    """
    if object_meta_decode_error(metadata) is not None:
        return []
    unknown: list[str] = []
    for key in list(metadata):
        value = metadata[key]
        if key not in OBJECT_META_FIELDS:
            unknown.append(f"{field_path}.{key}")
            del metadata[key]
        elif _is_empty(key, value):
            del metadata[key]
    return sorted(unknown)


# --- validation ---


def embedded_resources(
    node: SchemaNode | None, value: Any, path: str = ""
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every embedded resource below ``value`` (not ``value`` itself) with its field path.

    Objects come parent first, in document order; only branches of the schema that can hold
    an embedded resource are visited.
    """
    return _embedded(node, value, path, at_root=True)


def _embedded(
    node: SchemaNode | None, value: Any, path: str, at_root: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    if node is None or not node.has_embedded_resources:
        return
    if isinstance(value, dict):
        if node.embedded_resource and not at_root:
            yield path, value
        extra = node.additional_schema
        for key, item in value.items():
            child = node.properties.get(key)
            if child is not None:
                yield from _embedded(child, item, _child(path, key), at_root=False)
            elif extra is not None:
                yield from _embedded(extra, item, f"{path}[{key}]", at_root=False)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _embedded(node.items, item, f"{path}[{index}]", at_root=False)


def validate_embedded_resources(node: SchemaNode, obj: Any, path: str = "") -> list[FieldError]:
    """apiVersion/kind/metadata problems of every embedded resource below ``obj``.

    The object itself (the custom resource) is not checked: its metadata is the server's job.
    """
    errors: list[FieldError] = []
    for resource_path, resource in embedded_resources(node, obj, path):
        errors.extend(validate_embedded_resource(resource, resource_path))
    return errors


def validate_embedded_resource(obj: dict[str, Any], path: str) -> list[FieldError]:
    """Problems of one embedded object at ``path`` (``validateEmbeddedResource``)."""
    errors: list[FieldError] = []
    api_version_path = _child(path, "apiVersion")
    kind_path = _child(path, "kind")
    if "apiVersion" not in obj:
        errors.append(fe.required(api_version_path, "must not be empty"))
    if "kind" not in obj:
        errors.append(fe.required(kind_path, "must not be empty"))
    for key, value in obj.items():
        if key == "apiVersion":
            if not isinstance(value, str):
                errors.append(fe.invalid(api_version_path, value, "must be a string"))
            elif not value:
                errors.append(fe.invalid(api_version_path, value, "must not be empty"))
            elif value.count("/") > 1:
                detail = f"unexpected GroupVersion string: {value}"
                errors.append(fe.invalid(api_version_path, value, detail))
        elif key == "kind":
            if not isinstance(value, str):
                errors.append(fe.invalid(kind_path, value, "must be a string"))
            elif not value:
                errors.append(fe.invalid(kind_path, value, "must not be empty"))
            else:
                problems = validate_dns1035_label(value.lower())
                if problems:
                    detail = "may have mixed case, but should otherwise match: " + ",".join(
                        problems
                    )
                    errors.append(fe.invalid(kind_path, value, detail))
        elif key == "metadata":
            errors.extend(_validate_metadata(value, _child(path, "metadata")))
    return errors


def path_segment_name_problems(name: str, *, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``: no ``.``/``..``; no ``/`` or ``%``."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{char}'" for char in ("/", "%") if char in name]


def _validate_metadata(metadata: Any, path: str) -> list[FieldError]:
    decode_error = object_meta_decode_error(metadata)
    if decode_error is not None:
        return [fe.invalid(path, metadata, decode_error)]
    assert isinstance(metadata, dict)
    errors: list[FieldError] = []
    generate_name = metadata.get("generateName") or ""
    if generate_name:
        for problem in path_segment_name_problems(generate_name, prefix=True):
            errors.append(fe.invalid(f"{path}.generateName", generate_name, problem))
    # Upstream substitutes "fakename" for a missing name, so only a given name is checked.
    name = metadata.get("name") or ""
    if name:
        for problem in path_segment_name_problems(name):
            errors.append(fe.invalid(f"{path}.name", name, problem))
    namespace = metadata.get("namespace") or ""
    if namespace:
        for problem in validate_dns1123_label(namespace):
            errors.append(fe.invalid(f"{path}.namespace", namespace, problem))
    generation = metadata.get("generation")
    if isinstance(generation, int | float) and generation < 0:
        errors.append(
            fe.invalid(f"{path}.generation", generation, "must be greater than or equal to 0")
        )
    labels = metadata.get("labels") or {}
    for key, value in labels.items():
        for problem in validate_qualified_name(key):
            errors.append(fe.invalid(f"{path}.labels", key, problem))
        for problem in validate_label_value(value or ""):
            errors.append(fe.invalid(f"{path}.labels", value, problem))
    annotations = metadata.get("annotations") or {}
    total = 0
    for key, value in annotations.items():
        for problem in validate_qualified_name(key.lower()):
            errors.append(fe.invalid(f"{path}.annotations", key, problem))
        total += len(key.encode()) + len((value or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errors.append(fe.too_long(f"{path}.annotations", TOTAL_ANNOTATION_SIZE_LIMIT))
    for index, finalizer in enumerate(metadata.get("finalizers") or []):
        for problem in validate_qualified_name(finalizer or ""):
            errors.append(fe.invalid(f"{path}.finalizers[{index}]", finalizer, problem))
    return errors
