"""Builders of cached objects for controller unit tests."""

from __future__ import annotations

from typing import Any

from setpoint.cache.cached_object import CachedObject


def cached(
    name: str = "obj",
    namespace: str | None = "default",
    *,
    api_version: str = "v1",
    kind: str = "ConfigMap",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    generation: int | None = None,
    resource_version: str = "1",
    owners: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> CachedObject:
    """A CachedObject decoded from the JSON of an object with these fields."""
    metadata: dict[str, Any] = {"name": name, "resourceVersion": resource_version}
    if namespace:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    if generation is not None:
        metadata["generation"] = generation
    if owners is not None:
        metadata["ownerReferences"] = owners
    return CachedObject.from_dict(
        {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}
    )


def owner_ref(
    name: str,
    *,
    api_version: str = "example.com/v1",
    kind: str = "Widget",
    controller: bool | None = True,
    uid: str = "uid-1",
) -> dict[str, Any]:
    """One ownerReferences entry."""
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller is not None:
        ref["controller"] = controller
    return ref
