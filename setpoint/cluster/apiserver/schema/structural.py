"""A CRD version's schema, compiled once, with everything the server does with it.

Typical use by the API server, per custom resource write::

    compiled = compile_schema(version["schema"]["openAPIV3Schema"])  # once per CRD version
    unknown = compiled.normalize(obj)          # prune, drop nulls, coerce metadata, default
    errors = compiled.validate(obj, old=old)   # [] if valid; old=None on create

and per read from storage ``compiled.apply_defaults(obj)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.schema import cel_validation
from setpoint.cluster.apiserver.schema.compiled import SchemaNode, compile_node
from setpoint.cluster.apiserver.schema.defaulting import apply_defaults, has_defaults
from setpoint.cluster.apiserver.schema.embedded import validate_embedded_resources
from setpoint.cluster.apiserver.schema.list_types import validate_list_types
from setpoint.cluster.apiserver.schema.pruning import (
    as_resource_root,
    coerce_embedded_metadata,
    prune,
    prune_nulls,
)
from setpoint.cluster.apiserver.schema.value_validation import MISSING, ValueValidator

# Compiled schemas kept by :func:`compile_schema`; a server has a handful of CRD versions.
_COMPILED_CACHE_SIZE: Final = 256


def _uses(node: SchemaNode | None, attribute: str) -> bool:
    """Whether any node below ``node`` has a truthy ``attribute`` (to skip whole passes)."""
    if node is None:
        return False
    if getattr(node, attribute):
        return True
    children = [*node.properties.values(), node.additional_schema, node.items]
    return any(_uses(child, attribute) for child in children)


class CompiledSchema:
    """A structural schema ready to validate, prune and default objects quickly.

    ``schema`` is the ``openAPIV3Schema`` of one CRD version (None: no schema, everything
    is accepted and nothing pruned except what the server itself owns).
    """

    __slots__ = (
        "_cel",
        "_has_defaults",
        "_has_embedded",
        "_has_list_types",
        "_resource_root",
        "root",
        "source",
    )

    def __init__(self, schema: Mapping[str, Any] | None) -> None:
        self.source = schema
        self._set_root(compile_node(schema) if schema is not None else None)
        cel_root = cel_validation.build(schema)
        self._cel = cel_validation.CelValidator(cel_root) if cel_root is not None else None

    def _set_root(self, root: SchemaNode | None) -> None:
        self.root = root
        self._resource_root = as_resource_root(root)
        self._has_defaults = has_defaults(root)
        self._has_embedded = _uses(root, "embedded_resource")
        self._has_list_types = _uses(root, "list_type")

    @classmethod
    def from_node(cls, node: SchemaNode) -> CompiledSchema:
        """Wrap an already compiled node (e.g. the ``status`` property of a schema)."""
        compiled = cls.__new__(cls)
        compiled.source = None
        compiled._cel = None
        compiled._set_root(node)
        return compiled

    # --- validation ---

    def validate(self, obj: Any, *, old: Any = None) -> list[FieldError]:
        """Every schema violation in ``obj``, as kube-apiserver reports it for a custom resource.

        ``old`` is the stored object on update (None on create): values equal to the old value
        at the same place are not re-validated (ratcheting). Embedded-resource and list-type
        checks always run, as upstream.
        """
        if self.root is None:
            return []
        checker = ValueValidator()
        checker.validate(self.root, obj, "", MISSING if old is None else old)
        errors = checker.errors
        errors.extend(self._whole_object_errors(self.root, obj))
        if self._cel is not None and not errors:
            # Upstream runs CEL rules only on values that passed the schema (typed inputs).
            errors.extend(self._cel.validate(obj, old))
        return errors

    def validate_value(
        self, value: Any, *, field_prefix: str = "", old: Any = None
    ) -> list[FieldError]:
        """Schema violations of a bare value, reported under ``field_prefix``.

        For a ``/status`` write kube-apiserver validates ``obj["status"]`` against the status
        schema with ``field_prefix="status"``.
        """
        if self.root is None:
            return []
        checker = ValueValidator(field_prefix)
        checker.validate(self.root, value, "", MISSING if old is None else old)
        return checker.errors

    def validate_status(self, obj: Any, *, old: Any = None) -> list[FieldError]:
        """Violations for a ``/status`` write, as upstream's status strategy checks it.

        Only ``obj["status"]`` is validated against the schema (against the ``status``
        property, errors reported under ``status.``); embedded-resource and list-type checks
        still cover the whole object. ``old`` is the stored object (for ratcheting).
        """
        if self.root is None:
            return []
        errors: list[FieldError] = []
        status_node = self.root.properties.get("status")
        if isinstance(obj, dict) and "status" in obj and status_node is not None:
            checker = ValueValidator("status")
            previous = old.get("status", MISSING) if isinstance(old, dict) else MISSING
            checker.validate(status_node, obj["status"], "", previous)
            errors = checker.errors
        errors.extend(self._whole_object_errors(self.root, obj))
        if self._cel is not None and not errors:
            errors.extend(self._cel.validate(obj, old))
        return errors

    def _whole_object_errors(self, root: SchemaNode, obj: Any) -> list[FieldError]:
        """Embedded-resource and list-type problems: always checked on the whole object."""
        errors: list[FieldError] = []
        if self._has_embedded:
            errors.extend(validate_embedded_resources(root, obj))
        if self._has_list_types:
            errors.extend(validate_list_types(root, obj))
        return errors

    def property(self, name: str) -> CompiledSchema | None:
        """The compiled schema of a top-level property (``status``, ``spec``), if specified."""
        if self.root is None or name not in self.root.properties:
            return None
        return CompiledSchema.from_node(self.root.properties[name])

    # --- mutation: pruning, nulls, embedded metadata, defaults ---

    def prune(self, obj: Any) -> list[str]:
        """Drop unknown fields (and unknown embedded ``metadata`` fields); return their paths."""
        unknown = prune(self._resource_root, obj, resource_root=False)
        if self._has_embedded:
            unknown.extend(coerce_embedded_metadata(self.root, obj))
        return unknown

    def prune_nulls(self, obj: Any) -> None:
        """Drop nulls the schema neither allows nor defaults."""
        prune_nulls(self.root, obj)

    def apply_defaults(self, obj: Any) -> None:
        """Apply ``default`` values in place (on requests and on reads)."""
        if self._has_defaults:
            apply_defaults(self.root, obj)

    def normalize(self, obj: Any) -> list[str]:
        """What kube-apiserver does to a request body before validation, in its order:
        prune unknown fields, drop disallowed nulls, coerce embedded metadata, apply defaults.

        Returns the unknown field paths removed (for ``fieldValidation=Strict``/``Warn``).
        """
        unknown = prune(self._resource_root, obj, resource_root=False)
        prune_nulls(self.root, obj)
        if self._has_embedded:
            unknown.extend(coerce_embedded_metadata(self.root, obj))
        self.apply_defaults(obj)
        return unknown


_compiled_cache: dict[bytes, CompiledSchema] = {}


def compile_schema(schema: Mapping[str, Any] | None) -> CompiledSchema:
    """Compile ``schema``, reusing an earlier compilation of an identical schema.

    Keyed by the schema's JSON text, so callers may pass a fresh dict each time; property
    order is kept (it is the order errors are reported in).
    """
    if schema is None:
        return CompiledSchema(None)
    key = msgspec.json.encode(schema)
    compiled = _compiled_cache.get(key)
    if compiled is None:
        if len(_compiled_cache) >= _COMPILED_CACHE_SIZE:
            _compiled_cache.pop(next(iter(_compiled_cache)))  # forget the oldest
        compiled = _compiled_cache[key] = CompiledSchema(schema)
    return compiled


def validate(schema: Mapping[str, Any] | None, obj: Any, old: Any = None) -> list[FieldError]:
    """Validate ``obj`` against ``schema`` (see :meth:`CompiledSchema.validate`)."""
    return compile_schema(schema).validate(obj, old=old)
