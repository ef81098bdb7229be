"""The reflector: keeps a store equal to the API server's view of one collection.

The loop, as client-go and kube-rs run it:

1. **List** the collection page by page (``limit=500``), decoding each page in slices so the
   event loop is never held for long, then make the store equal to the result. On the first
   list every object is an add (``is_initial_list=True``); on a relist the result is *diffed*
   against the store, so objects that changed while we were not watching are updates and those
   that vanished are deletes (tombstones): nothing is lost and nothing is delivered twice.
2. **Watch** from the list's resourceVersion with bookmarks on, with a server-side timeout
   randomised in [5, 10] minutes (client-go's spread, so reconnects of many informers do not
   line up). Every event and bookmark advances the last seen resourceVersion.
3. When the stream ends normally (server timeout) → watch again from the last resourceVersion.
   When the server says the version is too old (HTTP 410, or an ERROR event with code 410) →
   relist (step 1). On any other error → wait (exponential backoff with jitter, 0.8 s → 30 s)
   and watch again; if listing itself fails, list again after the backoff. A watch that ends
   at once without a line counts as an error (no hot loop against a broken proxy); a watch
   that delivers a line resets the backoff (the server is healthy again).
4. A stream that stays **silent** longer than ``idle_timeout`` (no event, no bookmark) is cut
   and re-watched: a half-dead connection (NAT timeout, a proxy dropping the flow) otherwise
   looks like a quiet resource forever, the "zombie watch" that Kopf users report.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Protocol

from setpoint.api.gvk import ResourceInfo
from setpoint.cache.backoff import Backoff
from setpoint.cache.cached_object import CachedObject, ObjectDecoder
from setpoint.cache.handlers import HandlerRegistry
from setpoint.cache.loop_slicer import LoopSlicer
from setpoint.cache.store import Delta, DeltaType, MutableStore
from setpoint.cache.wire import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    MODIFIED,
    decode_list_page,
    decode_status,
    decode_watch_event,
    decode_watch_event_fields,
    object_key_of,
    resource_version_of,
)
from setpoint.client.errors import ApiError, Forbidden, Gone, error_from_status

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_PAGE_SIZE",
    "ListWatchClient",
    "Reflector",
    "ReflectorOptions",
    "ShortWatchError",
    "WatchStalled",
    "describe_resource",
]

logger = logging.getLogger(__name__)

#: Items per list page: what client-go reflectors, kube-rs and kubectl use.
DEFAULT_PAGE_SIZE: Final = 500
#: A watch silent this long is cut. The API server sends a bookmark about once a minute to
#: watchers that ask for them, so two missed bookmarks mean a dead connection, not a quiet
#: resource. Against a server without bookmarks this only costs one cheap re-watch (from the
#: last resourceVersion, no relist) per two quiet minutes.
DEFAULT_IDLE_TIMEOUT_S: Final = 120.0
#: Server-side watch timeout range in seconds: client-go's minWatchTimeout (5 min) times [1, 2).
DEFAULT_WATCH_TIMEOUT_RANGE_S: Final = (300, 600)
#: Longest stretch of decoding or dispatching before yielding to the event loop. Well under the
#: 100 ms a stalled loop starts to hurt (probes, leases, other watches).
DEFAULT_SLICE_S: Final = 0.02
#: A watch that ends this soon without a single line is a failure, not a normal end (client-go's
#: "very short watch"): a proxy or server that closes every watch at once would otherwise be
#: re-watched in a hot loop.
MIN_WATCH_DURATION_S: Final = 1.0
#: The longest a watch's idle deadline goes without being pushed back while lines come.
DEADLINE_PUSH_INTERVAL_S: Final = 1.0


class WatchStalled(Exception):
    """The server did not even answer a watch request within the idle timeout."""


class ShortWatchError(Exception):
    """The server ended a watch at once without sending anything (retried with backoff)."""


class ListWatchClient(Protocol):
    """What the reflector needs from a client: raw list pages and raw watch lines.

    ``setpoint.client.Client`` provides it; anything else that does (a test double replaying
    recorded bytes) works as well.
    """

    async def list_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> bytes:
        """One list response body."""
        ...

    def watch_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
        timeout_seconds: int | None = None,
        send_initial_events: bool = False,
        announce_open: bool = False,
    ) -> AsyncIterator[bytes]:
        """Watch event lines until the server ends the stream (with ``announce_open``, an
        empty line first, once the server has accepted the watch)."""
        ...


@dataclass(frozen=True, slots=True)
class ReflectorOptions:
    """Tuning of a reflector; the defaults are those of client-go/kube-rs (see the constants)."""

    page_size: int = DEFAULT_PAGE_SIZE
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S
    watch_timeout_range: tuple[int, int] = DEFAULT_WATCH_TIMEOUT_RANGE_S
    slice_seconds: float = DEFAULT_SLICE_S
    backoff: Callable[[], Backoff] = Backoff

    def __post_init__(self) -> None:
        if self.page_size <= 0:
            raise ValueError(f"page_size must be > 0; got {self.page_size}")
        if self.idle_timeout <= 0:
            raise ValueError(f"idle_timeout must be > 0 seconds; got {self.idle_timeout}")
        low, high = self.watch_timeout_range
        if not 0 < low <= high:
            raise ValueError(
                f"watch_timeout_range must be (low, high) with 0 < low <= high; got {low, high}"
            )


def describe_resource(resource: ResourceInfo, namespace: str | None = None) -> str:
    """A short human name, e.g. ``deployments.apps/v1 (Deployment) in namespace "ns"``."""
    plural = f"{resource.resource}.{resource.group}" if resource.group else resource.resource
    text = f"{plural}/{resource.version} ({resource.kind})"
    if namespace:
        text += f' in namespace "{namespace}"'
    return text


class Reflector:
    """Lists and watches one collection (optionally one namespace) into a :class:`MutableStore`.

    Deltas are delivered to ``handlers`` right after each store change. ``on_synced`` is called
    after every completed list (initial or relist) with the number of objects listed.
    """

    def __init__(
        self,
        client: ListWatchClient,
        resource: ResourceInfo,
        store: MutableStore,
        handlers: HandlerRegistry,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        decoder: ObjectDecoder | None = None,
        options: ReflectorOptions | None = None,
        on_synced: Callable[[int], None] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.store = store
        self.handlers = handlers
        self.namespace = namespace if resource.namespaced else None
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.decoder = decoder or store.decoder
        self.options = options or ReflectorOptions()
        self._on_synced = on_synced
        self._backoff = self.options.backoff()
        self.description = describe_resource(resource, self.namespace)
        #: The last resourceVersion seen (list, event or bookmark); "" before the first list.
        self.last_resource_version = ""
        #: The error of the last failed list or watch attempt (None once one succeeds).
        self.last_error: BaseException | None = None
        #: The error of the last failed list attempt (None once a list succeeds).
        self.last_list_error: BaseException | None = None
        self.has_synced = False
        self.synced = asyncio.Event()
        #: Monotonic time of the first list/watch failure since the last success (None while
        #: the reflector lists and watches fine): what the manager's probes look at.
        self.failing_since: float | None = None
        self._failing_before_open: float | None = None
        #: Counters, for observability and tests.
        self.lists = 0
        self.watches = 0
        self._needs_list = True
        # Whether an event or bookmark arrived since the last list (see _recover).
        self._progress_since_list = True

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled."""
        while True:
            try:
                if self._needs_list:
                    await self._list_and_sync()
                await self._watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._recover(exc)

    def failing_for(self, now: float) -> float:
        """Seconds this reflector has been unable to list or watch (0.0 while it can)."""
        return 0.0 if self.failing_since is None else max(0.0, now - self.failing_since)

    def _succeeded(self) -> None:
        if self.failing_since is not None:
            logger.info("%s: listing and watching again", self.description)
        self.failing_since = None

    async def _recover(self, exc: Exception) -> None:
        listing = self._needs_list
        if isinstance(exc, ShortWatchError) and self._failing_before_open is not None:
            # Accepted and closed at once: the outage goes on (a broken proxy must not look
            # healthy for an instant every few seconds, or the probes would never fail).
            self.failing_since = self._failing_before_open
        if self.failing_since is None:
            self.failing_since = asyncio.get_running_loop().time()
        self.last_error = exc
        if listing:
            self.last_list_error = exc
        elif _needs_relist(exc):
            self._needs_list = True
            if self._progress_since_list:
                # Our resourceVersion fell out of the server's history: relist at once.
                logger.info("%s: %s; relisting", self.description, _describe_error(exc))
                return
            # Expired again right after a list: the server's history is too short to keep up.
            # Relisting at once would loop hot, so back off as for any other failure.
        delay = self._backoff.next_delay()
        logger.warning(
            "%s: %s failed (%s); retrying in %.1fs",
            self.description,
            "list" if listing else "watch",
            _describe_error(exc),
            delay,
        )
        await asyncio.sleep(delay)

    # -- list --------------------------------------------------------------------------------

    async def _list_and_sync(self) -> None:
        slicer = LoopSlicer(self.options.slice_seconds)
        objects, resource_version, unreadable = await self._list(slicer)
        initial = not self.has_synced
        deltas = await self._diff(objects, slicer, unreadable)
        del objects
        await self._commit(deltas, slicer, initial=initial)
        self.last_resource_version = resource_version
        self._needs_list = False
        self._progress_since_list = False
        self.last_error = self.last_list_error = None
        self._succeeded()
        self.lists += 1
        count = len(self.store) if self.namespace is None else self.store.count(self.namespace)
        logger.debug(
            "%s: listed %d objects at resourceVersion %s", self.description, count, resource_version
        )
        if not self.has_synced:
            self.has_synced = True
            self.synced.set()
        if self._on_synced is not None:
            self._on_synced(count)

    async def _list(
        self, slicer: LoopSlicer
    ) -> tuple[list[CachedObject], str, set[tuple[str, str]]]:
        """The listed objects, the list's resourceVersion, and the keys of unreadable items."""
        objects: list[CachedObject] = []
        unreadable: set[tuple[str, str]] = set()
        resource_version = ""
        continue_token: str | None = None
        decode = self.decoder.decode
        while True:
            body = await self.client.list_raw(
                self.resource,
                self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                limit=self.options.page_size,
                continue_token=continue_token,
            )
            page = decode_list_page(body)
            del body
            # Every page of a paginated list carries the snapshot's resourceVersion.
            resource_version = page.metadata.resource_version or resource_version
            for item in page.items or ():
                try:
                    objects.append(decode(item))
                except Exception as exc:
                    # It exists: keep what the store has rather than report it deleted.
                    key = object_key_of(item)
                    if key is not None:
                        unreadable.add(key)
                    logger.error("%s: skipping a listed object: %s", self.description, exc)
                if slicer.due():
                    await slicer.yield_now()
            continue_token = page.metadata.continue_ or None
            if continue_token is None:
                return objects, resource_version, unreadable

    async def _diff(
        self, objects: list[CachedObject], slicer: LoopSlicer, unreadable: set[tuple[str, str]]
    ) -> list[Delta]:
        # Nothing else writes this scope meanwhile: this reflector is its only writer.
        deltas: list[Delta] = []
        for delta in self.store.iter_diff(objects, self.namespace, keep=unreadable):
            deltas.append(delta)
            if slicer.due():
                await slicer.yield_now()
        return deltas

    async def _commit(self, deltas: list[Delta], slicer: LoopSlicer, *, initial: bool) -> None:
        deliver = self.handlers.deliver
        commit = self.store.commit
        for delta in deltas:
            commit(delta)
            deliver(delta, is_initial_list=initial and delta.type is DeltaType.ADD)
            if slicer.due():
                # Each commit+deliver pair is atomic, so readers and late handlers that run in
                # between see a consistent store (one object at a time, as with watch events).
                await slicer.yield_now()

    # -- watch -------------------------------------------------------------------------------

    async def _watch(self) -> None:
        low, high = self.options.watch_timeout_range
        stream = self.client.watch_raw(
            self.resource,
            self.namespace,
            resource_version=self.last_resource_version or None,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            allow_bookmarks=True,
            timeout_seconds=random.randint(low, high),
            announce_open=True,
        )
        self.watches += 1
        try:
            await self._consume(stream)
        finally:
            await _close(stream)

    async def _consume(self, stream: AsyncIterator[bytes]) -> None:
        idle_timeout = self.options.idle_timeout
        loop = asyncio.get_running_loop()
        started = loop.time()
        received = False
        opened = False
        # One deadline for the whole stream, pushed back as lines come (cheaper than a new
        # timeout per event), at most every tenth of idle_timeout (and once a second): each push
        # replaces a timer, and a burst of events would replace thousands. The stream is thus
        # declared idle after 90-100 % of idle_timeout without a line. Only the await on the
        # stream can be interrupted by it.
        deadline = asyncio.timeout(idle_timeout)
        push_interval = min(DEADLINE_PUSH_INTERVAL_S, idle_timeout / 10)
        pushed = started
        try:
            async with deadline:
                async for line in stream:
                    now = loop.time()
                    if now - pushed >= push_interval:
                        deadline.reschedule(now + idle_timeout)
                        pushed = now
                    if not line:
                        opened = True
                        self._failing_before_open = self.failing_since
                        self._succeeded()  # the server accepted the watch
                        continue
                    # isspace: the same test as strip() without copying the line.
                    if not line.isspace():
                        self._handle_line(line)
                        if not received:
                            # The server works again: a later blip starts from a short delay,
                            # not from the one an earlier outage escalated to.
                            received = True
                            self._backoff.reset()
                        self.last_error = None
                        self._progress_since_list = True
        except TimeoutError:
            if not deadline.expired():
                raise
            if not opened and not received:
                # Not even the response headers came: the connection is stuck, not quiet.
                raise WatchStalled(
                    f"no answer to the watch request within {idle_timeout:g}s"
                ) from None
            logger.info(
                "%s: no event or bookmark for %.0fs; reconnecting the watch",
                self.description,
                idle_timeout,
            )
            return
        lasted = loop.time() - started
        if not received and lasted < MIN_WATCH_DURATION_S:
            raise ShortWatchError(
                f"very short watch: the server ended it after {lasted:.3f}s without any event"
            )
        logger.debug("%s: watch stream ended; watching again", self.description)

    def _handle_line(self, line: bytes) -> None:
        # The usual event (an object with standard metadata) is decoded in one pass over the
        # line plus one over its metadata; anything else, errors included, takes the general
        # path below, which decodes the line again.
        fields = decode_watch_event_fields(line)
        if fields is not None:
            event_type = fields.type
            if event_type in (MODIFIED, ADDED, DELETED):
                obj = self.decoder.decode_fields(fields.object)
                if obj is not None:
                    self._apply(event_type, obj)
                    return
        self._handle_general_line(line)

    def _handle_general_line(self, line: bytes) -> None:
        event = decode_watch_event(line)
        if event.type == ERROR:
            status = decode_status(event.object) or {
                "message": f"watch ERROR event without a Status: {line[:200]!r}"
            }
            raise error_from_status(status)
        if event.type == BOOKMARK:
            resource_version = resource_version_of(event.object)
            if resource_version:
                self.last_resource_version = resource_version
            return
        try:
            obj = self.decoder.decode(event.object)
        except Exception as exc:
            # Skipping is the lesser evil: retrying would replay the same event forever.
            resource_version = resource_version_of(event.object)
            logger.error(
                "%s: skipping %s event at resourceVersion %s: %s",
                self.description,
                event.type,
                resource_version or "?",
                exc,
            )
            if resource_version:
                self.last_resource_version = resource_version
            return
        self._apply(event.type, obj)

    def _apply(self, event_type: str, obj: CachedObject) -> None:
        """Store one ADDED/MODIFIED/DELETED object, note its version, tell the handlers."""
        delta = self.store.apply(event_type, obj)
        resource_version = obj.resource_version
        if resource_version:
            self.last_resource_version = resource_version
        if delta is not None:
            self.handlers.deliver(delta)


async def _close(stream: AsyncIterator[bytes]) -> None:
    aclose: Callable[[], Awaitable[object]] | None = getattr(stream, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception as exc:  # a broken stream may fail to close; it is being dropped anyway
        logger.debug("closing a watch stream failed: %s", exc)


def _needs_relist(exc: BaseException) -> bool:
    """410 Gone/Expired, or a resourceVersion the server says is too large (a server restored
    from an older backup): in both cases only a fresh list can resynchronise."""
    if isinstance(exc, Gone):
        return True
    if isinstance(exc, ApiError):
        return any(cause.get("reason") == "ResourceVersionTooLarge" for cause in exc.causes)
    return False


def _describe_error(exc: BaseException) -> str:
    if isinstance(exc, Forbidden) and exc.missing_permission:
        missing = exc.missing_permission
        return f"{exc.reason} ({exc.code}): {exc.message}; missing permission: {missing}"
    if isinstance(exc, ApiError):
        return f"{exc.reason or 'error'} ({exc.code}): {exc.message}"
    return f"{type(exc).__name__}: {exc}"
