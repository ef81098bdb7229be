"""The garbage collector controller (``pkg/controller/garbagecollector``, 1.32 behaviour)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Final

from setpoint.cluster.apiserver.registry.object_operations import (
    FINALIZER_FOREGROUND,
    FINALIZER_ORPHAN,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess, Identity
from setpoint.cluster.controllers.framework.controller import Controller
from setpoint.cluster.controllers.framework.informers import Informer, Object
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.framework.work_queue import WorkQueue
from setpoint.cluster.controllers.garbage_collector.dependency_graph import (
    DependencyGraph,
    Item,
    owner_uids,
)
from setpoint.cluster.controllers.workload_context import WriteError

log = logging.getLogger(__name__)

_new_tuple = tuple.__new__

#: Upstream's GC ignores Events (``garbagecollector/config`` ignoredResources).
IGNORED_ROOTS: Final = frozenset({"/core/events/"})
#: After a CRD changes, look for newly served resources after these delays (seconds): the
#: registry is updated by the CRD write's own reaction, which may trail its watch event.
RESCAN_DELAYS: Final = (0.0, 0.2, 1.0)


class GarbageCollector(Controller):
    """Deletes dependents of absent owners; finishes Foreground and Orphan deletions."""

    name: ClassVar[str] = "garbagecollector"
    workers: ClassVar[int] = 2

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        super().__init__(access, options)
        self.graph = DependencyGraph()
        self.items: WorkQueue[Item] = WorkQueue(access.clock, options.retry_clock)
        self._watched: set[str] = set()
        self._item_tasks: list[asyncio.Task[None]] = []

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:generic-garbage-collector",
            field_manager="kube-controller-manager",
            component="garbage-collector-controller",
        )

    async def start(self) -> None:
        crds = self.access.informers.informer("apiextensions.k8s.io/customresourcedefinitions")
        crds.add_handler(lambda new, old: self._schedule_rescan())
        self._rescan()

    def _schedule_rescan(self) -> None:
        loop = asyncio.get_running_loop()
        for delay in RESCAN_DELAYS:
            loop.call_later(delay, self._rescan)

    def _rescan(self) -> None:
        """Watch every served resource not watched yet (new CRDs' resources appear here)."""
        informers = self.access.informers
        for served in informers.registry:
            root = served.storage_root
            if root in self._watched or root in IGNORED_ROOTS or "delete" not in served.verbs:
                continue
            self._watched.add(root)
            # Owner references, finalizers and uids are all it reads: metadata is enough.
            informers.informer_for(served, metadata_only=True).add_handler(self._handler(root))

    def _handler(self, root: str) -> Callable[[Object | None, Object | None], None]:
        def handle(new: Object | None, old: Object | None) -> None:
            obj = new if new is not None else old
            assert obj is not None
            meta = obj.get("metadata") or {}
            # The namespace interned: every object of the graph keeps its item. (tuple.__new__
            # is Item(...) without the Python-level __new__ of a NamedTuple.)
            item = _new_tuple(
                Item, (root, sys.intern(meta.get("namespace") or ""), meta.get("name") or "")
            )
            if new is None:
                self.graph.forget(item, obj)
                # Its dependents may now be dangling; owners waiting on it may finish.
                for dependent in self.graph.dependents(str(meta.get("uid", ""))):
                    self.items.add(dependent)
                for owner in self.graph.items_of(owner_uids(obj)):
                    self.items.add(owner)
                return
            self.graph.observe(item, new)
            if "deletionTimestamp" not in meta and not meta.get("ownerReferences"):
                return  # nothing to collect, nor an owner's deletion to follow
            if _needs_attention(new, old):
                self.items.add(item)
                for owner in self.graph.items_of(owner_uids(new)):
                    if old is not None and _deleting(new):
                        self.items.add(owner)
            if old is not None and _deleting(new) and not _deleting(old):
                for owner in self.graph.items_of(owner_uids(new)):
                    self.items.add(owner)

        return handle

    # -- running ------------------------------------------------------------------------

    def run(self) -> None:
        loop = asyncio.get_running_loop()
        for index in range(self.workers):
            self._item_tasks.append(loop.create_task(self._work_items(), name=f"gc-{index}"))

    async def stop(self) -> None:
        self.items.close()
        for task in self._item_tasks:
            task.cancel()
        for task in self._item_tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._item_tasks.clear()

    async def _work_items(self) -> None:
        while True:
            item = await self.items.get()
            try:
                await self.process(item)
            except asyncio.CancelledError:
                raise
            except WriteError as exc:
                log.debug("garbage collector: %s: %s", item, exc.message)
                self.items.add_rate_limited(item)
            except Exception:
                log.exception("garbage collector: processing %s failed", item)
                self.items.add_rate_limited(item)
            else:
                self.items.forget(item)
            finally:
                self.items.done(item)

    # -- processing ---------------------------------------------------------------------

    def _informer(self, root: str) -> Informer | None:
        for served in self.access.informers.registry:
            if served.storage_root == root:
                return self.access.informers.informer_for(served, metadata_only=True)
        return None

    def _current(self, item: Item) -> tuple[ServedResource, Object] | None:
        informer = self._informer(item.root)
        if informer is None:
            return None
        obj = self.access.read_stored(informer.resource, item.namespace or None, item.name)
        if obj is None:
            return None
        return informer.resource, obj

    async def process(self, item: Item) -> None:
        """Bring one object in line with its owners, or finish its own deletion."""
        current = self._current(item)
        if current is None:
            return
        served, obj = current
        meta = obj["metadata"]
        finalizers = meta.get("finalizers") or []
        if "deletionTimestamp" in meta:
            if FINALIZER_ORPHAN in finalizers:
                await self._orphan_dependents(served, obj)
                return
            if FINALIZER_FOREGROUND in finalizers:
                await self._process_deleting_dependents(served, obj)
                return
        if meta.get("ownerReferences"):
            await self._attempt_to_delete(served, obj)

    async def _orphan_dependents(self, served: ServedResource, owner: Object) -> None:
        uid = owner["metadata"]["uid"]
        for dependent in self.graph.dependents(uid):
            current = self._current(dependent)
            if current is None:
                continue
            dep_served, dep = current
            refs = dep["metadata"].get("ownerReferences") or []
            kept = [ref for ref in refs if ref.get("uid") != uid]
            if len(kept) != len(refs):
                await self._set_owner_references(dep_served, dep, kept)
        await self._remove_finalizer(served, owner, FINALIZER_ORPHAN)

    async def _process_deleting_dependents(self, served: ServedResource, owner: Object) -> None:
        uid = owner["metadata"]["uid"]
        blocking = False
        for dependent in self.graph.dependents(uid):
            current = self._current(dependent)
            if current is None:
                continue
            _, dep = current
            for ref in dep["metadata"].get("ownerReferences") or []:
                if ref.get("uid") == uid and ref.get("blockOwnerDeletion"):
                    blocking = True
            if "deletionTimestamp" not in dep["metadata"]:
                self.items.add(dependent)
        if not blocking:
            await self._remove_finalizer(served, owner, FINALIZER_FOREGROUND)

    async def _attempt_to_delete(self, served: ServedResource, obj: Object) -> None:
        meta = obj["metadata"]
        refs: list[dict[str, Any]] = meta.get("ownerReferences") or []
        solid: list[dict[str, Any]] = []
        dangling: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        for ref in refs:
            state = self._owner_state(served, obj, ref)
            if state == "unknown":
                return  # an owner of a kind not served: leave the object alone
            {"solid": solid, "dangling": dangling, "waiting": waiting}[state].append(ref)
        if solid:
            if not dangling and not waiting:
                return
            gone = {ref.get("uid") for ref in dangling + waiting}
            kept = [ref for ref in refs if ref.get("uid") not in gone]
            await self._set_owner_references(served, obj, kept)
            return
        if "deletionTimestamp" in meta:
            return  # already being deleted
        policy = "Foreground" if waiting else "Background"
        try:
            await self.access.delete_in(
                served,
                meta.get("namespace"),
                meta["name"],
                propagation=policy,
                uid=meta.get("uid"),
            )
        except WriteError as exc:
            if exc.code not in (404, 409):
                raise

    def _owner_state(self, served: ServedResource, obj: Object, ref: dict[str, Any]) -> str:
        """``solid``, ``dangling``, ``waiting`` (Foreground-deleting) or ``unknown``."""
        owner_served = self.access.informers.resource_for_kind(
            str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
        )
        if owner_served is None:
            return "unknown"
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        if owner_served.namespaced and not namespace:
            self._invalid_namespace(obj, ref, namespace)
            return "dangling"
        owner = self.access.read_stored(
            owner_served, namespace if owner_served.namespaced else None, str(ref.get("name", ""))
        )
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            elsewhere = self.graph.item_of(str(ref.get("uid", "")))
            if (
                owner_served.namespaced
                and elsewhere is not None
                and elsewhere.namespace != namespace
            ):
                self._invalid_namespace(obj, ref, namespace)
            return "dangling"
        owner_meta = owner["metadata"]
        if "deletionTimestamp" in owner_meta and FINALIZER_FOREGROUND in (
            owner_meta.get("finalizers") or []
        ):
            return "waiting"
        return "solid"

    def _invalid_namespace(self, obj: Object, ref: dict[str, Any], namespace: str) -> None:
        """The Warning upstream records when an owner lives in another namespace."""
        self.access.event(
            obj,
            "Warning",
            "OwnerRefInvalidNamespace",
            f"ownerRef [{ref.get('apiVersion')}/{ref.get('kind')}, namespace: {namespace}, "
            f"name: {ref.get('name')}, uid: {ref.get('uid')}] does not exist in namespace "
            f'"{namespace}"',
        )

    async def _set_owner_references(
        self, served: ServedResource, obj: Object, refs: list[dict[str, Any]]
    ) -> None:
        meta = obj["metadata"]
        try:
            await self.access.patch_in(
                served,
                meta.get("namespace"),
                meta["name"],
                {
                    "metadata": {
                        "ownerReferences": refs or None,
                        "resourceVersion": meta.get("resourceVersion"),
                        "uid": meta.get("uid"),
                    }
                },
            )
        except WriteError as exc:
            if exc.code != 404:
                raise

    async def _remove_finalizer(self, served: ServedResource, obj: Object, finalizer: str) -> None:
        meta = obj["metadata"]
        kept = [f for f in meta.get("finalizers") or [] if f != finalizer]
        try:
            await self.access.patch_in(
                served,
                meta.get("namespace"),
                meta["name"],
                {
                    "metadata": {
                        "finalizers": kept or None,
                        "resourceVersion": meta.get("resourceVersion"),
                    }
                },
            )
        except WriteError as exc:
            if exc.code != 404:
                raise


def _deleting(obj: Object) -> bool:
    return "deletionTimestamp" in (obj.get("metadata") or {})


def _needs_attention(new: Object, old: Object | None) -> bool:
    """Whether a change may call for GC work on the changed object itself."""
    meta = new.get("metadata") or {}
    finalizers = meta.get("finalizers") or []
    if _deleting(new) and (FINALIZER_ORPHAN in finalizers or FINALIZER_FOREGROUND in finalizers):
        return True
    if not meta.get("ownerReferences"):
        return False
    if old is None:
        return True
    old_meta = old.get("metadata") or {}
    return bool(meta.get("ownerReferences") != old_meta.get("ownerReferences"))
