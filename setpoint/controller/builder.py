"""The fluent way to wire a controller: what it reconciles, what it watches, how it runs.

::

    controller = (
        Builder(manager)
        .for_("example.com/v1", "Widget", predicates=[GenerationChanged()])
        .owns("apps/v1", "Deployment")               # children → their controlling Widget
        .watches("v1", "Secret", secret_to_widgets)  # any object → keys from a function
        .with_options(max_concurrent_reconciles=4)
        .complete(reconcile)
    )

``complete`` builds the :class:`Controller`, adds it to the manager (which starts it with the
cache and stops it on shutdown), and returns it. The builder needs only a small part of the
manager (:class:`ManagerLike`), so anything with a cache, a client and ``add`` will do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any, Protocol

from setpoint.api.clock import Clock
from setpoint.api.gvk import ObjectKey, ResourceInfo, parse_api_version
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.controller import (
    DEFAULT_CACHE_SYNC_TIMEOUT,
    DEFAULT_MAX_CONCURRENT_RECONCILES,
    Controller,
)
from setpoint.controller.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    Handler,
    MapFunction,
)
from setpoint.controller.owner_chain import EnqueueRequestForOwnerChain
from setpoint.controller.predicates import Predicate, checked_predicates
from setpoint.controller.rate_limiters import RateLimiter
from setpoint.controller.reconcile import ReconcilerLike, Request
from setpoint.controller.source import CacheLike, KindSource, Source

__all__ = ["Builder", "ManagerLike", "MapperLike"]

# Controller names label metrics and log lines: keep them to characters safe everywhere.
_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


class MapperLike(Protocol):
    """The part of the client's REST mapper the builder uses."""

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        """Resolve a kind to its resource (raises when the server does not serve it)."""
        ...


class _ClientLike(Protocol):
    @property
    def mapper(self) -> MapperLike: ...


class ManagerLike(Protocol):
    """What the builder needs from a manager: its cache, its client, and a place to add to."""

    @property
    def cache(self) -> CacheLike:
        """The shared cache (informers are created through it)."""
        ...

    @property
    def client(self) -> _ClientLike:
        """The API client (used to tell whether owner kinds are namespaced)."""
        ...

    def add(self, controller: Controller) -> None:
        """Take ownership of the controller: start it with the cache, stop it on shutdown."""
        ...


class _Watch:
    __slots__ = ("api_version", "handler", "kind", "metadata_only", "predicates")

    def __init__(
        self,
        api_version: str,
        kind: str,
        handler: Handler,
        predicates: Sequence[Predicate],
        metadata_only: bool,
    ) -> None:
        self.api_version = api_version
        self.kind = kind
        self.handler = handler
        self.predicates = tuple(predicates)
        self.metadata_only = metadata_only


def _check_kind(method: str, api_version: str, kind: str) -> None:
    try:
        parse_api_version(api_version)
    except ValueError as exc:
        raise ValueError(f"{method}: api_version: {exc}") from None
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{method}: kind must be a non-empty string")


class Builder:
    """Builds a :class:`Controller` for ``manager`` (controller-runtime's ``Builder``)."""

    def __init__(self, manager: ManagerLike) -> None:
        self._manager = manager
        self._for: _Watch | None = None
        self._owns: list[_Watch] = []
        self._owner_chains: list[tuple[tuple[tuple[str, str], ...], tuple[Predicate, ...]]] = []
        self._watches: list[_Watch] = []
        self._sources: list[Source] = []
        self._global_predicates: list[Predicate] = []
        self._name: str | None = None
        self._options: dict[str, Any] = {}
        self._built = False
        self._chain_sources: list[KindSource] = []

    def for_(
        self,
        api_version: str,
        kind: str,
        *,
        predicates: Sequence[Predicate] = (),
        metadata_only: bool = False,
    ) -> Builder:
        """The primary kind: its events enqueue the object's own key. Call at most once."""
        if self._for is not None:
            raise ValueError(
                f"for_ was already called with {self._for.api_version} {self._for.kind}; "
                "a controller reconciles exactly one kind (use watches() for others)"
            )
        _check_kind("for_", api_version, kind)
        self._for = _Watch(
            api_version,
            kind,
            EnqueueRequestForObject(),
            checked_predicates("for_", predicates),
            metadata_only,
        )
        return self

    def owns(
        self,
        api_version: str,
        kind: str,
        *,
        predicates: Sequence[Predicate] = (),
        metadata_only: bool = False,
        only_controller: bool = True,
    ) -> Builder:
        """A child kind: its events enqueue the ``for_`` object named by its controller ref."""
        _check_kind("owns", api_version, kind)
        # The owner handler is made in build(), once for_ names the owner kind.
        self._owns.append(
            _Watch(
                api_version,
                kind,
                _PendingOwner(only_controller),
                checked_predicates("owns", predicates),
                metadata_only,
            )
        )
        return self

    def owns_through(self, *path: tuple[str, str], predicates: Sequence[Predicate] = ()) -> Builder:
        """Descendants: events anywhere down ``path`` wake the ``for_`` object that owns it all.

        ``path`` goes down from a kind the ``for_`` object controls to the descendant, each an
        ``(api_version, kind)`` pair: ``owns_through(("apps/v1", "Deployment"), ("apps/v1",
        "ReplicaSet"), ("v1", "Pod"))`` wakes a Memcached when one of its Deployment's Pods
        changes. Every kind of the path is watched; the first as with :meth:`owns`, each deeper
        one through :class:`~setpoint.controller.owner_chain.EnqueueRequestForOwnerChain`, which
        follows controller references up through the cached kinds above it.
        """
        if not path:
            raise ValueError("owns_through: give the path of kinds, from a direct child down")
        for api_version, kind in path:
            _check_kind("owns_through", api_version, kind)
        self._owner_chains.append((tuple(path), checked_predicates("owns_through", predicates)))
        return self

    def watches(
        self,
        api_version: str,
        kind: str,
        handler: Handler | MapFunction,
        *,
        predicates: Sequence[Predicate] = (),
        metadata_only: bool = False,
    ) -> Builder:
        """Any kind, mapped to requests by a :class:`Handler` or a function ``obj -> [Request]``."""
        _check_kind("watches", api_version, kind)
        if not isinstance(handler, Handler):
            if not callable(handler):
                raise TypeError(
                    f"watches: handler must be a Handler or a function of the object, "
                    f"got {handler!r}"
                )
            handler = EnqueueRequestsFromMapFunc(handler)
        self._watches.append(
            _Watch(
                api_version, kind, handler, checked_predicates("watches", predicates), metadata_only
            )
        )
        return self

    def watches_source(self, source: Source) -> Builder:
        """A custom event source (e.g. :class:`~setpoint.controller.source.ChannelSource`).

        Event filters set with :meth:`with_event_filter` do not apply to it.
        """
        for method in ("start", "wait_for_sync", "stop"):
            if not callable(getattr(source, method, None)):
                raise TypeError(f"watches_source: {source!r} has no {method}() method")
        self._sources.append(source)
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        """Predicates applied to the events of every kind this controller watches."""
        self._global_predicates.extend(checked_predicates("with_event_filter", predicates))
        return self

    with_predicates = with_event_filter

    def named(self, name: str) -> Builder:
        """The controller's name (metrics label, logs); default: the ``for_`` kind, lowercased."""
        if not isinstance(name, str) or not _NAME_PATTERN.fullmatch(name):
            raise ValueError(
                f"named: {name!r} is not a valid controller name (letters, digits, '-', '_', "
                "'.', starting with a letter or digit)"
            )
        self._name = name
        return self

    def with_options(
        self,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter | None = None,
        reconcile_timeout: float | None = None,
        cache_sync_timeout: float | None = None,
        executor: Executor | None = None,
        need_leader_election: bool | None = None,
        skip_name_validation: bool | None = None,
        clock: Clock | None = None,
        resync_period: float | None = None,
        ignore_own_writes: bool | None = None,
    ) -> Builder:
        """Controller options (see :class:`Controller`); unset ones keep their defaults.

        ``resync_period`` re-queues every cached object of the ``for_`` kind that often, at low
        priority.
        """
        given = {
            "clock": clock,
            "resync_period": resync_period,
            "ignore_own_writes": ignore_own_writes,
            "max_concurrent_reconciles": max_concurrent_reconciles,
            "rate_limiter": rate_limiter,
            "reconcile_timeout": reconcile_timeout,
            "cache_sync_timeout": cache_sync_timeout,
            "executor": executor,
            "need_leader_election": need_leader_election,
            "skip_name_validation": skip_name_validation,
        }
        self._options.update({k: v for k, v in given.items() if v is not None})
        return self

    def build(self, reconciler: ReconcilerLike) -> Controller:
        """Build the controller, add it to the manager, and return it."""
        if self._built:
            raise RuntimeError("this Builder already built a controller; start a new Builder")
        name = self._controller_name()
        sources: list[Source] = []
        primary_source: KindSource | None = None
        watches: list[_Watch] = []
        if self._for is not None:
            watches.append(self._for)
        for owned in self._owns:
            assert self._for is not None  # checked in _controller_name
            pending = owned.handler
            assert isinstance(pending, _PendingOwner)
            handler = EnqueueRequestForOwner(
                self._for.api_version, self._for.kind, only_controller=pending.only_controller
            )
            watches.append(
                _Watch(
                    owned.api_version, owned.kind, handler, owned.predicates, owned.metadata_only
                )
            )
        watches.extend(self._chain_watches(watches))
        watches.extend(self._watches)
        for watch in watches:
            source = KindSource(
                self._manager.cache,
                watch.api_version,
                watch.kind,
                watch.handler,
                (*self._global_predicates, *watch.predicates),
                metadata_only=watch.metadata_only,
                resolve_scope=self._resolve_scope,
            )
            if watch is self._for:
                primary_source = source
            sources.append(source)
        self._chain_sources = [s for s in sources if isinstance(s, KindSource)]
        sources.extend(self._sources)
        options = {
            "max_concurrent_reconciles": DEFAULT_MAX_CONCURRENT_RECONCILES,
            "cache_sync_timeout": DEFAULT_CACHE_SYNC_TIMEOUT,
            **self._options,
        }
        if primary_source is not None and options.get("resync_period") is not None:
            options["resync_keys"] = functools.partial(_keys_of, primary_source)
        controller = Controller(name, reconciler, sources=sources, **options)
        if self._for is not None:
            controller.for_kind = (self._for.api_version, self._for.kind)
        self._manager.add(controller)
        self._built = True
        return controller

    def complete(self, reconciler: ReconcilerLike) -> Controller:
        """Same as :meth:`build` (controller-runtime's spelling)."""
        return self.build(reconciler)

    def _chain_watches(self, existing: Sequence[_Watch]) -> list[_Watch]:
        """The watches of :meth:`owns_through`: one per kind of each path not watched yet."""
        if not self._owner_chains:
            return []
        assert self._for is not None  # checked in _controller_name
        owner = (self._for.api_version, self._for.kind)
        seen = {(w.api_version, w.kind) for w in existing}
        added: list[_Watch] = []
        for path, predicates in self._owner_chains:
            for depth, (api_version, kind) in enumerate(path):
                if (api_version, kind) in seen:
                    continue
                seen.add((api_version, kind))
                via = tuple(reversed(path[:depth]))
                handler: Handler = (
                    EnqueueRequestForOwnerChain(owner, via, self._cached_owner)
                    if via
                    else EnqueueRequestForOwner(*owner)
                )
                added.append(_Watch(api_version, kind, handler, predicates, False))
        return added

    def _cached_owner(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> CachedObject | None:
        """An intermediate of an owner chain, read from the informer its watch started."""
        group = parse_api_version(api_version).group
        for source in self._chain_sources:
            if source.kind != kind or parse_api_version(source.api_version).group != group:
                continue
            store = getattr(source.informer, "store", None)
            if store is not None:
                found: CachedObject | None = store.get(ObjectKey(namespace, name))
                return found
        return None

    def _controller_name(self) -> str:
        if (self._owns or self._owner_chains) and self._for is None:
            raise ValueError("owns() needs for_(): the owner kind is the for_ kind")
        if self._name is not None:
            return self._name
        if self._for is None:
            raise ValueError("a controller without for_() must be given a name with named(...)")
        return self._for.kind.lower()

    async def _resolve_scope(self, api_version: str, kind: str) -> bool:
        resource = await self._manager.client.mapper.resource_for(api_version, kind)
        return resource.namespaced


def _keys_of(source: KindSource) -> list[Request]:
    informer: Any = source.informer
    if informer is None:
        return []
    return [obj.key for obj in informer.store]


class _PendingOwner(Handler):
    """Placeholder for an owns() handler until build() knows the owner kind."""

    def __init__(self, only_controller: bool) -> None:
        self.only_controller = only_controller
