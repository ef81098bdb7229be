"""The informers of one controller manager: one per resource, shared by every controller."""

from __future__ import annotations

from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import Storage
from setpoint.cluster.controllers.framework.informers import Informer


def resource_name(resource: ServedResource) -> str:
    """How controllers name a resource: ``pods``, ``apps/replicasets``, ``example.com/foos``."""
    return f"{resource.group}/{resource.plural}" if resource.group else resource.plural


class InformerSet:
    """Informers by storage root, started on first use; resources named as ``group/plural``."""

    def __init__(self, storage: Storage, registry: ResourceRegistry) -> None:
        self.storage = storage
        self.registry = registry
        self._informers: dict[str, Informer] = {}
        self._resources: dict[str, ServedResource] = {}
        self._started = False

    def resource(self, name: str) -> ServedResource:
        """The served resource called ``name`` (``group/plural`` or a core ``plural``), in the
        group's preferred version; KeyError if not served."""
        cached = self._resources.get(name)
        if cached is not None and self.registry.get(cached.group, cached.version, cached.plural):
            return cached
        group, _, plural = name.rpartition("/")
        for version in self.registry.versions_of(group):
            served = self.registry.get(group, version, plural)
            if served is not None:
                self._resources[name] = served
                return served
        raise KeyError(f"resource {name!r} is not served")

    def resource_for_kind(self, api_version: str, kind: str) -> ServedResource | None:
        """The served resource of objects of ``apiVersion``/``kind``, or None."""
        group, _, version = api_version.rpartition("/")
        for served in self.registry:
            if served.group == group and served.version == version and served.kind == kind:
                return served
        for served in self.registry:  # another version of the same kind
            if served.group == group and served.kind == kind:
                return served
        return None

    def informer(self, name: str, *, metadata_only: bool = False) -> Informer:
        """The informer of resource ``name`` (created, and started if the set runs)."""
        served = self.resource(name)
        return self.informer_for(served, metadata_only=metadata_only)

    def informer_for(self, served: ServedResource, *, metadata_only: bool = False) -> Informer:
        """The informer of ``served`` (shared by every version stored under its root).

        ``metadata_only``: the caller reads only apiVersion, kind and metadata. The informer
        keeps whole objects as soon as one caller did not say so.
        """
        informer = self._informers.get(served.storage_root)
        if informer is None:
            informer = Informer(self.storage, served, metadata_only=metadata_only)
            self._informers[served.storage_root] = informer
            if self._started:
                informer.start()
        elif not metadata_only:
            informer.want_whole_objects()
        return informer

    def has(self, served: ServedResource) -> bool:
        """Whether an informer exists for ``served``'s storage."""
        return served.storage_root in self._informers

    def start(self) -> None:
        """Start every informer created so far (later ones start when created)."""
        self._started = True
        for informer in list(self._informers.values()):
            informer.start()

    async def stop(self) -> None:
        """Stop every informer."""
        for informer in list(self._informers.values()):
            await informer.stop()
        self._started = False
