"""The event recorder: Kubernetes Events about the objects a controller manages.

``recorder.normal(obj, "Created", "created deployment web")`` or ``recorder.warning(...)`` never
blocks and never raises: events go into a bounded in-memory queue drained by one background task,
and are dropped (with a log line) when the API server cannot keep up. Recording is best effort,
as in client-go, which also sets the retries: a send that cannot reach the API server is tried
again (up to 12 times, 10 s apart); one the server rejects is logged and dropped.

Events are written as ``events.k8s.io/v1`` (``regarding``, ``note``, ``reason``, ``type``,
``action``, ``reportingController``, ``reportingInstance``, ``eventTime``), falling back to
``core/v1`` Events when the server does not serve that group.

Repeats are aggregated like client-go's events broadcaster: the same regarding object, reason,
type, action and note within ``aggregation_window`` (6 minutes) update one Event's
``series.count`` and ``series.lastObservedTime`` (core/v1: ``count``/``lastTimestamp``) instead of
creating a new object per occurrence, and a burst of repeats costs one patch.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from setpoint.api.meta import as_mapping
from setpoint.api.names import validate_qualified_name
from setpoint.api.times import format_micro_time, format_time, now_micro_time, now_time
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.client.errors import AlreadyExists, ConnectionFailed, NoKindMatch, NotFound

if TYPE_CHECKING:
    from pydantic import BaseModel

    from setpoint.controller.trace import ReconcileTrace

__all__ = [
    "DEFAULT_AGGREGATION_WINDOW",
    "DEFAULT_MAX_PENDING_EVENTS",
    "DEFAULT_RETRY_DELAY",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "MAX_SEND_ATTEMPTS",
    "EventRecorder",
]

logger = logging.getLogger(__name__)

EVENT_TYPE_NORMAL: Final = "Normal"
EVENT_TYPE_WARNING: Final = "Warning"
# client-go's events broadcaster treats an identical event within 6 minutes as the same series.
DEFAULT_AGGREGATION_WINDOW: Final = 6 * 60.0
# Enough to absorb a burst from many reconciles; beyond it events are dropped, not queued.
DEFAULT_MAX_PENDING_EVENTS: Final = 1000
# client-go's events broadcaster tries an event whose API server cannot be reached up to 12
# times, 10 s apart (maxTriesPerEvent, sleepDuration): an API server restart loses nothing.
MAX_SEND_ATTEMPTS: Final = 12
DEFAULT_RETRY_DELAY: Final = 10.0
# Series remembered for aggregation; older ones are pruned past this count.
_MAX_TRACKED_SERIES: Final = 4096
# API validation limits (events.k8s.io/v1 and core/v1), in bytes (Go's len()): note/message
# 1 KiB, reason/action/reportingInstance 128.
_NOTE_MAX: Final = 1024
_REASON_MAX: Final = 128
_NAME_PREFIX_MAX: Final = 200
_EVENTS_API: Final = "events.k8s.io/v1"
_SeriesKey = tuple[str, ...]


@dataclass(slots=True)
class _Series:
    key: _SeriesKey
    regarding: dict[str, Any]
    related: dict[str, Any] | None
    namespace: str
    type: str
    reason: str
    action: str
    note: str
    first_time: str
    last_time: str
    last_seen: float
    count: int = 1
    name: str | None = None
    api_version: str | None = None
    pending: bool = False


def _reference(obj: Mapping[str, Any] | CachedObject | BaseModel) -> dict[str, Any]:
    api_version: Any
    kind: Any
    name: Any
    namespace: Any
    uid: Any
    rv: Any
    if isinstance(obj, CachedObject):
        api_version, kind, name = obj.api_version, obj.kind, obj.name
        namespace, uid, rv = obj.namespace, obj.uid, obj.resource_version
    else:
        obj = as_mapping(obj)
        metadata = obj.get("metadata") or {}
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        name, namespace = metadata.get("name"), metadata.get("namespace")
        uid, rv = metadata.get("uid"), metadata.get("resourceVersion")
    if not kind or not name:
        raise ValueError("event regarding: the object must have a kind and metadata.name")
    ref: dict[str, Any] = {"apiVersion": api_version or "v1", "kind": kind, "name": name}
    if namespace:
        ref["namespace"] = namespace
    if uid:
        ref["uid"] = uid
    if rv:
        ref["resourceVersion"] = rv
    return ref


def _cut_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


def _identity(ref: Mapping[str, Any] | None) -> tuple[str, str, str, str]:
    if ref is None:
        return ("", "", "", "")
    return (ref.get("uid", ""), ref["kind"], ref.get("namespace", ""), ref["name"])


class EventRecorder:
    """Records Events for one controller (``reporting_controller``, e.g. ``example.com/widget``).

    ``reporting_instance`` defaults to the host name. ``events_api`` forces ``"events.k8s.io/v1"``
    or ``"v1"`` (default: detected through discovery). Call :meth:`stop` (or use ``async with``)
    to flush pending events on shutdown. Safe to call from sync reconcilers running in threads.
    """

    def __init__(
        self,
        client: Client,
        reporting_controller: str,
        *,
        reporting_instance: str | None = None,
        aggregation_window: float = DEFAULT_AGGREGATION_WINDOW,
        max_pending: int = DEFAULT_MAX_PENDING_EVENTS,
        events_api: str | None = None,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not reporting_controller:
            raise ValueError("reporting_controller: must name the controller (e.g. 'x.io/widget')")
        problems = validate_qualified_name(reporting_controller)
        if problems:
            # events.k8s.io/v1 rejects such Events: fail here, not on every event later.
            raise ValueError(
                f"reporting_controller {reporting_controller!r}: must be a qualified name "
                f"(e.g. 'x.io/widget'): {'; '.join(problems)}"
            )
        if not retry_delay >= 0:
            raise ValueError(f"retry_delay: must be >= 0 seconds, got {retry_delay!r}")
        if max_pending < 1:
            raise ValueError(f"max_pending: must be >= 1, got {max_pending!r}")
        if events_api not in (None, _EVENTS_API, "v1"):
            raise ValueError(
                f"events_api: must be None (detect), {_EVENTS_API!r} or 'v1', got {events_api!r}"
            )
        self.client = client
        self.reporting_controller = reporting_controller
        self.reporting_instance = _cut_utf8(reporting_instance or socket.gethostname(), 128)
        self.aggregation_window = aggregation_window
        self.retry_delay = retry_delay
        self._clock = clock
        #: Where Event times come from (default the real time; a manager following the
        #: cluster's clock passes that one).
        self._wall_clock = wall_clock
        self._queue: asyncio.Queue[_Series] = asyncio.Queue(max_pending)
        self._series: dict[_SeriesKey, _Series] = {}
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._use_events_api: bool | None = None if events_api is None else events_api != "v1"
        self._names = itertools.count()
        self._stopped = False
        self.dropped = 0
        #: The reconcile trace that records each Event too (None: off, the default).
        self.trace: ReconcileTrace | None = None
        #: Sends repeated because the API server could not be reached.
        self.retries = 0
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()

    def _micro_time(self) -> str:
        if self._wall_clock is None:
            return now_micro_time()
        return format_micro_time(self._wall_clock())

    def _time(self) -> str:
        if self._wall_clock is None:
            return now_time()
        return format_time(self._wall_clock())

    # -- recording (never blocks, never raises for API problems) ------------------------------

    def normal(
        self,
        regarding: Mapping[str, Any] | CachedObject | BaseModel,
        reason: str,
        note: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | CachedObject | BaseModel | None = None,
    ) -> None:
        """Record a ``Normal`` event."""
        self.event(regarding, EVENT_TYPE_NORMAL, reason, note, action=action, related=related)

    def warning(
        self,
        regarding: Mapping[str, Any] | CachedObject | BaseModel,
        reason: str,
        note: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | CachedObject | BaseModel | None = None,
    ) -> None:
        """Record a ``Warning`` event."""
        self.event(regarding, EVENT_TYPE_WARNING, reason, note, action=action, related=related)

    def event(
        self,
        regarding: Mapping[str, Any] | CachedObject | BaseModel,
        type: str,
        reason: str,
        note: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | CachedObject | BaseModel | None = None,
    ) -> None:
        """Record an event about ``regarding`` (a dict or a cached object).

        ``type`` is ``"Normal"`` or ``"Warning"``; ``reason`` a short CamelCase word;
        ``action`` what the controller did (defaults to ``reason``). Bad arguments raise
        ``ValueError``; API failures are only logged.
        """
        if type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            raise ValueError(f"event type: must be 'Normal' or 'Warning', got {type!r}")
        if not reason or len(reason.encode()) > _REASON_MAX:
            raise ValueError(f"event reason: must be 1-{_REASON_MAX} bytes, got {reason!r}")
        ref = _reference(regarding)
        related_ref = _reference(related) if related is not None else None
        action = _cut_utf8(action or reason, _REASON_MAX)
        note = _cut_utf8(note, _NOTE_MAX)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self._loop is None and running is not None:
            self._loop = running
        trace = self.trace
        if running is not None and running is self._loop:
            if trace is not None:
                trace.event(ref, type, reason, note, trace.context())
            self._record(ref, related_ref, type, reason, action, note)
        elif self._loop is not None and not self._loop.is_closed():
            # Called from a worker thread (sync reconciler): hand over to the loop's thread.
            if trace is not None:
                self._loop.call_soon_threadsafe(
                    trace.event, ref, type, reason, note, trace.context()
                )
            self._loop.call_soon_threadsafe(
                self._record, ref, related_ref, type, reason, action, note
            )
        else:
            logger.warning("event %s %s dropped: no event loop to send it from", reason, ref)
            self.dropped += 1

    def _record(
        self,
        ref: dict[str, Any],
        related: dict[str, Any] | None,
        type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        if self._stopped:
            self.dropped += 1
            return
        # client-go's isomorphic-event key: the same fact about the same objects.
        key: _SeriesKey = (*_identity(ref), type, reason, action, note, *_identity(related))
        now = self._clock()
        series = self._series.get(key)
        if series is not None and now - series.last_seen <= self.aggregation_window:
            series.count += 1
            series.last_seen = now
            series.last_time = self._micro_time()
            if not series.pending:
                self._enqueue(series)
            return
        stamp = self._micro_time()
        series = _Series(
            key=key,
            regarding=ref,
            related=related,
            namespace=ref.get("namespace") or "default",
            type=type,
            reason=reason,
            action=action,
            note=note,
            first_time=stamp,
            last_time=stamp,
            last_seen=now,
        )
        if len(self._series) >= _MAX_TRACKED_SERIES:
            self._prune(now)
        self._series[key] = series
        self._enqueue(series)

    def _prune(self, now: float) -> None:
        expired = [
            k for k, s in self._series.items() if now - s.last_seen > self.aggregation_window
        ]
        for k in expired or list(self._series)[: _MAX_TRACKED_SERIES // 4]:
            del self._series[k]

    def _enqueue(self, series: _Series) -> None:
        try:
            self._queue.put_nowait(series)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                logger.warning(
                    "event recorder %s overloaded: dropped %d event(s) so far (latest: %s %s)",
                    self.reporting_controller, self.dropped, series.reason,
                    series.regarding.get("name"),
                )  # fmt: skip
            return
        series.pending = True
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._send_loop(), name=f"setpoint-event-recorder-{self.reporting_controller}"
            )

    # -- sending --------------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            series = await self._queue.get()
            series.pending = False  # occurrences from now on need another send
            try:
                await self._send(series)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning(
                    "could not record event %s for %s %s: %s",
                    series.reason, series.regarding["kind"], series.regarding["name"], exc,
                )  # fmt: skip
            finally:
                self._queue.task_done()

    async def _send(self, series: _Series) -> None:
        # One name for every attempt: a create whose answer was lost is not made twice.
        name = self._new_name(series)
        for attempt in range(1, MAX_SEND_ATTEMPTS + 1):
            try:
                if series.name is None:
                    await self._create(series, name)
                else:
                    await self._update(series)
                return
            except AlreadyExists:
                if attempt == 1 or series.name is not None:
                    raise
                # An earlier attempt did create it; later occurrences are patched onto it.
                series.name = name
                series.api_version = _EVENTS_API if self._use_events_api else "v1"
                return
            except ConnectionFailed as exc:
                if attempt == MAX_SEND_ATTEMPTS:
                    raise
                self.retries += 1
                logger.info(
                    "cannot reach the API server to record event %s (%s); retry %d in %gs",
                    series.reason, exc, attempt, self.retry_delay,
                )  # fmt: skip
                # The one sender waits: nothing else could be sent meanwhile either, and new
                # events queue up (or are dropped when the queue is full) without blocking.
                await asyncio.sleep(self.retry_delay)

    async def _events_api_served(self) -> bool:
        if self._use_events_api is None:
            try:
                await self.client.mapper.resource_for(_EVENTS_API, "Event")
                self._use_events_api = True
            except NoKindMatch:
                self._use_events_api = False
        return self._use_events_api

    def _new_name(self, series: _Series) -> str:
        prefix = series.regarding["name"][:_NAME_PREFIX_MAX]
        return f"{prefix}.{time.time_ns() + next(self._names):x}"

    async def _create(self, series: _Series, name: str) -> None:
        metadata = {"name": name, "namespace": series.namespace}
        body: dict[str, Any]
        if await self._events_api_served():
            body = {
                "apiVersion": _EVENTS_API,
                "kind": "Event",
                "metadata": metadata,
                "eventTime": series.first_time,
                "reportingController": self.reporting_controller,
                "reportingInstance": self.reporting_instance,
                "action": series.action,
                "reason": series.reason,
                "note": series.note,
                "type": series.type,
                "regarding": series.regarding,
            }
            if series.related is not None:
                body["related"] = series.related
            if series.count > 1:
                body["series"] = {"count": series.count, "lastObservedTime": series.last_time}
        else:
            first = self._time()
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": metadata,
                "involvedObject": series.regarding,
                "reason": series.reason,
                "message": series.note,
                "type": series.type,
                "action": series.action,
                "source": {"component": self.reporting_controller},
                "reportingComponent": self.reporting_controller,
                "reportingInstance": self.reporting_instance,
                "firstTimestamp": first,
                "lastTimestamp": first,
                "count": series.count,
            }
            if series.related is not None:
                body["related"] = series.related
        created = await self.client.create(body)
        series.name = name
        series.api_version = str(created.get("apiVersion") or body["apiVersion"])

    async def _update(self, series: _Series) -> None:
        assert series.name is not None and series.api_version is not None
        if series.api_version == _EVENTS_API:
            patch: dict[str, Any] = {
                "series": {"count": series.count, "lastObservedTime": series.last_time}
            }
        else:
            patch = {"count": series.count, "lastTimestamp": self._time()}
        try:
            await self.client.patch(
                series.api_version, "Event", series.name, patch, namespace=series.namespace
            )
        except NotFound:
            # The Event expired (the API server keeps them ~1h) or was deleted: start anew.
            series.name = None
            await self._create(series, self._new_name(series))

    # -- lifecycle ------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Wait until every event recorded so far has been sent (or given up)."""
        await asyncio.sleep(0)  # let call_soon_threadsafe hand-overs land
        await self._queue.join()

    async def stop(self, flush_timeout: float = 5.0) -> None:
        """Send what is pending (for up to ``flush_timeout`` s), then stop; later events drop."""
        if self._task is not None:
            try:
                async with asyncio.timeout(flush_timeout):
                    await self.flush()
            except TimeoutError:
                logger.warning(
                    "event recorder %s: %d event(s) not sent before shutdown",
                    self.reporting_controller,
                    self._queue.qsize(),
                )
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._stopped = True

    async def __aenter__(self) -> EventRecorder:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
