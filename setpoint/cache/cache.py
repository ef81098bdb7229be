"""The cache: one shared informer per watched collection, and the controller's reads.

A manager owns one :class:`Cache`; every controller reads through it and registers its event
handlers on its informers, so a kind watched by five controllers is still listed and watched
once. Informers are shared per (kind, namespaces, label selector, field selector, metadata-only).

Reads (:meth:`Cache.get`, :meth:`Cache.list`) return fresh dicts the caller may mutate; the
``*_cached`` variants return the immutable :class:`CachedObject` itself (no copy, no decoding
of anything but what you read). A read of a kind not watched yet starts its informer and waits
for its initial list (up to ``CacheOptions.sync_timeout``).

Read-your-own-writes: :meth:`Cache.record_write` / :meth:`Cache.record_delete` (called for
every write a reconcile makes through its context) make later reads return the written object
until the watch has delivered it (:mod:`setpoint.cache.recent_writes`).
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import logging
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

from setpoint.api.gvk import GroupVersionKind, ObjectKey, ResourceInfo
from setpoint.cache.cached_object import CachedObject
from setpoint.cache.errors import CacheNotStarted, NamespaceNotCached
from setpoint.cache.informer import SharedInformer
from setpoint.cache.options import CacheOptions
from setpoint.cache.reflector import ListWatchClient
from setpoint.cache.selection import LabelSelectorLike, label_predicate
from setpoint.cache.store import NAMESPACE_INDEX, OWNER_UID_INDEX, IndexFunc

__all__ = ["Cache", "CacheClient", "ResourceMapper"]

logger = logging.getLogger(__name__)

#: Records of recent writes per informer above which a write prunes the outdated ones.
RECENT_WRITES_PRUNE_AT = 1024

_InformerKey = tuple[GroupVersionKind, frozenset[str], str | None, str | None, bool]


class ResourceMapper(Protocol):
    """Maps an apiVersion and kind to the resource that serves it (the client's RESTMapper)."""

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        """The :class:`ResourceInfo` of ``kind`` in ``api_version``."""
        ...


class CacheClient(ListWatchClient, Protocol):
    """What the cache needs from ``setpoint.client.Client``."""

    @property
    def mapper(self) -> ResourceMapper:
        """The client's REST mapper."""
        ...


class Cache:
    """Shared informers for a process, and cached reads for its controllers."""

    def __init__(self, client: CacheClient, options: CacheOptions | None = None) -> None:
        self.client = client
        self.options = options or CacheOptions()
        self._informers: dict[_InformerKey, SharedInformer] = {}
        # (apiVersion, kind, metadata_only) -> its informer: every cached read goes through
        # informer_for, and resolving the kind (REST mapper, options) each time costs more
        # than the read itself.
        self._by_kind: dict[tuple[str, str, bool], SharedInformer] = {}
        # The same, for informers that have synced (they stay synced): a read finds its
        # informer with one lookup and no awaiting.
        self._synced: dict[tuple[str, str, bool], SharedInformer] = {}
        # (apiVersion, kind) -> the informers that record_write updates; cleared whenever an
        # informer is created.
        self._by_type: dict[tuple[str, str], tuple[SharedInformer, ...]] = {}
        self._started = False

    # -- informers ---------------------------------------------------------------------------

    async def informer_for(
        self, api_version: str, kind: str, *, metadata_only: bool = False
    ) -> SharedInformer:
        """The shared informer of ``kind`` (created, and started if the cache runs, on first use).

        ``metadata_only`` gives an informer that keeps only apiVersion/kind/metadata; it is a
        separate informer from the full one.
        """
        informer = self._by_kind.get((api_version, kind, metadata_only))
        if informer is None:
            resource = await self.client.mapper.resource_for(api_version, kind)
            informer = self.informer_for_resource(resource, metadata_only=metadata_only)
            self._by_kind[(api_version, kind, metadata_only)] = informer
        return informer

    def informer_for_resource(
        self, resource: ResourceInfo, *, metadata_only: bool = False
    ) -> SharedInformer:
        """Like :meth:`informer_for` for an already resolved resource."""
        resolved = self.options.resolve(resource.gvk, metadata_only=metadata_only)
        namespaces = resolved.namespaces if resource.namespaced else frozenset()
        key: _InformerKey = (
            resource.gvk,
            namespaces,
            resolved.label_selector,
            resolved.field_selector,
            resolved.metadata_only,
        )
        informer = self._informers.get(key)
        if informer is None:
            informer = SharedInformer(
                self.client,
                resource,
                namespaces=namespaces,
                label_selector=resolved.label_selector,
                field_selector=resolved.field_selector,
                metadata_only=resolved.metadata_only,
                transform=resolved.transform,
                strip_managed_fields=resolved.strip_managed_fields,
                options=self.options.reflector,
            )
            self._informers[key] = informer
            self._by_type.clear()
            if self._started:
                informer.start()
        return informer

    @property
    def informers(self) -> builtins.list[SharedInformer]:
        """Every informer created so far."""
        return builtins.list(self._informers.values())

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def is_started(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._started

    @property
    def has_synced(self) -> bool:
        """True when every informer created so far has completed its initial list."""
        return all(informer.has_synced for informer in self._informers.values())

    async def start(self) -> None:
        """Start every informer; informers created later start at once."""
        self._started = True
        for informer in self.informers:
            informer.start()

    async def stop(self) -> None:
        """Stop every informer (their stores keep their last contents)."""
        self._started = False
        await asyncio.gather(*(informer.stop() for informer in self.informers))

    async def __aenter__(self) -> Cache:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def wait_for_sync(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until every informer has synced.

        ``timeout`` defaults to ``CacheOptions.sync_timeout``. Raises
        :class:`~setpoint.cache.errors.CacheSyncTimeout` for the first informer that did not
        sync, naming its resource (and "forbidden" when RBAC refused the list).
        """
        if timeout is None:
            timeout = self.options.sync_timeout
        waits = [informer.wait_for_sync(timeout) for informer in self.informers]
        results = await asyncio.gather(*waits, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    # -- indexes -----------------------------------------------------------------------------

    async def add_index(
        self,
        api_version: str,
        kind: str,
        name: str,
        fn: IndexFunc,
        *,
        metadata_only: bool = False,
    ) -> None:
        """Add a field index to ``kind``'s informer (read it with ``list(index=(name, value))``).

        Adding the same index name twice is allowed only with the same function.
        """
        informer = await self.informer_for(api_version, kind, metadata_only=metadata_only)
        informer.add_index(name, fn)

    # -- reads -------------------------------------------------------------------------------

    async def get_cached(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool = False,
    ) -> CachedObject | None:
        """The immutable cached object ``namespace/name``, or None (zero-copy read)."""
        informer = self._synced.get((api_version, kind, metadata_only))
        if informer is None:
            informer = await self._ready_informer(api_version, kind, metadata_only)
        if informer.resource.namespaced:
            if not namespace:
                resource = informer.resource
                raise ValueError(
                    f"namespace is required to get {resource.kind} {name!r}: "
                    f"{resource.resource} are namespaced"
                )
            if informer.namespaces and namespace not in informer.namespaces:
                self._check_namespace(informer, namespace)  # raises, naming the namespaces
        else:
            namespace = None
        # _store, not the store property: a call fewer on every read.
        stored = informer._store.get_by_name(name, namespace)
        return informer.recent_writes.get_by_name(
            namespace, name, stored, informer.observed_version
        )

    async def list_cached(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorLike | None = None,
        index: tuple[str, str] | None = None,
        metadata_only: bool = False,
    ) -> builtins.list[CachedObject]:
        """Immutable cached objects of ``kind``, optionally filtered.

        ``namespace`` None lists every cached namespace; ``label_selector`` filters by labels;
        ``index=(name, value)`` selects through an index (``"namespace"``, ``"owner-uid"`` or one
        added with :meth:`add_index`).
        """
        informer = self._synced.get((api_version, kind, metadata_only))
        if informer is None:
            informer = await self._ready_informer(api_version, kind, metadata_only)
        if not informer.resource.namespaced:
            namespace = None
        elif namespace is not None:
            self._check_namespace(informer, namespace)
        store = informer.store
        if index is None:
            objects = store.list(namespace, label_selector)
        else:
            index_name, value = index
            objects = store.by_index(index_name, value)
            if namespace is not None:
                objects = [obj for obj in objects if obj.namespace == namespace]
            if label_selector is not None:
                labels_match = label_predicate(label_selector)
                objects = [obj for obj in objects if labels_match(obj.labels)]
        recent = informer.recent_writes
        if not len(recent):
            return objects
        selector = label_predicate(label_selector) if label_selector is not None else None
        index_fn = None
        if index is not None and index[0] not in (NAMESPACE_INDEX, OWNER_UID_INDEX):
            index_fn = store.index_function(index[0])

        def matches(obj: CachedObject) -> bool:
            if namespace is not None and obj.namespace != namespace:
                return False
            if selector is not None and not selector(obj.labels):
                return False
            if index is None:
                return True
            if index[0] == NAMESPACE_INDEX:
                return obj.namespace == index[1]
            if index[0] == OWNER_UID_INDEX:
                return any(ref.uid == index[1] for ref in obj.owner_references)
            return index_fn is not None and index[1] in (index_fn(obj) or ())

        return recent.merge(
            objects,
            lambda key: store.get_by_name(key.name, key.namespace),
            informer.observed_version,
            matches,
        )

    def peek(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> CachedObject | None:
        """The cached object ``namespace/name`` of a kind some informer already watches, else
        None; never starts an informer nor waits (for code that only looks, e.g. the trace)."""
        for informer in self._by_type.get((api_version, kind)) or self._informers_of(
            api_version, kind
        ):
            scope = namespace if informer.resource.namespaced else None
            stored = informer._store.get_by_name(name, scope)
            found = informer.recent_writes.get_by_name(
                scope, name, stored, informer.observed_version
            )
            if found is not None:
                return found
        return None

    # -- read-your-own-writes ----------------------------------------------------------------

    def _informers_of(self, api_version: str, kind: str) -> tuple[SharedInformer, ...]:
        informers = self._by_type.get((api_version, kind))
        if informers is None:
            informers = self._by_type[(api_version, kind)] = tuple(
                informer
                for informer in self._informers.values()
                if informer.resource.gvk.api_version == api_version
                and informer.resource.kind == kind
            )
        return informers

    def record_write(self, obj: Mapping[str, Any], body: bytes = b"") -> tuple[str, str] | None:
        """Make reads return ``obj`` (a write's answer) until the watch delivers it.

        ``body``, when given, is ``obj`` as the JSON the server sent, kept instead of encoding
        ``obj`` again. Ignored for kinds that no informer watches, and for answers that are
        not objects. Returns the answer's ``(uid, resourceVersion)`` ("" for either when
        absent), or None when it has no metadata object.
        """
        metadata = obj.get("metadata")
        # The type check first: an ABC isinstance check costs a Python-level call.
        if type(metadata) is not dict and not isinstance(metadata, Mapping):
            return None
        uid = str(metadata.get("uid") or "")
        version = metadata.get("resourceVersion")
        identity = (uid, str(version or ""))
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or kind == "Status":
            return identity
        informers = self._by_type.get((api_version, kind)) or self._informers_of(api_version, kind)
        if not informers:
            return identity
        # Encoded now (the caller may change the dict it got back), decoded on first read.
        raw = body or msgspec.json.encode(obj)
        namespace = metadata.get("namespace") or None
        name = str(metadata.get("name") or "")
        if not isinstance(version, str):
            version = None
        for informer in informers:
            recent = informer.recent_writes
            recent.record_raw(namespace, name, uid, version, informer.decode, raw)
            if len(recent) > RECENT_WRITES_PRUNE_AT:
                # Drop the records the watch has caught up with (reads drop them too, but a
                # controller that writes much and reads little would keep them until then).
                recent.prune_if_above(
                    RECENT_WRITES_PRUNE_AT,
                    functools.partial(_stored, informer),
                    informer.observed_version,
                )
        return identity

    def record_delete(
        self, api_version: str, kind: str, name: str, namespace: str | None, uid: str
    ) -> None:
        """Make reads omit the object ``namespace/name`` with ``uid`` until the watch drops it."""
        for informer in self._informers_of(api_version, kind):
            scope = namespace if informer.resource.namespaced else None
            informer.recent_writes.record_deleted(ObjectKey(scope, name), uid)

    async def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool = False,
    ) -> dict[str, Any] | None:
        """A fresh dict of the cached object ``namespace/name``, or None if not cached."""
        obj = await self.get_cached(api_version, kind, name, namespace, metadata_only=metadata_only)
        return None if obj is None else obj.to_dict()

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorLike | None = None,
        index: tuple[str, str] | None = None,
        metadata_only: bool = False,
    ) -> builtins.list[dict[str, Any]]:
        """Fresh dicts of the cached objects (same filters as :meth:`list_cached`)."""
        objects = await self.list_cached(
            api_version,
            kind,
            namespace,
            label_selector=label_selector,
            index=index,
            metadata_only=metadata_only,
        )
        return [obj.to_dict() for obj in objects]

    async def _ready_informer(
        self, api_version: str, kind: str, metadata_only: bool
    ) -> SharedInformer:
        informer = await self.informer_for(api_version, kind, metadata_only=metadata_only)
        if not informer.has_synced:
            if not self._started:
                raise CacheNotStarted(
                    f"cannot read {informer.description}: the cache is not started "
                    "(start the cache or the manager first)"
                )
            await informer.wait_for_sync(self.options.sync_timeout)
        self._synced[(api_version, kind, metadata_only)] = informer
        return informer

    @staticmethod
    def _check_namespace(informer: SharedInformer, namespace: str) -> None:
        if informer.namespaces and namespace not in informer.namespaces:
            raise NamespaceNotCached(
                f"namespace {namespace!r} is not cached for {informer.resource.kind}: the cache "
                f"is restricted to namespaces {', '.join(sorted(informer.namespaces))}"
            )


def _stored(informer: SharedInformer, key: ObjectKey) -> CachedObject | None:
    return informer.store.get_by_name(key.name, key.namespace)
