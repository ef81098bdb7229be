"""Shared informers: one list+watch, one store, any number of event handlers.

A :class:`SharedInformer` owns a store and the reflector(s) that fill it: one cluster-wide
reflector, or one per namespace when the informer is restricted to a set of namespaces (all
feeding the same store, so readers and handlers see one collection). Handlers added after the
informer has synced first get the current objects replayed as adds (``is_initial_list=True``),
then live events, with nothing missed in between: replay and registration happen in one step on
the event loop.

``wait_for_sync(timeout)`` fails with :class:`~setpoint.cache.errors.CacheSyncTimeout` naming the
resource, and when the last list was refused with 403 it says so and points at RBAC, instead of
the silent hang of controller-runtime #1653.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Final

from setpoint.api.gvk import ResourceInfo
from setpoint.cache.cached_object import ObjectDecoder, Transform
from setpoint.cache.errors import CacheSyncTimeout
from setpoint.cache.gc_freeze import GC_FREEZE_MIN_OBJECTS, request_gc_freeze
from setpoint.cache.handlers import EventHandler, HandlerRegistry
from setpoint.cache.metrics import CACHE_COLLECTOR
from setpoint.cache.recent_writes import RecentWrites
from setpoint.cache.reflector import ListWatchClient, Reflector, ReflectorOptions, describe_resource
from setpoint.cache.store import Delta, DeltaType, IndexFunc, MutableStore, Store
from setpoint.client.errors import ApiError, Forbidden, Unauthorized

__all__ = ["SharedInformer"]

logger = logging.getLogger(__name__)

# How much of a failed list's message goes into a sync-timeout error.
_MAX_CAUSE_CHARS: Final = 300


class SharedInformer:
    """A shared list+watch of one resource, with its store and event handlers.

    ``namespaces`` empty means cluster-wide; otherwise one watch per namespace (ignored for
    cluster-scoped resources). ``label_selector``/``field_selector`` are sent to the server.
    ``metadata_only`` keeps only apiVersion/kind/metadata of each object (the server still sends
    whole objects: the saving is in memory, not bandwidth); ``transform`` and
    ``strip_managed_fields`` are applied before objects are stored (see
    :class:`~setpoint.cache.cached_object.ObjectDecoder`).
    """

    def __init__(
        self,
        client: ListWatchClient,
        resource: ResourceInfo,
        *,
        namespaces: Iterable[str] = (),
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        transform: Transform | None = None,
        strip_managed_fields: bool = True,
        options: ReflectorOptions | None = None,
    ) -> None:
        if isinstance(namespaces, str):
            raise TypeError(
                f"namespaces must be a collection of names, not the string {namespaces!r}"
            )
        self.resource = resource
        self.namespaces: frozenset[str] = (
            frozenset(namespaces) if resource.namespaced else frozenset()
        )
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.metadata_only = metadata_only
        decoder = ObjectDecoder(
            strip_managed_fields=strip_managed_fields,
            metadata_only=metadata_only,
            transform=transform,
        )
        self.decoder = decoder
        #: ``decoder.decode``, bound once (recent writes of this informer all refer to it).
        self.decode = decoder.decode
        self._store = MutableStore(decoder)
        self.description = describe_resource(resource)
        if self.namespaces:
            self.description += f" in namespaces {', '.join(sorted(self.namespaces))}"
        if metadata_only:
            self.description += " (metadata only)"
        self._handlers = HandlerRegistry(self.description)
        scopes: list[str | None] = [*sorted(self.namespaces)] if self.namespaces else [None]
        self.reflectors = [
            Reflector(
                client,
                resource,
                self._store,
                self._handlers,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                decoder=decoder,
                options=options,
                on_synced=self._on_reflector_synced,
            )
            for namespace in scopes
        ]
        self._tasks: list[asyncio.Task[None]] = []
        #: Writes of this process newer than the store (read-your-own-writes; see Cache).
        self.recent_writes = RecentWrites()
        CACHE_COLLECTOR.track(self)

    def observed_version(self, namespace: str | None) -> int:
        """The highest resourceVersion the watch covering ``namespace`` has delivered (0 when
        unknown or not an integer)."""
        for reflector in self.reflectors:
            if reflector.namespace is None or reflector.namespace == namespace:
                text = reflector.last_resource_version
                return int(text) if text.isdigit() else 0
        return 0

    # -- reading -----------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The informer's store (read-only API: get, list, by_index)."""
        return self._store

    @property
    def has_synced(self) -> bool:
        """True once every watch of this informer has completed its initial list."""
        return all(reflector.has_synced for reflector in self.reflectors)

    @property
    def is_running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return bool(self._tasks)

    def failing(self, now: float) -> tuple[float, BaseException | None]:
        """How long (seconds) some watch of this informer has been unable to list or watch,
        and its last error; ``(0.0, None)`` while every watch works. ``now`` is the event
        loop's time."""
        worst = max(self.reflectors, key=lambda reflector: reflector.failing_for(now))
        seconds = worst.failing_for(now)
        return (seconds, worst.last_error) if seconds > 0 else (0.0, None)

    @property
    def last_sync_error(self) -> BaseException | None:
        """The error of the most recent failed list, if some watch has not listed since."""
        for reflector in self.reflectors:
            if reflector.last_list_error is not None:
                return reflector.last_list_error
        return None

    # -- handlers and indexes ----------------------------------------------------------------

    def add_event_handler(self, handler: EventHandler) -> None:
        """Register ``handler``; the objects already stored are replayed to it as adds."""
        self._handlers.add(handler)
        for obj in list(self._store):
            self._handlers.deliver_to(handler, Delta(DeltaType.ADD, obj), is_initial_list=True)

    def remove_event_handler(self, handler: EventHandler) -> bool:
        """Stop delivering events to ``handler``; False if it was not registered."""
        return self._handlers.remove(handler)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Add a store index (built over the objects already stored).

        Adding the same name with the same function again is a no-op (several controllers may
        ask for one index); with another function it raises ``ValueError``.
        """
        if self._store.index_function(name) is fn:
            return
        self._store.add_index(name, fn)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start listing and watching (idempotent). Needs a running event loop."""
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(reflector.run(), name=f"reflector {reflector.description}")
            for reflector in self.reflectors
        ]
        for task in self._tasks:
            task.add_done_callback(self._reflector_done)

    async def stop(self) -> None:
        """Stop watching; the store keeps its last contents."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait_for_sync(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until the initial list is done (:attr:`has_synced`).

        Raises :class:`CacheSyncTimeout` after ``timeout`` seconds, naming the resource and the
        reason of the last failed list (with a hint when RBAC forbids it).
        """
        waits = [reflector.synced.wait() for reflector in self.reflectors]
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*waits)
        except TimeoutError:
            raise self._sync_timeout(timeout) from None

    def _sync_timeout(self, timeout: float | None) -> CacheSyncTimeout:
        pending = [r for r in self.reflectors if not r.has_synced]
        waited = "" if timeout is None else f" after {timeout:g}s"
        message = f"timed out{waited} waiting for the cache of {self.description} to sync"
        if not self._tasks:
            message += " (the informer was never started)"
        cause = next((r.last_list_error for r in pending if r.last_list_error), None)
        failing = next((r for r in pending if r.last_list_error), None)
        if isinstance(cause, Forbidden) and failing is not None:
            where = f' in namespace "{failing.namespace}"' if failing.namespace else " cluster-wide"
            message += (
                f": listing is forbidden (RBAC): {_shorten(cause.message)}; grant the operator's "
                f"service account list and watch on {_plural(self.resource)}{where}"
            )
        elif isinstance(cause, Unauthorized):
            message += f": the API server rejected the credentials: {_shorten(cause.message)}"
        elif isinstance(cause, ApiError):
            message += f": the last list failed: {cause.reason} ({cause.code}): "
            message += _shorten(cause.message)
        elif cause is not None:
            message += f": the last list failed: {type(cause).__name__}: {_shorten(str(cause))}"
        return CacheSyncTimeout(message, resource=self.description, cause=cause)

    def _reflector_done(self, task: asyncio.Task[None]) -> None:
        # Reflectors only end by cancellation; anything else is a bug that must not go unseen.
        if not task.cancelled() and task.exception() is not None:
            logger.error(
                "%s: the reflector stopped unexpectedly; the cache no longer follows the server",
                self.description,
                exc_info=task.exception(),
            )

    def _on_reflector_synced(self, count: int) -> None:
        if count >= GC_FREEZE_MIN_OBJECTS:
            request_gc_freeze()

    def __repr__(self) -> str:
        state = "synced" if self.has_synced else "syncing" if self._tasks else "stopped"
        return f"<SharedInformer {self.description} {state} objects={len(self._store)}>"


def _plural(resource: ResourceInfo) -> str:
    return f"{resource.resource}.{resource.group}" if resource.group else resource.resource


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_CAUSE_CHARS else text[:_MAX_CAUSE_CHARS] + "..."
