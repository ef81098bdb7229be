"""Waking the primary for an event on any descendant, through a chain of owner references.

An operator that owns a Deployment cares about the Deployment's Pods too, but a Pod's controller
reference names a ReplicaSet, not the operator's object. :class:`EnqueueRequestForOwnerChain`
follows the references up from the event's object through cached intermediates
(Pod → ReplicaSet → Deployment) until it reaches the primary kind, and enqueues that key::

    Builder(manager).for_("cache.example.com/v1", "Memcached").owns_through(
        ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("v1", "Pod")
    )

Each intermediate is read from the shared cache (its informer is started by the watch the
builder adds for it), never from the API server: a handler runs inside the informer's dispatch
and must not block. An intermediate that is not cached yet, or whose cached uid differs from the
reference's (a newer object of the same name), ends the walk with no request — the intermediate's
own event, which the builder also watches, wakes the primary once it is cached, so nothing is
missed for long: the reconcile stays level-based.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from setpoint.api.gvk import ObjectKey, parse_api_version
from setpoint.cache.cached_object import CachedObject, OwnerReference
from setpoint.controller.handlers import Handler, RequestQueue, ScopeResolver
from setpoint.controller.reconcile import Request

__all__ = ["EnqueueRequestForOwnerChain", "OwnerLookup"]

#: Reads one cached object: ``(api_version, kind, namespace, name)`` → the object or None.
OwnerLookup = Callable[[str, str, str | None, str], CachedObject | None]


def _controller_ref(obj: CachedObject, group: str, kind: str) -> OwnerReference | None:
    for ref in obj.owner_references:
        if not (ref.controller and ref.kind == kind and ref.name):
            continue
        if parse_api_version(ref.api_version).group == group:
            return ref
    return None


class EnqueueRequestForOwnerChain(Handler):
    """Enqueues the ``owner`` found by following controller references up through ``via``.

    ``via`` lists the intermediate kinds from the event's object upwards, each an
    ``(api_version, kind)`` pair: for a Pod under a Deployment owned by a Memcached,
    ``via=[("apps/v1", "ReplicaSet"), ("apps/v1", "Deployment")]`` and ``owner`` is the
    Memcached kind. Only references marked ``controller: true`` are followed, and a reference
    counts only when its kind and API group match the next link (the version may differ).
    ``lookup`` reads an intermediate from the cache; the builder supplies one backed by the
    informers of the watches it adds for each intermediate.
    """

    def __init__(
        self,
        owner: tuple[str, str],
        via: Sequence[tuple[str, str]],
        lookup: OwnerLookup,
    ) -> None:
        if not owner[1]:
            raise ValueError("EnqueueRequestForOwnerChain: the owner kind must not be empty")
        if not via:
            raise ValueError(
                "EnqueueRequestForOwnerChain: via must name at least one intermediate kind "
                "(for a direct child use EnqueueRequestForOwner)"
            )
        self.owner = owner
        self.via = tuple(via)
        self.lookup = lookup
        self._links = [(parse_api_version(api).group, kind) for api, kind in (*self.via, owner)]
        #: Whether each link (intermediates, then the owner) is namespaced; None: as the child.
        self._namespaced: list[bool | None] = [None] * len(self._links)

    async def prepare(self, resolve_scope: ScopeResolver | None) -> None:
        if resolve_scope is None:
            return
        for index, (api_version, kind) in enumerate((*self.via, self.owner)):
            try:
                self._namespaced[index] = await resolve_scope(api_version, kind)
            except Exception:  # unknown kind: assume it lives where the child does
                self._namespaced[index] = None

    def owners_of(self, obj: CachedObject) -> list[Request]:
        """The primary's request for ``obj``, or none when a link is not cached (yet)."""
        current = obj
        for index, (group, kind) in enumerate(self._links):
            ref = _controller_ref(current, group, kind)
            if ref is None:
                return []
            namespaced = self._namespaced[index]
            if namespaced is None:
                namespaced = bool(current.namespace)
            namespace = current.namespace if namespaced else None
            if index == len(self._links) - 1:
                return [ObjectKey(namespace, ref.name)]
            api_version, _ = self.via[index]
            parent = self.lookup(api_version, kind, namespace, ref.name)
            if parent is None or (ref.uid and parent.uid and parent.uid != ref.uid):
                return []
            current = parent
        return []

    def _enqueue(self, obj: CachedObject, queue: RequestQueue) -> None:
        for request in self.owners_of(obj):
            queue.add(request)

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(old, queue)
        self._enqueue(new, queue)  # duplicates collapse in the queue

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)

    def on_generic(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._enqueue(obj, queue)
