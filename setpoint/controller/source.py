"""Sources: where a controller's events come from.

A source connects an event stream to the controller's work queue through a :class:`Handler`
(event → requests) and predicates (which events count). The usual one is :class:`KindSource`,
a kind watched through the manager's shared cache; :class:`InformerSource` takes an informer you
already have, and :class:`ChannelSource` turns objects you push into an ``asyncio.Queue`` into
generic events (for triggers from outside the cluster). Anything implementing :class:`Source`
can be passed to ``Builder.watches_source`` or ``Controller.watch``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from setpoint.cache.cached_object import CachedObject
from setpoint.controller.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    Handler,
    RequestQueue,
    ScopeResolver,
)
from setpoint.controller.own_writes import OwnWrites
from setpoint.controller.predicates import Predicate, all_pass
from setpoint.controller.trace import ReconcileTrace, TracingQueue
from setpoint.controller.trace.records import Ref
from setpoint.controller.workqueue import PRIORITY_LOW

__all__ = [
    "CacheLike",
    "ChannelSource",
    "InformerLike",
    "InformerSource",
    "KindSource",
    "Source",
]

logger = logging.getLogger(__name__)


class Source(Protocol):
    """An event stream feeding a controller's queue."""

    async def start(self, queue: RequestQueue) -> None:
        """Begin delivering requests to ``queue`` (returns once set up)."""
        ...

    async def wait_for_sync(
        self,
        timeout: float | None,  # noqa: ASYNC109 - the informer contract
    ) -> None:
        """Return once the source has delivered its initial state (raise on timeout)."""
        ...

    async def stop(self) -> None:
        """Stop delivering (idempotent)."""
        ...


class _CacheEventHandler(Protocol):
    def on_add(self, obj: CachedObject, is_initial_list: bool) -> None: ...
    def on_update(self, old: CachedObject, new: CachedObject) -> None: ...
    def on_delete(self, obj: CachedObject) -> None: ...


class InformerLike(Protocol):
    """What a source needs from a shared informer."""

    @property
    def has_synced(self) -> bool:
        """True once the initial list is in the store."""
        ...

    def add_event_handler(self, handler: _CacheEventHandler) -> None:
        """Receive events; replays the current store as adds for late handlers."""
        ...

    def remove_event_handler(self, handler: _CacheEventHandler) -> bool:
        """Stop delivering events to ``handler``."""
        ...

    async def wait_for_sync(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - the informer contract
    ) -> None:
        """Wait for the initial list."""
        ...


class CacheLike(Protocol):
    """What :class:`KindSource` needs from the manager's cache."""

    async def informer_for(
        self, api_version: str, kind: str, *, metadata_only: bool = False
    ) -> InformerLike:
        """The shared informer for a kind (created and started on first use)."""
        ...


class _LowPriority:
    """A queue view that adds at low priority (keys from an initial list)."""

    __slots__ = ("queue",)

    def __init__(self, queue: RequestQueue) -> None:
        self.queue = queue

    def add(self, key: Any) -> None:
        add: Any = self.queue.add
        try:
            add(key, PRIORITY_LOW)
        except TypeError:  # a plain queue without priorities
            add(key)


def _settled(obj: CachedObject) -> bool:
    """Whether an object of an initial list looks handled already (it may wait at low priority).

    An object with a ``metadata.generation`` that has no ``status`` at all, or whose
    ``status.observedGeneration`` is not its generation, has a spec no controller has acted on
    yet: most often one created or changed while the operator was down or starting. It goes in at
    normal priority, ahead of the backlog of settled objects (controller-runtime puts every
    initial-list object at low priority, which makes such objects wait for the whole backlog).
    """
    generation = obj.generation
    if generation is None or obj.is_metadata_only:
        return True  # no generation, or no status to tell (a metadata-only informer)
    status = obj.get("status")
    if not isinstance(status, dict):
        return False
    observed = status.get("observedGeneration")
    return observed is None or observed == generation


def _cause_of(handler: Handler) -> tuple[str, str]:
    """A handler's cause kind (``event``: the object's own key; ``mapping``: keys computed from
    it) and its name as trace records give it."""
    if isinstance(handler, EnqueueRequestForObject):
        return "event", "EnqueueRequestForObject"
    if isinstance(handler, EnqueueRequestsFromMapFunc):
        fn = handler.map_fn
        module = getattr(fn, "__module__", None)
        name = getattr(fn, "__qualname__", None) or repr(fn)
        return "mapping", f"{module}.{name}" if module else name
    if isinstance(handler, EnqueueRequestForOwner):
        return (
            "mapping",
            f"EnqueueRequestForOwner({handler.owner_api_version} {handler.owner_kind})",
        )
    handler_type = type(handler)
    return "mapping", f"{handler_type.__module__}.{handler_type.__qualname__}"


class _Dispatcher:
    """Adapts the cache's event-handler protocol to predicates + a handler + a queue.

    Objects delivered by an informer's initial list go in at low priority unless they look
    unhandled (:func:`_settled`); events that carry exactly the result of the controller's own
    write (``own_writes``, when the controller opted in to ignore_own_writes) are dropped.
    """

    __slots__ = (
        "cause",
        "controller",
        "handler",
        "last_own",
        "low",
        "own_writes",
        "predicate",
        "queue",
        "source",
        "trace",
        "view",
    )

    def __init__(
        self,
        source: str,
        handler: Handler,
        predicate: Predicate | None,
        queue: RequestQueue,
        own_writes: OwnWrites | None = None,
        trace: ReconcileTrace | None = None,
        controller: str = "",
    ) -> None:
        self.source = source
        self.handler = handler
        self.predicate = predicate
        self.queue = queue
        self.low = _LowPriority(queue)
        self.own_writes = own_writes
        #: The reconcile trace (None: off, the default) and the controller it records for.
        self.trace = trace
        self.controller = controller
        self.cause = _cause_of(handler)
        self.view: TracingQueue | None = None
        # The object of the last watch record, whether it was an own write (asked once), and
        # the object as the record names it.
        self.last_own: tuple[CachedObject | None, bool, Ref | None] = (None, False, None)

    def _own(self, obj: CachedObject) -> bool:
        """Whether ``obj`` carries the controller's own write (as its watch record said, when
        it is that record's object; an event held back by own writes is asked again)."""
        seen, own, _ = self.last_own
        if seen is obj:
            return own
        assert self.trace is not None
        return self.trace.is_own(self.controller, obj)

    def _traced(
        self, queue: RequestQueue, obj: CachedObject, event_type: str, own: bool
    ) -> RequestQueue:
        """``queue`` seen through a view that records each key the handler adds (one view per
        dispatcher, set for each event: handlers run one at a time, on the loop)."""
        assert self.trace is not None
        kind, handler_name = self.cause
        view = self.view
        if view is None:
            view = self.view = TracingQueue(self.trace, self.controller, self.queue)
        view.target = queue
        seen, _, ref = self.last_own
        if seen is not obj or ref is None:
            ref = (obj.api_version, obj.kind, obj.namespace, obj.name, None)
        view.cause = (kind, handler_name, ref, event_type)
        view.own_write = own
        return view

    def on_add(self, obj: CachedObject, is_initial_list: bool) -> None:
        if self.trace is not None:
            self.last_own = (obj, *self.trace.watch(self.controller, "ADDED", obj))
        own = self.own_writes
        # is_own first: the usual own event is dropped without building the closure that
        # intercept needs to hold an event (is_own changes nothing when it says False).
        if (
            own is not None
            and not is_initial_list
            and (own.is_own(obj) or own.intercept(obj, lambda: self._on_add(obj, is_initial_list)))
        ):
            return
        self._on_add(obj, is_initial_list)

    def _on_add(self, obj: CachedObject, is_initial_list: bool) -> None:
        try:
            if self.predicate is None or self.predicate.create(obj):
                low = is_initial_list and _settled(obj)
                queue: RequestQueue = self.low if low else self.queue
                if self.trace is not None:
                    queue = self._traced(queue, obj, "ADDED", self._own(obj))
                self.handler.on_create(obj, queue)
        except Exception:
            logger.exception("%s: create event handling failed for %r", self.source, obj)

    def on_update(self, old: CachedObject, new: CachedObject) -> None:
        if self.trace is not None:
            self.last_own = (new, *self.trace.watch(self.controller, "MODIFIED", new))
        own = self.own_writes
        if own is not None and (
            own.is_own(new) or own.intercept(new, lambda: self._on_update(old, new))
        ):
            return
        self._on_update(old, new)

    def _on_update(self, old: CachedObject, new: CachedObject) -> None:
        try:
            if self.predicate is None or self.predicate.update(old, new):
                queue = self.queue
                if self.trace is not None:
                    queue = self._traced(queue, new, "MODIFIED", self._own(new))
                self.handler.on_update(old, new, queue)
        except Exception:
            logger.exception("%s: update event handling failed for %r", self.source, new)

    def on_delete(self, obj: CachedObject) -> None:
        try:
            queue = self.queue
            if self.trace is not None:
                self.last_own = (obj, *self.trace.watch(self.controller, "DELETED", obj))
                queue = self._traced(queue, obj, "DELETED", self._own(obj))
            if self.predicate is None or self.predicate.delete(obj):
                self.handler.on_delete(obj, queue)
        except Exception:
            logger.exception("%s: delete event handling failed for %r", self.source, obj)

    def on_generic(self, obj: CachedObject) -> None:
        try:
            if self.predicate is None or self.predicate.generic(obj):
                queue = self.queue
                if self.trace is not None:
                    view = self._traced(queue, obj, "GENERIC", False)
                    assert isinstance(view, TracingQueue)
                    view.cause = ("external", *view.cause[1:])
                    queue = view
                self.handler.on_generic(obj, queue)
        except Exception:
            logger.exception("%s: generic event handling failed for %r", self.source, obj)


class _HandlerSource:
    """Shared logic of informer-backed sources: predicates + handler on an informer."""

    def __init__(
        self,
        handler: Handler,
        predicates: Sequence[Predicate],
        resolve_scope: ScopeResolver | None,
    ) -> None:
        self.handler = handler
        self.predicates = tuple(predicates)
        self.resolve_scope = resolve_scope
        self.informer: InformerLike | None = None
        self._dispatcher: _Dispatcher | None = None
        #: Set by a controller with ignore_own_writes: its own writes' events are dropped.
        self.own_writes: OwnWrites | None = None
        #: Set by a controller whose manager traces reconciles (with the controller's name).
        self.trace: ReconcileTrace | None = None
        self.controller_name = ""

    async def _resolve_informer(self) -> InformerLike:
        raise NotImplementedError

    async def start(self, queue: RequestQueue) -> None:
        """Prepare the handler, then attach to the informer (which replays its store)."""
        if self._dispatcher is not None:
            raise RuntimeError(f"{self!r} was already started")
        informer = await self._resolve_informer()
        self.informer = informer
        await self.handler.prepare(self.resolve_scope)
        self._dispatcher = _Dispatcher(
            repr(self),
            self.handler,
            all_pass(self.predicates),
            queue,
            self.own_writes,
            self.trace,
            self.controller_name,
        )
        informer.add_event_handler(self._dispatcher)

    async def wait_for_sync(
        self,
        timeout: float | None,  # noqa: ASYNC109 - the informer contract
    ) -> None:
        """Wait for the informer's initial list."""
        if self.informer is None:
            raise RuntimeError(f"{self!r}: wait_for_sync called before start")
        await self.informer.wait_for_sync(timeout)

    async def stop(self) -> None:
        """Detach from the informer (which is shared and lives as long as the cache)."""
        if self.informer is not None and self._dispatcher is not None:
            self.informer.remove_event_handler(self._dispatcher)
            self._dispatcher = None


class InformerSource(_HandlerSource):
    """Events of an informer you already hold, mapped by ``handler`` and filtered by predicates."""

    def __init__(
        self,
        informer: InformerLike,
        handler: Handler,
        predicates: Sequence[Predicate] = (),
        *,
        resolve_scope: ScopeResolver | None = None,
    ) -> None:
        super().__init__(handler, predicates, resolve_scope)
        self._given = informer

    def __repr__(self) -> str:
        return f"InformerSource({self._given!r})"

    async def _resolve_informer(self) -> InformerLike:
        return self._given


class KindSource(_HandlerSource):
    """Events of one kind from the shared cache (controller-runtime's ``source.Kind``)."""

    def __init__(
        self,
        cache: CacheLike,
        api_version: str,
        kind: str,
        handler: Handler,
        predicates: Sequence[Predicate] = (),
        *,
        metadata_only: bool = False,
        resolve_scope: ScopeResolver | None = None,
    ) -> None:
        super().__init__(handler, predicates, resolve_scope)
        self.cache = cache
        self.api_version = api_version
        self.kind = kind
        self.metadata_only = metadata_only

    def __repr__(self) -> str:
        return f"KindSource({self.api_version} {self.kind})"

    async def _resolve_informer(self) -> InformerLike:
        return await self.cache.informer_for(
            self.api_version, self.kind, metadata_only=self.metadata_only
        )


class ChannelSource:
    """Generic events from objects pushed into ``channel`` (an ``asyncio.Queue``)."""

    def __init__(
        self,
        channel: asyncio.Queue[CachedObject],
        handler: Handler,
        predicates: Sequence[Predicate] = (),
    ) -> None:
        self.channel = channel
        self.handler = handler
        self.predicates = tuple(predicates)
        self._task: asyncio.Task[None] | None = None
        #: Set by a controller whose manager traces reconciles (with the controller's name).
        self.trace: ReconcileTrace | None = None
        self.controller_name = ""

    async def start(self, queue: RequestQueue) -> None:
        if self._task is not None:
            raise RuntimeError("ChannelSource was already started")
        await self.handler.prepare(None)
        dispatcher = _Dispatcher(
            "ChannelSource",
            self.handler,
            all_pass(self.predicates),
            queue,
            trace=self.trace,
            controller=self.controller_name,
        )
        self._task = asyncio.create_task(self._pump(dispatcher), name="setpoint-channel-source")

    async def _pump(self, dispatcher: _Dispatcher) -> None:
        while True:
            obj = await self.channel.get()
            dispatcher.on_generic(obj)

    async def wait_for_sync(
        self,
        timeout: float | None,  # noqa: ASYNC109 - the informer contract
    ) -> None:
        """A channel has no initial state."""

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
