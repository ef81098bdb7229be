"""A Lease kept in memory with resourceVersion checks, for unit tests of the election logic."""

from __future__ import annotations

import copy
from typing import Any

from setpoint.client.errors import AlreadyExists, Conflict


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


class InMemoryLeaseLock:
    """One shared Lease; several electors get views of it via `view()`."""

    def __init__(self, namespace: str = "default", name: str = "lease") -> None:
        self.namespace = namespace
        self.name = name
        self.stored: dict[str, Any] | None = None
        self.version = 0
        self.writes = 0
        self.fail_writes = False

    async def get(self) -> dict[str, Any] | None:
        return copy.deepcopy(self.stored)

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]:
        if self.stored is not None:
            raise AlreadyExists(
                _status(409, "AlreadyExists", f'leases "{self.name}" already exists')
            )
        return self._store(lease)

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]:
        if self.fail_writes:
            raise ConnectionError("API server unreachable")
        assert self.stored is not None
        if lease["metadata"].get("resourceVersion") != self.stored["metadata"]["resourceVersion"]:
            raise Conflict(_status(409, "Conflict", "the object has been modified"))
        return self._store(lease)

    def _store(self, lease: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.writes += 1
        stored = copy.deepcopy(lease)
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.stored = stored
        return copy.deepcopy(stored)
