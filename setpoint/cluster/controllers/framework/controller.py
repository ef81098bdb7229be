"""Declaring a controller: the kinds it watches, how their changes map to keys, ``reconcile``.

A subclass names itself (``name = "replicaset"`` gives the upstream identity
``system:serviceaccount:kube-system:replicaset-controller``, field manager
``kube-controller-manager`` and Event source ``replicaset-controller``), lists its
:class:`Watch` declarations, and implements :meth:`Controller.reconcile` for one key. The
reconcile reads ``self.access`` (cache) and writes through it; it returns a delay in seconds to
be called again for the same key on the cluster clock, or None. An exception requeues the key
with backoff; a 409 (a stale write) is retried the same way, as upstream controllers do, and so
is a delay of 0 or less ("again at once"), like controller-runtime's ``Requeue: true``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from setpoint.cluster.apiserver.http.pod_endpoints import PodRuntime
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess, Identity
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.framework.work_queue import WorkQueue
from setpoint.cluster.controllers.workload_context import WriteError

log = logging.getLogger(__name__)

#: Maps a changed object to the keys to reconcile.
KeyMapper = Callable[[Object], Iterable[ObjectKey]]


def own_key(obj: Object) -> Iterable[ObjectKey]:
    """The object's own key (for the controller's primary kind)."""
    return (key_of(obj),)


def controller_owner(kind: str, api_group: str = "") -> KeyMapper:
    """Maps a child to the key of its controller owner of ``kind`` (ownerReference with
    ``controller: true``), in the child's namespace; ``api_group`` '' accepts any group."""

    def keys(obj: Object) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if not ref.get("controller") or ref.get("kind") != kind:
                continue
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            if api_group and group != api_group:
                continue
            return (ObjectKey(meta.get("namespace") or "", ref.get("name", "")),)
        return ()

    return keys


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true``, or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


@dataclass(frozen=True, slots=True)
class Watch:
    """A resource a controller watches and how its changes become keys."""

    resource: str
    to_keys: KeyMapper = own_key
    #: The key mapper reads only apiVersion, kind and metadata (the informer may keep no more).
    metadata_only: bool = False


class Controller:
    """Base class of the built-in controllers (see the module docstring)."""

    #: Upstream's controller name, e.g. ``replicaset`` (gives identity and Event source).
    name: ClassVar[str] = ""
    #: Keys reconciled concurrently (never the same key twice at once).
    workers: ClassVar[int] = 1

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        self.access = access
        self.options = options
        self.queue: WorkQueue[ObjectKey] = WorkQueue(access.clock, options.retry_clock)
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def identity(cls) -> Identity:
        """Who this controller writes and records Events as."""
        return Identity.controller(cls.name)

    def watches(self) -> list[Watch]:
        """The resources watched (the first is usually the primary kind)."""
        return []

    def namespace_objects(self) -> list[tuple[str, str]]:
        """``(resource, name)`` of the objects this controller keeps in every namespace."""
        return []

    async def start(self) -> None:
        """Called once before the workers start (create bootstrap objects here)."""

    def pod_runtime(self) -> PodRuntime | None:
        """What serves ``pods/log`` (the kubelet returns itself); None for other controllers."""
        return None

    async def reconcile(self, key: ObjectKey) -> float | None:
        """Bring the object at ``key`` to its desired state; a delay asks to be called again."""
        return None

    # -- queueing -----------------------------------------------------------------------

    def enqueue(self, key: ObjectKey) -> None:
        """Reconcile ``key`` soon."""
        self.queue.add(key)

    def enqueue_after(self, key: ObjectKey, delay: float) -> None:
        """Reconcile ``key`` after ``delay`` seconds of the cluster clock."""
        self.queue.add_after(key, delay)

    def handler_for(self, watch: Watch) -> Callable[[Object | None, Object | None], None]:
        """The informer handler that enqueues the keys of a watched change."""

        def handle(new: Object | None, old: Object | None) -> None:
            if new is not None:
                for key in watch.to_keys(new):
                    self.queue.add(key)
            if old is not None:
                for key in watch.to_keys(old):
                    self.queue.add(key)

        return handle

    # -- running ------------------------------------------------------------------------

    def run(self) -> None:
        """Start the workers."""
        loop = asyncio.get_running_loop()
        for index in range(max(1, self.workers)):
            self._tasks.append(
                loop.create_task(self._work(), name=f"controller-{self.name}-{index}")
            )

    async def stop(self) -> None:
        """Stop the workers (an interrupted reconcile is abandoned)."""
        self.queue.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                delay = await self.reconcile(key)
            except asyncio.CancelledError:
                raise
            except WriteError as exc:
                log.debug("%s: %s: %s (%d), retrying", self.name, key, exc.message, exc.code)
                self.queue.add_rate_limited(key)
            except Exception:
                log.exception("%s controller: reconciling %s failed", self.name, key)
                self.queue.add_rate_limited(key)
            else:
                if delay is not None and delay <= 0:
                    # "Again at once" is rate limited, as controller-runtime's Requeue: a
                    # reconcile that keeps asking must not monopolise the server's loop.
                    self.queue.add_rate_limited(key)
                else:
                    self.queue.forget(key)
                    if delay is not None:
                        self.queue.add_after(key, delay)
            finally:
                self.queue.done(key)
