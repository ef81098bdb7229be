"""The maps of objects a hook receives: ``children``, ``attachments`` and ``related``.

Both hook versions key the outer map by the object's type, ``Kind.version`` for the core group
and ``Kind.group/version`` otherwise (``Pod.v1``, ``Deployment.apps/v1``). The inner key differs:
version ``v1`` uses the name *relative to the parent* (the bare name, or ``namespace/name`` for a
namespaced object of a cluster-scoped parent); version ``v2`` always uses ``namespace/name`` for
namespaced objects and the name for cluster-scoped ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ObjectMap", "object_map", "type_key"]

#: type key -> inner key -> object.
ObjectMap = dict[str, dict[str, dict[str, Any]]]


def type_key(api_version: str, kind: str) -> str:
    """The outer key of an object map: ``Kind.apiVersion`` (``Deployment.apps/v1``)."""
    return f"{kind}.{api_version}"


def _inner_key(obj: Mapping[str, Any], parent_namespace: str | None, version: str) -> str:
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    namespace = metadata.get("namespace") or ""
    if namespace and (version == "v2" or not parent_namespace):
        return f"{namespace}/{name}"
    return name


def object_map(
    types: Iterable[tuple[str, str]],
    objects: Iterable[Mapping[str, Any]],
    *,
    parent_namespace: str | None,
    version: str = "v1",
) -> ObjectMap:
    """The map of ``objects``, with an (empty) entry for every one of ``types`` even when no
    object has it, as Metacontroller sends every declared child type."""
    result: ObjectMap = {type_key(api_version, kind): {} for api_version, kind in types}
    for obj in objects:
        key = type_key(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        result.setdefault(key, {})[_inner_key(obj, parent_namespace, version)] = dict(obj)
    return result
