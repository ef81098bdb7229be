"""Structural OpenAPI v3 schemas of custom resources: validation, pruning and defaulting.

kube-apiserver treats every custom resource write in the same steps, and so does this package:

1. **prune** fields the schema does not specify (``x-kubernetes-preserve-unknown-fields`` keeps
   them; ``apiVersion``/``kind``/``metadata`` are always kept) and report their paths, which
   ``fieldValidation=Strict`` turns into a 400 and ``Warn`` into ``Warning`` headers;
2. drop nulls the schema neither allows (``nullable``) nor defaults;
3. coerce the ``metadata`` of embedded resources to ObjectMeta;
4. apply ``default`` values (also done on every read);
5. **validate** with kube-openapi's rules and messages, plus embedded-resource and
   ``x-kubernetes-list-type`` checks, ratcheting unchanged values on update.

Compile a schema once (:func:`compile_schema`, cached) and reuse the :class:`CompiledSchema`
(``normalize`` = steps 1-4, ``validate`` / ``validate_status`` = step 5); the module-level
:func:`validate`, :func:`prune` and :func:`apply_defaults` do that for you. The checks of a
CRD's schema itself (is it structural?) live in :mod:`.definition_checks`. Everything here is
pure: no I/O, objects are plain decoded JSON (dicts, lists, scalars).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from setpoint.cluster.apiserver.schema.compiled import SchemaError, SchemaNode, compile_node
from setpoint.cluster.apiserver.schema.structural import CompiledSchema, compile_schema
from setpoint.cluster.apiserver.schema.structural import validate as validate

__all__ = [
    "CompiledSchema",
    "SchemaError",
    "SchemaNode",
    "apply_defaults",
    "compile_node",
    "compile_schema",
    "prune",
    "validate",
]


def prune(schema: Mapping[str, Any] | None, obj: Any) -> list[str]:
    """Remove fields of ``obj`` unknown to ``schema`` in place; return their paths, sorted."""
    return compile_schema(schema).prune(obj)


def apply_defaults(schema: Mapping[str, Any] | None, obj: Any) -> None:
    """Apply ``schema``'s ``default`` values to ``obj`` in place, recursively."""
    compile_schema(schema).apply_defaults(obj)
