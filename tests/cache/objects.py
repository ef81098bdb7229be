"""Builders of Kubernetes object JSON for the cache tests (no server needed)."""

from __future__ import annotations

from typing import Any

import msgspec


def configmap(
    name: str,
    namespace: str | None = "default",
    *,
    rv: str = "1",
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    data: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
    managed_fields: bool = True,
    **extra_metadata: Any,
) -> dict[str, Any]:
    """A ConfigMap dict with the metadata a real API server fills in."""
    metadata: dict[str, Any] = {
        "name": name,
        "uid": uid or f"uid-{namespace}-{name}",
        "resourceVersion": rv,
        "creationTimestamp": "2026-01-01T00:00:00Z",
    }
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = labels
    if owners is not None:
        metadata["ownerReferences"] = owners
    if managed_fields:
        metadata["managedFields"] = [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:k": {}}},
            }
        ]
    metadata.update(extra_metadata)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": data if data is not None else {"k": "v"},
    }


def owner(uid: str, *, name: str = "owner", controller: bool = True) -> dict[str, Any]:
    """An ownerReferences entry."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "name": name,
        "uid": uid,
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def encode(obj: Any) -> bytes:
    """Compact JSON, as the API server sends it."""
    return msgspec.json.encode(obj)


def list_body(items: list[dict[str, Any]], rv: str, continue_token: str = "") -> bytes:
    """A ConfigMapList response body."""
    metadata: dict[str, Any] = {"resourceVersion": rv}
    if continue_token:
        metadata["continue"] = continue_token
    return encode(
        {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": metadata, "items": items}
    )


def event_line(event_type: str, obj: dict[str, Any]) -> bytes:
    """One watch event line (without the newline)."""
    return encode({"type": event_type, "object": obj})


def bookmark_line(rv: str) -> bytes:
    """A BOOKMARK event line."""
    return event_line(
        "BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}
    )


def expired_line(rv: str = "1") -> bytes:
    """The ERROR event a server sends when a watch starts from a too old resourceVersion."""
    return event_line(
        "ERROR",
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"too old resource version: {rv} (100)",
            "reason": "Expired",
            "code": 410,
        },
    )
