"""Watch over HTTP: newline-delimited JSON events, chunked, one flush per event.

Semantics follow kube-apiserver's watch cache (``cacher/watch_cache.go``, ``handlers/watch.go``):
a resourceVersion of ""/"0" first replays the current objects as ADDED, N streams what came
after N, a compacted N gets one ``ERROR`` event with a 410 Status. Selector transitions become
ADDED/DELETED. Bookmarks are sent about once a minute and before the deadline when the client
allows them; ``sendInitialEvents`` ends its replay with a bookmark annotated
``k8s.io/initial-events-end``. A watcher too slow to keep up is dropped (the storage overflows
its bounded buffer) and its stream ends, so it re-lists, as kube-apiserver does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import Any, Final

import msgspec
from aiohttp import web

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.fresh_revision import wait_for_revision
from setpoint.cluster.apiserver.http.list_options import ListOptions, parse_resource_version
from setpoint.cluster.apiserver.registry.object_operations import (
    ObjectOperations,
    converts,
)
from setpoint.cluster.apiserver.registry.selection import (
    Matcher,
    check_field_selector,
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import ExpiredError, Watch, WatchOverflowError

#: How often an idle watch with bookmarks allowed gets a BOOKMARK (upstream: about a minute).
BOOKMARK_INTERVAL_SECONDS: Final = 60.0
#: Without ``timeoutSeconds`` upstream picks a random deadline in [min, 2*min) (``get.go``).
DEFAULT_MIN_TIMEOUT_SECONDS: Final = 1800
#: Live events buffered per watcher before it is dropped as too slow.
WATCHER_BUFFER: Final = 10_000
INITIAL_EVENTS_END_ANNOTATION: Final = "k8s.io/initial-events-end"

_ENCODER = msgspec.json.Encoder()
_LINE_PREFIX = {
    "ADDED": b'{"type":"ADDED","object":',
    "MODIFIED": b'{"type":"MODIFIED","object":',
    "DELETED": b'{"type":"DELETED","object":',
}
_LINE_SUFFIX = b"}\n"


def event_line(event_type: str, value: bytes) -> bytes:
    """One watch event as a line: ``{"type":...,"object":<value>}\\n``."""
    return _LINE_PREFIX[event_type] + value + _LINE_SUFFIX


def _bookmark_line(resource: ServedResource, revision: int, *, initial_end: bool = False) -> bytes:
    metadata: dict[str, Any] = {"resourceVersion": str(revision)}
    if initial_end:
        metadata["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
    obj = {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": metadata}
    return b'{"type":"BOOKMARK","object":' + _ENCODER.encode(obj) + _LINE_SUFFIX


def _error_line(error: status_errors.APIError) -> bytes:
    return b'{"type":"ERROR","object":' + _ENCODER.encode(error.to_status()) + _LINE_SUFFIX


async def serve_watch(
    request: web.BaseRequest,
    operations: ObjectOperations,
    resource: ServedResource,
    namespace: str | None,
    options: ListOptions,
    active: dict[Watch, str],
    transform: Callable[[bytes], bytes] | None = None,
) -> web.StreamResponse:
    """Answer a ``?watch=true`` request with a stream of events until the deadline.

    The storage watch is kept in ``active`` (with its resource's storage root) while it runs,
    so a stopping server, or the deletion of a CRD, can end it. ``transform`` turns each
    event's served object into what is sent (a Table row for ``kubectl get -w``).
    """
    line_for = event_line
    if transform is not None:

        def line_for(event_type: str, value: bytes) -> bytes:
            return event_line(event_type, transform(value))

    check_field_selector(resource, options)
    storage = operations.storage
    prefix = resource.storage_prefix(namespace)
    matcher = Matcher(resource, options)
    rv = options.resource_version
    replay = rv in ("", "0") if options.send_initial_events is None else options.send_initial_events
    initial: list[bytes] = []
    error: status_errors.APIError | None = None
    watch = None
    if replay:
        start, initial, watch = await _replay(operations, resource, prefix, matcher, rv, line_for)
    else:
        start = parse_resource_version(rv)
        try:
            await wait_for_revision(storage, start)
            watch = storage.watch(prefix, start, buffer=WATCHER_BUFFER)
        except ExpiredError as exc:
            error = status_errors.too_old_resource_version(start, exc.oldest)
        except status_errors.APIError as exc:
            error = exc  # too large: a reflector relists on it
    response = web.StreamResponse(status=200)
    response.content_type = "application/json"
    response.enable_chunked_encoding()
    await response.prepare(request)
    if error is not None or watch is None:
        if error is not None:
            await response.write(_error_line(error))
        await response.write_eof()
        return response
    last_sent = start
    timeout = options.timeout_seconds
    if timeout is None or timeout <= 0:
        timeout = DEFAULT_MIN_TIMEOUT_SECONDS + random.randrange(DEFAULT_MIN_TIMEOUT_SECONDS)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    timed_out = False

    async def keep_time() -> None:
        # Runs beside the event loop below: bookmarks while idle, then the deadline.
        nonlocal timed_out
        while True:
            now = loop.time()
            if now >= deadline:
                break
            await asyncio.sleep(min(BOOKMARK_INTERVAL_SECONDS, deadline - now))
            if options.allow_bookmarks and loop.time() < deadline:
                try:
                    await response.write(_bookmark_line(resource, last_sent))
                except ConnectionResetError:
                    break  # the client went away: end the stream below
        timed_out = True
        watch.close()

    timer = asyncio.create_task(keep_time())
    active[watch] = resource.storage_root
    try:
        if initial:
            await response.write(b"".join(initial))
        if replay and options.send_initial_events:
            await response.write(_bookmark_line(resource, start, initial_end=True))
        converted = converts(resource) or transform is not None
        selects_all = matcher.selects_all
        write = response.write
        async for first in watch:
            # A burst (a controller writing many objects) goes out in one write, not one
            # system call per event; the events are the ones already buffered, so none waits.
            # Its objects are converted together (one ConversionReview for the burst).
            chosen: list[tuple[str, bytes]] = []
            for event in (first, *watch.take_buffered()):
                if selects_all:
                    chosen.append((event.type, event.value))
                else:
                    picked = _filtered_event(matcher, event)
                    if picked is not None:
                        chosen.append(picked)
                last_sent = event.revision
            if not chosen:
                continue
            if converted:
                try:
                    values = await operations.present_all(resource, [v for _, v in chosen])
                except status_errors.APIError as exc:
                    # The conversion failed: the watch ends with the error (upstream's etcd
                    # watcher reports it as 500 InternalError), the client re-lists (and sees
                    # the same error until the converter works again).
                    reason = exc.reason or StatusReason.INTERNAL_ERROR
                    await write(_error_line(status_errors.APIError(exc.code, reason, exc.message)))
                    break
                lines = [line_for(kind, v) for (kind, _), v in zip(chosen, values, strict=True)]
            else:
                lines = [event_line(kind, v) for kind, v in chosen]
            await write(lines[0] if len(lines) == 1 else b"".join(lines))
        if timed_out and options.allow_bookmarks:
            await response.write(_bookmark_line(resource, last_sent))
    except WatchOverflowError:
        pass  # too slow: end the stream, the client re-lists
    except ConnectionResetError:
        # The client went away (a stopped informer, a closed kubectl): the stream ends here,
        # and that is not a server error.
        return response
    except asyncio.CancelledError:
        timer.cancel()
        watch.close()
        raise
    finally:
        active.pop(watch, None)
        timer.cancel()
        watch.close()
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


async def _replay(
    operations: ObjectOperations,
    resource: ServedResource,
    prefix: str,
    matcher: Matcher,
    rv: str,
    line_for: Callable[[str, bytes], bytes] = event_line,
) -> tuple[int, list[bytes], Watch]:
    """The current objects as ADDED lines and a watch from their revision, all durable."""
    storage = operations.storage
    # From a given revision the replay reports at least it, so it waits for every write up
    # to it; from "now" it only waits for writes under its own prefix.
    read_prefix: str | None = prefix
    if rv not in ("", "0"):
        await wait_for_revision(storage, parse_resource_version(rv))
        read_prefix = None

    async def read() -> tuple[int, list[bytes], Watch]:
        start = storage.read_ticket(read_prefix).revision
        values = [r.value for r in storage.list(prefix) if matcher.matches(r.key, r.value)]
        watch = storage.watch(prefix, start, buffer=WATCHER_BUFFER)
        try:
            values = await operations.present_all(resource, values)
        except BaseException:
            watch.close()
            raise
        return start, [line_for("ADDED", value) for value in values], watch

    watches: list[Watch] = []

    async def read_once() -> tuple[int, list[bytes], Watch]:
        for stale in watches:
            stale.close()  # a read made again: the earlier watch is not used
        result = await read()
        watches.append(result[2])
        return result

    try:
        return await operations.settled_read(read_once, read_prefix)
    except BaseException:
        for stale in watches:
            stale.close()
        raise


def _filtered_event(matcher: Matcher, event: Any) -> tuple[str, bytes] | None:
    """The event type and stored object to send for ``event`` under a selector, turning
    transitions into ADDED/DELETED (None: the watcher does not see it)."""
    now = matcher.matches(event.key, event.value, decode(event.value))
    before = (
        event.prev_value is not None
        and event.type != "ADDED"
        and matcher.matches(event.key, event.prev_value)
    )
    if event.type == "DELETED":
        return ("DELETED", event.value) if before else None
    if now and before:
        return ("MODIFIED", event.value)
    if now:
        return ("ADDED", event.value)
    if before:
        return ("DELETED", event.value)
    return None
