"""The storage side of leader election: one coordination.k8s.io/v1 Lease read and written.

The elector only needs three calls (read, create, compare-and-swap update), so it depends on this
small protocol rather than on the whole client; `ClientLeaseLock` implements it over
`setpoint.client.Client`, and the unit tests of the election logic use an in-memory one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from setpoint.api.gvk import ResourceInfo
from setpoint.client.errors import NotFound

if TYPE_CHECKING:
    from setpoint.client.client import Client

LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASE_KIND = "Lease"

# The Lease resource is fixed by the Kubernetes API, so it is spelled out instead of discovered:
# leader election then works before (and without) discovery.
LEASE_RESOURCE = ResourceInfo(
    group="coordination.k8s.io",
    version="v1",
    kind="Lease",
    resource="leases",
    namespaced=True,
    list_kind="LeaseList",
    singular="lease",
)


class LeaseLock(Protocol):
    """Reads and writes the one Lease object that an election is about."""

    namespace: str
    name: str

    async def get(self) -> dict[str, Any] | None:
        """The Lease as stored, or None when it does not exist."""
        ...

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]:
        """Create the Lease; raises `AlreadyExists` when another candidate was first."""
        ...

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]:
        """Replace the Lease; raises `Conflict` when its resourceVersion is stale."""
        ...


class ClientLeaseLock:
    """A `LeaseLock` that talks to the API server through a `Client`."""

    def __init__(self, client: Client, namespace: str, name: str) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name

    async def get(self) -> dict[str, Any] | None:
        try:
            return await self.client.get(
                LEASE_API_VERSION, LEASE_KIND, self.name, namespace=self.namespace
            )
        except NotFound:
            return None

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await self.client.create(lease)
        return created

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]:
        updated: dict[str, Any] = await self.client.update(lease)
        return updated

    def __repr__(self) -> str:
        return f"ClientLeaseLock({self.namespace}/{self.name})"
