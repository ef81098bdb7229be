"""What a workload controller needs from the cluster: reads, writes, Events, a clock.

The workload controllers (ReplicaSet, Deployment, Job, CronJob, StatefulSet, DaemonSet) are
written against this small protocol so that their sync functions can be tested without a
server (``tests/cluster/workloads/fake_context.py``). Inside ``setpoint cluster serve`` the
framework's ``ClusterAccess`` implements it over the shared informers, the admission path
and the Event recorder.

Kinds are named by their resource and group (``"pods"``, ``"apps/replicasets"``). Reads
return objects the caller must not mutate. Writes go through the same admission path as API
requests and return the stored object; failures raise :class:`WriteError` with the HTTP
status code and reason of the Status the API server would answer.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, Protocol

from setpoint.api.clock import Clock

__all__ = ["WorkloadContext", "WriteError"]


class WriteError(Exception):
    """A write the API server refused: ``code`` (e.g. 409) and ``reason`` (e.g. AlreadyExists)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message


class WorkloadContext(Protocol):
    """Reads from the controllers' cache and writes through the API server's admission path."""

    @property
    def clock(self) -> Clock:
        """The cluster clock (a FakeClock in tests)."""
        ...

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The cached object, or None."""
        ...

    def list(self, resource: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Every cached object of ``resource`` (in ``namespace`` when given)."""
        ...

    def list_controlled(
        self, resource: str, namespace: str, controller_uid: str | None
    ) -> builtins.list[Mapping[str, Any]]:
        """The cached objects of ``resource`` in ``namespace`` whose controller reference
        names ``controller_uid`` (None: those without a controller), found by an index."""
        ...

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``obj`` (its namespace from ``metadata.namespace``; ``generateName`` works)."""
        ...

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` (optimistic concurrency on ``metadata.resourceVersion``)."""
        ...

    async def update_status(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` to the ``/status`` subresource."""
        ...

    async def patch(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A JSON merge patch of the main resource."""
        ...

    async def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        propagation: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        """DELETE with optional propagationPolicy and uid/resourceVersion preconditions."""
        ...

    def event(
        self, obj: Mapping[str, Any], type: str, reason: str, message: str, component: str
    ) -> None:
        """Record a core/v1 Event about ``obj`` from ``component`` (aggregated as upstream)."""
        ...
