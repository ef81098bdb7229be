"""Reading the objects tokens depend on (ServiceAccounts, bound Pods, Secrets, Nodes)."""

from __future__ import annotations

from typing import Any

from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import ObjectLookup
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.selection import decode


def stored_object_lookup(registry: ResourceRegistry, operations: ObjectOperations) -> ObjectLookup:
    """An :data:`ObjectLookup` reading core/v1 objects straight from storage."""

    def lookup(plural: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        resource = registry.get("", "v1", plural)
        if resource is None or not name:
            return None
        record = operations.storage.get(resource.storage_key(namespace, name))
        if record is None:
            return None
        found = decode(record.value)
        return found if isinstance(found, dict) else None

    return lookup
