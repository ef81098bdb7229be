"""Validation of built-in objects against the upstream schemas (``kubernetes-validate``).

The schema work lives in ``builtin_schemas``; this adapts it to
the server's :data:`BuiltinValidator` signature (field errors plus unknown-field paths). Unknown
fields are pruned, as decoding into the Go types does upstream.

``metadata`` is left out of the schema pass: the server validates it itself
(:mod:`.object_meta_validation`, with upstream's messages) and has just set half of it, so
walking the ObjectMeta schema again would only cost time on every write (about half of the
schema pass for small objects). Unknown metadata fields are pruned here by name.

Before the full schema pass, :mod:`.builtin_fast_check` tries to prove the object clean (no
error, nothing to prune); only objects it cannot vouch for pay for the full pass.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.schema.compiled import SchemaNode
from setpoint.cluster.apiserver.validation.builtin_schemas import builtin_schemas, validate_builtin
from setpoint.cluster.apiserver.validation.fast_check import FastChecker

#: The fields of ``ObjectMeta`` (k8s.io/apimachinery/pkg/apis/meta/v1, 1.32).
OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


_FAST_CHECKER: Final = FastChecker()
#: The compiled schema of each (apiVersion, kind) seen, None for kinds without one.
_NODES: dict[tuple[str, str], SchemaNode | None] = {}


def _schema_node(obj: dict[str, Any]) -> SchemaNode | None:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    key = (api_version, kind)
    if key not in _NODES:
        _NODES[key] = builtin_schemas().node_for(api_version, kind)
    return _NODES[key]


def _validate(resource: ServedResource, obj: dict[str, Any]) -> tuple[list[FieldError], list[str]]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        result = validate_builtin(obj)
        return result.errors, result.unknown_fields
    node = _schema_node(obj)
    if (
        node is not None
        and OBJECT_META_FIELDS.issuperset(metadata)
        and _FAST_CHECKER.clean(node, obj, skip="metadata")
    ):
        return [], []
    # An empty stand-in keeps the key (some kinds require it) and its place in the object.
    obj["metadata"] = {}
    try:
        result = validate_builtin(obj)
    finally:
        obj["metadata"] = metadata
    unknown = [key for key in metadata if key not in OBJECT_META_FIELDS]
    for key in unknown:
        del metadata[key]
    return result.errors, [f"metadata.{key}" for key in unknown] + result.unknown_fields


def builtin_validator() -> BuiltinValidator:
    """The validator of built-in kinds."""
    return _validate
