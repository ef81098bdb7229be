"""The runtime controller of one composite or decorator declaration.

Each declaration becomes one setpoint :class:`~setpoint.controller.Controller` (one per parent
resource for a decorator): the parent kind is its primary source; a child's change enqueues the
parent that controls it, and an uncontrolled child enqueues the parents whose selector it matches
(so it can be adopted). Writes go through a :class:`~setpoint.manager.RecordingClient`, so the
events of the controller's own writes (a child applied, the status replaced) wake no sync: only
a change made by someone else does, and the hook is called once per real change.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from setpoint.api.gvk import ObjectKey, ResourceInfo
from setpoint.cache import CachedObject
from setpoint.composite.composite_sync import CompositeSync, SyncEnvironment
from setpoint.composite.related import RelatedResources
from setpoint.composite.spec import ChildType
from setpoint.controller.controller import Controller
from setpoint.controller.handlers import EnqueueRequestForObject, EnqueueRequestsFromMapFunc
from setpoint.controller.predicates import Predicate
from setpoint.controller.reconcile import Result
from setpoint.controller.source import KindSource
from setpoint.manager.manager import Manager
from setpoint.manager.recording_client import RecordingClient

__all__ = [
    "IgnoreStatusChanges",
    "SyncFunction",
    "build_controller",
    "owner_mapper",
    "selector_mapper",
]

log = logging.getLogger("setpoint.composite")

_VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation")


def _without_status(obj: CachedObject) -> dict[str, Any]:
    whole = obj.to_dict()
    whole.pop("status", None)
    metadata = whole.get("metadata") or {}
    for key in _VOLATILE_METADATA:
        metadata.pop(key, None)
    return whole


class IgnoreStatusChanges(Predicate):
    """Drops updates of the parent that change nothing but its status (``ignoreStatusChanges``)."""

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return _without_status(old) != _without_status(new)


#: A declaration's sync: (environment, namespace, name) -> Result.
SyncFunction = Callable[[SyncEnvironment, str | None, str], Awaitable[Result | None]]


class _Reconciler:
    def __init__(self, sync: SyncFunction, manager: Manager, recorder_name: str) -> None:
        self.sync = sync
        self.manager = manager
        self.recorder_name = recorder_name
        self.controller: Controller | None = None
        self._env: SyncEnvironment | None = None

    async def reconcile(self, request: ObjectKey) -> Result | None:
        env = self._env
        if env is None:
            assert self.controller is not None
            client = RecordingClient(
                self.manager.client, self.manager.cache, self.controller.own_writes
            )
            env = self._env = SyncEnvironment(
                client, self.manager.cache, self.manager.get_event_recorder(self.recorder_name)
            )
        return await self.sync(env, request.namespace, request.name)


def owner_mapper(parent: ResourceInfo) -> Callable[[CachedObject], list[ObjectKey]]:
    """Map a child to the parent of kind ``parent`` that controls it."""
    parent_kind, parent_group = parent.kind, parent.group

    def map_child(child: CachedObject) -> list[ObjectKey]:
        reference = child.controller_reference
        if reference is None or reference.kind != parent_kind:
            return []
        if reference.api_version.rpartition("/")[0] != parent_group:
            return []
        return [ObjectKey(child.namespace if parent.namespaced else None, reference.name)]

    return map_child


def selector_mapper(sync: CompositeSync, parents: Any) -> Callable[[CachedObject], list[ObjectKey]]:
    """Map a child to its controlling parent, or, when it has no controller, to every parent
    whose selector it matches (so that it can be adopted). ``parents`` is the parent informer,
    read synchronously."""
    by_owner = owner_mapper(sync.parent)

    def map_child(child: CachedObject) -> list[ObjectKey]:
        if child.controller_reference is not None:
            return by_owner(child)
        namespace = child.namespace if sync.parent.namespaced else None
        result = []
        for parent in parents.store.list(namespace, None):
            try:
                if sync.selector_of(parent.to_dict()).matches(child.labels):
                    result.append(parent.key)
            except Exception:  # a parent without a usable selector claims nothing
                continue
        return result

    return map_child


async def build_controller(
    manager: Manager,
    name: str,
    *,
    parent: ResourceInfo,
    child_types: Sequence[ChildType],
    sync: SyncFunction,
    map_child: Callable[[Any], Callable[[CachedObject], list[ObjectKey]]],
    related: RelatedResources | None = None,
    predicates: Sequence[Predicate] = (),
    ignore_status_changes: bool = False,
    resync_period: float | None = None,
    max_concurrent: int = 1,
) -> Controller:
    """The runtime controller of one declaration (not started; add it to the manager).

    ``map_child(parent_informer)`` makes the map function of the child kinds."""
    cache = manager.cache
    parent_informer = await cache.informer_for(parent.api_version, parent.kind)
    parent_predicates = list(predicates)
    if ignore_status_changes:
        parent_predicates.append(IgnoreStatusChanges())
    sources: list[Any] = [
        KindSource(
            cache, parent.api_version, parent.kind, EnqueueRequestForObject(), parent_predicates
        )
    ]
    mapper = map_child(parent_informer)
    for child_type in child_types:
        sources.append(
            KindSource(
                cache, child_type.api_version, child_type.kind, EnqueueRequestsFromMapFunc(mapper)
            )
        )
    reconciler = _Reconciler(sync, manager, "metacontroller")
    controller = Controller(
        name,
        reconciler,
        sources=sources,
        max_concurrent_reconciles=max_concurrent,
        resync_period=resync_period,
        resync_keys=lambda: [obj.key for obj in parent_informer.store.list(None, None)],
        clock=manager.clock,
        cache_sync_timeout=manager.cache_sync_timeout,
        # A sync applies everything the hook asked for in one go (and requeues itself when it
        # must look again), so its own writes' events would only call the hook for nothing:
        # the opt-in of setpoint.controller.own_writes is safe here, and keeps one hook call
        # per real change.
        ignore_own_writes=True,
    )
    reconciler.controller = controller
    if related is not None:
        rules = related

        async def watch_related(api_version: str, kind: str) -> None:
            def map_related(obj: CachedObject) -> list[ObjectKey]:
                return rules.parents_of((api_version, kind), obj)

            await controller.watch(
                KindSource(cache, api_version, kind, EnqueueRequestsFromMapFunc(map_related))
            )

        related.watch = watch_related
    return controller
