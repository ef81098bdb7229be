"""Small object builders for the storage tests."""

from __future__ import annotations

from typing import Any

import msgspec


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    """A ConfigMap as a client would send it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": dict(data),
    }


def key_of(name: str, namespace: str = "default") -> str:
    """The storage key of a ConfigMap."""
    return f"/core/configmaps/{namespace}/{name}"


def decoded(value: bytes) -> dict[str, Any]:
    """The stored JSON as a dict."""
    obj: dict[str, Any] = msgspec.json.decode(value)
    return obj


def rv(value: bytes) -> str:
    """The ``metadata.resourceVersion`` of stored JSON."""
    version: str = decoded(value)["metadata"]["resourceVersion"]
    return version
