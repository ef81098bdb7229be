"""The CRD object itself: its group, kind and finalizer, and tolerant readers of its fields.

A CRD is validated after it is read, so these accessors never raise on malformed input: a
field of the wrong JSON type reads as empty and the validation reports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

GROUP: Final = "apiextensions.k8s.io"
KIND: Final = "CustomResourceDefinition"

# The finalizer that makes kube-apiserver delete all custom resources before the CRD.
CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"


def as_text(value: Any) -> str:
    """``value`` if it is a string, else ``""`` (malformed input is reported elsewhere)."""
    return value if isinstance(value, str) else ""


def as_texts(value: Any) -> list[str]:
    """The strings of a JSON list (anything else is treated as empty)."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON list, else an empty one."""
    return value if isinstance(value, list) else []


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (tolerates malformed input)."""
    return value if isinstance(value, Mapping) else {}


def spec_of(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec``, or an empty mapping."""
    spec = crd.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def versions_of(crd: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The entries of ``spec.versions`` that are objects."""
    versions = spec_of(crd).get("versions")
    if not isinstance(versions, list):
        return []
    return [v for v in versions if isinstance(v, Mapping)]


def names_of(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.names`` (the requested names), or an empty mapping."""
    names = spec_of(crd).get("names")
    return names if isinstance(names, Mapping) else {}


def has_openapi_schema(schema: Any) -> bool:
    """Whether a version's ``schema`` holds an ``openAPIV3Schema``."""
    return isinstance(schema, Mapping) and schema.get("openAPIV3Schema") is not None
