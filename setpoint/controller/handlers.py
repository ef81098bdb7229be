"""Handlers: which requests (primary-object keys) a cache event produces.

- :class:`EnqueueRequestForObject`: the event's own object (used for the ``for_`` type);
- :class:`EnqueueRequestForOwner`: the owner named by the object's controller ``ownerReference``
  when its kind and API group match (used by ``owns``); for updates both the old and the new
  owner, so moving a child between owners reconciles both;
- :class:`EnqueueRequestsFromMapFunc`: any keys computed by a function of the object (used by
  ``watches``), e.g. every object that references a Secret.

Handlers run on the event loop inside the informer's dispatch, so they must be quick and must not
block; a map function is a plain (sync) function of the cached object.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from setpoint.api.gvk import ObjectKey, parse_api_version
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.reconcile import Request

__all__ = [
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "Handler",
    "MapFunction",
    "RequestQueue",
    "ScopeResolver",
]

logger = logging.getLogger(__name__)

#: Maps an object to the requests it should trigger.
MapFunction = Callable[[CachedObject], Iterable[Request] | None]
#: Answers whether ``(api_version, kind)`` is namespaced (usually via the client's REST mapper).
ScopeResolver = Callable[[str, str], Awaitable[bool]]


class RequestQueue(Protocol):
    """Where handlers put requests (a :class:`~setpoint.controller.workqueue.WorkQueue`)."""

    def add(self, key: Request) -> None:
        """Queue one request."""
        ...


class Handler:
    """Maps cache events to requests; the base class enqueues nothing.

    ``prepare`` runs once before the source starts delivering events, for handlers that need to
    look something up first (e.g. whether the owner kind is namespaced).
    """

    async def prepare(self, resolve_scope: ScopeResolver | None) -> None:
        """Called once by the source before events flow."""

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        """An object was added (or listed initially)."""

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        """An object changed."""

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        """An object was deleted (or vanished during a relist)."""

    def on_generic(self, obj: CachedObject, queue: RequestQueue) -> None:
        """A generic event from a custom source."""


class EnqueueRequestForObject(Handler):
    """Enqueues the key of the event's object itself."""

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        queue.add(obj.key)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        queue.add(new.key)

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        queue.add(obj.key)

    def on_generic(self, obj: CachedObject, queue: RequestQueue) -> None:
        queue.add(obj.key)


class EnqueueRequestForOwner(Handler):
    """Enqueues the owner of the event's object, found through its ``ownerReferences``.

    Only references whose kind equals ``owner_kind`` and whose API group equals the group of
    ``owner_api_version`` count (the version may differ). With ``only_controller`` (the default,
    as for ``owns``) only the reference marked ``controller: true`` is followed.

    The request's namespace is the child's namespace when the owner kind is namespaced and empty
    when it is cluster-scoped. ``namespaced`` states which; if None it is looked up through the
    source's scope resolver in :meth:`prepare` (falling back to "namespaced when the child is").
    """

    def __init__(
        self,
        owner_api_version: str,
        owner_kind: str,
        *,
        only_controller: bool = True,
        namespaced: bool | None = None,
    ) -> None:
        if not owner_kind:
            raise ValueError("EnqueueRequestForOwner: owner_kind must not be empty")
        self.owner_api_version = owner_api_version
        self.owner_kind = owner_kind
        self.owner_group = parse_api_version(owner_api_version).group
        self.only_controller = only_controller
        self.namespaced = namespaced

    async def prepare(self, resolve_scope: ScopeResolver | None) -> None:
        if self.namespaced is None and resolve_scope is not None:
            try:
                self.namespaced = await resolve_scope(self.owner_api_version, self.owner_kind)
            except Exception as exc:  # an unknown owner kind must not stop the child watch
                logger.warning(
                    "cannot tell whether owner kind %s %s is namespaced (%s); assuming it is "
                    "namespaced when the child is",
                    self.owner_api_version,
                    self.owner_kind,
                    exc,
                )

    def owners_of(self, obj: CachedObject) -> list[Request]:
        """The requests for ``obj``'s matching owner references."""
        result: list[Request] = []
        for ref in obj.owner_references:
            if self.only_controller and not ref.controller:
                continue
            if ref.kind != self.owner_kind or not ref.name:
                continue
            if _group_of(ref.api_version) != self.owner_group:
                continue
            namespaced = self.namespaced if self.namespaced is not None else bool(obj.namespace)
            result.append(ObjectKey(obj.namespace if namespaced else None, ref.name))
        return result

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        for request in self.owners_of(obj):
            queue.add(request)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        for request in self.owners_of(old):
            queue.add(request)
        for request in self.owners_of(new):
            queue.add(request)  # duplicates collapse in the queue

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        for request in self.owners_of(obj):
            queue.add(request)

    def on_generic(self, obj: CachedObject, queue: RequestQueue) -> None:
        for request in self.owners_of(obj):
            queue.add(request)


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class EnqueueRequestsFromMapFunc(Handler):
    """Enqueues whatever ``map_fn(obj)`` returns (for updates: for the old and the new object).

    A map function that raises is logged and produces no requests; it never breaks the watch.
    """

    def __init__(self, map_fn: MapFunction) -> None:
        if not callable(map_fn):
            raise TypeError(f"EnqueueRequestsFromMapFunc: map_fn must be callable, got {map_fn!r}")
        self.map_fn = map_fn

    def _enqueue(self, obj: CachedObject, queue: RequestQueue) -> None:
        try:
            requests = self.map_fn(obj)
            if requests is None:
                return
            for request in requests:
                if not isinstance(request, ObjectKey):
                    raise TypeError(
                        f"map function returned {request!r}; expected Request(namespace, name)"
                    )
                queue.add(request)
        except Exception:
            logger.exception("map function %r failed for %r", self.map_fn, obj)

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(old, queue)
        self._enqueue(new, queue)

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)

    def on_generic(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)
