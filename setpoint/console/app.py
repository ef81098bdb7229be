"""The console's aiohttp application: pages, the page's JSON API and its live streams.

Pages (HTML, :mod:`.pages`): ``/resources``, ``/object``, ``/timeline``, ``/controllers``,
``/cluster``. JSON: ``/api/kinds``, ``/api/list``, ``/api/object``, ``/api/children``,
``/api/events``, ``/api/operators``, ``/api/cluster``. Streams (SSE): ``/api/watch`` (a list's
changes after its resourceVersion) and ``/api/timeline/stream`` (an object's timeline: first
everything recorded so far, then each new entry). Every route sits behind the token
(:mod:`.access`); a bad query parameter is a 400 naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import aiohttp
import jsonpatch
from aiohttp import web

from setpoint.api.field_selectors import escape_field_value
from setpoint.client import ApiError, Client, ConnectionFailed, Gone
from setpoint.console import pages
from setpoint.console.access import token_middleware
from setpoint.console.audit_feed import audit_records, audit_stream
from setpoint.console.catalog import ServedKind, served_kind, served_kinds
from setpoint.console.cluster_reader import (
    DEFAULT_PAGE_SIZE,
    children_of,
    cluster_overview,
    events_of,
    list_page,
    object_detail,
    watch_rows,
)
from setpoint.console.event_stream import KEEPALIVE_SECONDS, EventSink
from setpoint.console.operators import OperatorEndpoint, OperatorWatch
from setpoint.console.summary import object_row
from setpoint.console.timeline import ObjectRef, ObjectTimeline

__all__ = ["ConsoleState", "build_app"]

LOGGER = logging.getLogger("setpoint.console")

#: Largest page the list API serves.
MAX_PAGE_SIZE = 500
#: Seconds between attempts to follow a stream that failed (an operator restarting).
RESUME_SECONDS = 1.0
#: Seconds the kind catalog is reused before discovery is read again (new CRDs show up).
CATALOG_SECONDS = 5.0

STATIC = resources.files("setpoint.console") / "static"
ASSET_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


@dataclass
class ConsoleState:
    """What every handler shares: the cluster's client and the operators' watch."""

    client: Client
    operators: OperatorWatch
    cluster_name: str = ""
    #: Where the audit feed is read (default: the cluster itself).
    audit_client: Client | None = None
    _catalog: list[ServedKind] = field(default_factory=list)
    _catalog_time: float = -1e9
    _refresh: asyncio.Task[None] | None = None

    @property
    def audit(self) -> Client:
        """The client that reads the audit feed."""
        return self.audit_client or self.client

    async def kinds(self, *, fresh: bool = False) -> list[ServedKind]:
        """The served kinds. Discovery is read again when ``fresh`` or when the last reading
        is older than a few seconds (so new CRDs appear); then the page does not wait for it
        (dozens of requests on a real cluster): it gets the last reading, and the next one
        gets the new."""
        if fresh or not self._catalog:
            await self._rediscover()
        elif self._stale() and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.create_task(self._rediscover())
        return self._catalog

    def _stale(self) -> bool:
        return asyncio.get_running_loop().time() - self._catalog_time > CATALOG_SECONDS

    async def _rediscover(self) -> None:
        try:
            self._catalog = await served_kinds(self.client)
        except (ApiError, ConnectionFailed):
            if not self._catalog:
                raise
            LOGGER.warning("discovery failed; the kinds shown are those of the last reading")
        self._catalog_time = asyncio.get_running_loop().time()

    def for_kinds(self) -> dict[str, str]:
        """Controller -> Kind over every operator."""
        merged: dict[str, str] = {}
        for endpoint in self.operators.endpoints:
            merged.update(endpoint.for_kinds())
        return merged


STATE: web.AppKey[ConsoleState] = web.AppKey("console_state", ConsoleState)


def _state(request: web.Request) -> ConsoleState:
    return request.app[STATE]


def _required(request: web.Request, name: str) -> str:
    value = request.query.get(name, "")
    if not value:
        raise web.HTTPBadRequest(text=f"{name}: required query parameter is missing\n")
    return value


def _page_size(request: web.Request) -> int:
    text = request.query.get("limit", str(DEFAULT_PAGE_SIZE))
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE_SIZE:
        raise web.HTTPBadRequest(text=f"limit: must be an integer from 1 to {MAX_PAGE_SIZE}\n")
    return int(text)


async def _served(request: web.Request) -> ServedKind:
    api_version, kind = _required(request, "apiVersion"), _required(request, "kind")
    state = _state(request)
    for fresh in (False, True):  # a miss reads discovery again: a CRD created a moment ago
        for served in await state.kinds(fresh=fresh):
            if served.apiVersion == api_version and served.kind == kind:
                return served
    other_version = await served_kind(state.client, api_version, kind)
    if other_version is not None:
        return other_version
    raise web.HTTPNotFound(text=f"kind: {api_version} {kind} is not served by this cluster\n")


def _namespace(request: web.Request, served: ServedKind | None = None) -> str | None:
    namespace = request.query.get("namespace") or None
    if served is not None and not served.namespaced:
        return None
    return namespace


# --- pages ------------------------------------------------------------------------------------


async def _page(request: web.Request) -> web.Response:
    view = request.match_info.get("view") or "resources"
    if view not in pages.VIEWS:
        raise web.HTTPNotFound(text=f"no view {view!r}\n")
    state = _state(request)
    kinds: list[ServedKind] = []
    if view == "resources":
        with contextlib.suppress(ApiError, ConnectionFailed):
            kinds = await state.kinds()
    body = pages.render(view, dict(request.query), cluster=state.cluster_name, kinds=kinds)
    return web.Response(text=body, content_type="text/html", headers={"Cache-Control": "no-store"})


async def _root(request: web.Request) -> web.Response:
    return await _page(request)


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


async def _asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or suffix not in ASSET_TYPES:
        raise web.HTTPNotFound()
    asset = STATIC / name
    if not asset.is_file():
        raise web.HTTPNotFound()
    return web.Response(body=asset.read_bytes(), content_type=ASSET_TYPES[suffix])


# --- JSON -------------------------------------------------------------------------------------


async def _kinds(request: web.Request) -> web.Response:
    kinds = await _state(request).kinds()
    return web.json_response({"kinds": [k.to_json() for k in kinds]})


async def _list(request: web.Request) -> web.Response:
    served = await _served(request)
    answer = await list_page(
        _state(request).client,
        served.apiVersion,
        served.kind,
        namespace=_namespace(request, served),
        limit=_page_size(request),
        continue_token=request.query.get("continue") or None,
    )
    answer["kind"] = served.to_json()
    return web.json_response(answer)


async def _object(request: web.Request) -> web.Response:
    served = await _served(request)
    answer = await object_detail(
        _state(request).client,
        served.apiVersion,
        served.kind,
        _required(request, "name"),
        _namespace(request, served),
    )
    return web.json_response(answer)


async def _children(request: web.Request) -> web.Response:
    state = _state(request)
    answer = await children_of(
        state.client, await state.kinds(), _namespace(request), _required(request, "uid")
    )
    return web.json_response(answer)


async def _events(request: web.Request) -> web.Response:
    answer = await events_of(_state(request).client, _namespace(request), _required(request, "uid"))
    return web.json_response(answer)


async def _operators(request: web.Request) -> web.Response:
    endpoints = _state(request).operators.endpoints
    return web.json_response({"operators": [e.to_json() for e in endpoints]})


async def _cluster(request: web.Request) -> web.Response:
    return web.json_response(await cluster_overview(_state(request).client))


# --- streams ----------------------------------------------------------------------------------

Follower = Callable[[asyncio.Queue[tuple[str, Any]]], Coroutine[Any, Any, None]]


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        LOGGER.error("a live stream's source failed", exc_info=task.exception())


async def _relay(sink: EventSink, followers: list[Follower]) -> None:
    """Run ``followers`` (each puts ``(event, data)`` on a queue) and send what they put until
    the page goes away."""
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    tasks = [asyncio.create_task(follow(queue)) for follow in followers]
    for task in tasks:
        task.add_done_callback(_log_failure)
    try:
        while True:
            try:
                event, data = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                await sink.keepalive()
                continue
            await sink.send(event, data)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _watch(request: web.Request) -> web.StreamResponse:
    served = await _served(request)
    client = _state(request).client
    namespace = _namespace(request, served)
    resource_version = _required(request, "resourceVersion")
    sink = EventSink(request)
    await sink.open()

    async def follow(queue: asyncio.Queue[tuple[str, Any]]) -> None:
        try:
            async for change in watch_rows(
                client,
                served.apiVersion,
                served.kind,
                namespace=namespace,
                resource_version=resource_version,
            ):
                await queue.put(("change", change))
        except (ApiError, ConnectionFailed) as failed:
            await queue.put(("failed", {"message": str(failed)}))
        await queue.put(("change", {"type": "RELIST"}))

    await _relay(sink, [follow])
    return sink.response


async def _object_ref(request: web.Request) -> tuple[ObjectRef, dict[str, Any] | None, str]:
    served = await _served(request)
    namespace = _namespace(request, served)
    name = _required(request, "name")
    client = _state(request).client
    obj: dict[str, Any] | None = None
    message = ""
    try:
        obj = await client.get(served.apiVersion, served.kind, name, namespace=namespace)
    except ApiError as failed:
        message = failed.message
    uid = (obj or {}).get("metadata", {}).get("uid") or request.query.get("uid") or None
    ref = ObjectRef(served.apiVersion, served.kind, served.resource, namespace, name, uid)
    return ref, obj, message


def _change_entry(
    event_type: str, before: dict[str, Any] | None, after: dict[str, Any]
) -> dict[str, Any]:
    """A watch-based entry (when the cluster serves no audit feed): the diff between two
    versions, managedFields and resourceVersion left out as the audit feed does."""

    def comparable(obj: dict[str, Any] | None) -> dict[str, Any]:
        copy = dict(obj or {})
        metadata = dict(copy.get("metadata") or {})
        for key in ("managedFields", "resourceVersion", "generation"):
            metadata.pop(key, None)
        copy["metadata"] = metadata
        return copy

    diff = None
    if before is not None and event_type != "DELETED":
        diff = jsonpatch.make_patch(comparable(before), comparable(after)).patch
    metadata = after.get("metadata") or {}
    return {
        "source": "watch",
        "lane": "API server",
        "about": "self",
        "time": None,
        "verb": {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}.get(event_type),
        "resourceVersion": metadata.get("resourceVersion"),
        "diff": diff,
    }


async def _timeline_stream(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    client = state.client
    ref, obj, missing = await _object_ref(request)
    timeline = ObjectTimeline(ref, for_kinds=state.for_kinds())
    sink = EventSink(request)
    await sink.open()
    entries: list[dict[str, Any]] = []
    sources: dict[str, dict[str, Any]] = {}
    audit = await audit_records(state.audit, namespace=ref.namespace)
    sources["audit"] = {"state": audit.state, "message": audit.message}
    entries.extend(e for r in audit.records if (e := timeline.audit_entry(r)) is not None)
    trace_cursors: dict[str, int] = {}
    answers = await asyncio.gather(  # at once: an endpoint that hangs delays the page once
        *(
            state.operators.trace_records(endpoint, namespace=ref.namespace)
            for endpoint in state.operators.endpoints
        )
    )
    for endpoint, answer in zip(state.operators.endpoints, answers, strict=True):
        sources[endpoint.url] = {
            "state": answer["state"],
            "message": answer.get("message", ""),
            "dropped": answer.get("dropped", False),
        }
        if answer["state"] == "ok":
            trace_cursors[endpoint.url] = answer["lastSeq"]
            entries.extend(
                e for r in answer["records"] if (e := timeline.trace_entry(endpoint.url, r))
            )
    events_version = ""
    if ref.uid:
        listed = await events_of(client, ref.namespace, ref.uid)
        events_version = listed.get("resourceVersion", "")
        entries.extend({**e, "source": "event", "lane": "Events"} for e in listed.get("events", []))
    await sink.send(
        "reset",
        {
            "object": {**ref.__dict__, "group": ref.group, "row": object_row(obj) if obj else None},
            "missing": missing or None,
            "sources": sources,
            "entries": entries,
        },
    )
    followers: list[Follower] = []
    if audit.state == "ok":
        followers.append(_follow_audit(state.audit, timeline, ref, audit.last_seq))
    elif obj is not None:
        followers.append(_follow_object(client, ref, obj))
    for endpoint in state.operators.endpoints:
        followers.append(
            _follow_trace(state.operators, endpoint, timeline, ref, trace_cursors.get(endpoint.url))
        )
    if ref.uid:
        followers.append(_follow_events(client, ref, events_version))
    await _relay(sink, followers)
    return sink.response


def _catch_up(cursor: int, last_seq: int) -> int:
    """Where to read from after a reconnection: ``cursor``, unless the source restarted (its
    sequence is behind the cursor, so every record it has is new)."""
    return 0 if last_seq < cursor else cursor


def _follow_audit(client: Client, timeline: ObjectTimeline, ref: ObjectRef, since: int) -> Follower:
    async def follow(queue: asyncio.Queue[tuple[str, Any]]) -> None:
        cursor = since
        failed_before = False
        while True:
            if failed_before:  # catch up, and notice a restarted cluster (a new sequence)
                answer = await audit_records(client, namespace=ref.namespace, since=cursor)
                if answer.state != "ok":
                    await asyncio.sleep(RESUME_SECONDS)
                    continue
                start = _catch_up(cursor, answer.last_seq)
                if start != cursor:
                    answer = await audit_records(client, namespace=ref.namespace, since=start)
                await queue.put(("source", {"source": "audit", "state": "ok"}))
                for record in answer.records:
                    entry = timeline.audit_entry(record)
                    if entry is not None:
                        await queue.put(("entry", entry))
                cursor = answer.last_seq
            try:
                async for record in audit_stream(client, namespace=ref.namespace, since=cursor):
                    cursor = max(cursor, int(record.get("seq") or cursor))
                    entry = timeline.audit_entry(record)
                    if entry is not None:
                        await queue.put(("entry", entry))
            except (ApiError, ConnectionFailed, aiohttp.ClientError, ValueError) as failed:
                failure = {"source": "audit", "state": "error", "message": str(failed)}
                await queue.put(("source", failure))
            failed_before = True
            await asyncio.sleep(RESUME_SECONDS)

    return follow


def _follow_trace(
    watch: OperatorWatch,
    endpoint: OperatorEndpoint,
    timeline: ObjectTimeline,
    ref: ObjectRef,
    since: int | None,
) -> Follower:
    async def follow(queue: asyncio.Queue[tuple[str, Any]]) -> None:
        cursor = since if since is not None else 0
        resumed = since is None
        while True:
            if resumed:
                # First contact, or back after a failure: read what the ring has after the
                # cursor (all of it when the operator restarted: its sequence starts again).
                answer = await watch.trace_records(endpoint, namespace=ref.namespace, since=cursor)
                if answer["state"] == "ok" and _catch_up(cursor, answer["lastSeq"]) != cursor:
                    answer = await watch.trace_records(endpoint, namespace=ref.namespace)
                if answer["state"] != "ok":
                    await asyncio.sleep(RESUME_SECONDS)
                    continue
                await queue.put(("source", {"source": endpoint.url, "state": "ok"}))
                timeline.for_kinds.update(endpoint.for_kinds())
                for record in answer["records"]:
                    entry = timeline.trace_entry(endpoint.url, record)
                    if entry is not None:
                        await queue.put(("entry", entry))
                cursor = answer["lastSeq"]
            resumed = True  # from now on, every resumption catches up first
            try:
                async for record in watch.trace_stream(
                    endpoint, namespace=ref.namespace, since=cursor
                ):
                    cursor = max(cursor, int(record.get("seq") or cursor))
                    timeline.for_kinds.update(endpoint.for_kinds())
                    entry = timeline.trace_entry(endpoint.url, record)
                    if entry is not None:
                        await queue.put(("entry", entry))
            except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as failed:
                gone = {"source": endpoint.url, "state": "gone", "message": str(failed)}
                await queue.put(("source", gone))
            await asyncio.sleep(RESUME_SECONDS)

    return follow


def _follow_object(client: Client, ref: ObjectRef, obj: dict[str, Any]) -> Follower:
    async def follow(queue: asyncio.Queue[tuple[str, Any]]) -> None:
        before: dict[str, Any] | None = obj
        version: str | None = None
        while True:
            try:
                if version is None:
                    # From a list's resourceVersion (the cluster's now): the object's own is
                    # that of its last change, often too old to watch from (410).
                    listed = await client.list(
                        ref.api_version,
                        ref.kind,
                        namespace=ref.namespace,
                        field_selector=f"metadata.name={escape_field_value(ref.name)}",
                    )
                    version = listed.resource_version
                    current = listed.items[0] if listed.items else None
                    if current is not None and _version_of(current) != _version_of(before):
                        await queue.put(("entry", _change_entry("MODIFIED", before, current)))
                    before = current
                async for event in client.watch(
                    ref.api_version,
                    ref.kind,
                    namespace=ref.namespace,
                    name=ref.name,
                    resource_version=version,
                ):
                    version = event.resource_version or version
                    await queue.put(("entry", _change_entry(str(event.type), before, event.object)))
                    before = None if event.type == "DELETED" else event.object
            except Gone:
                version = None  # list again
            except (ApiError, ConnectionFailed):
                await asyncio.sleep(RESUME_SECONDS)

    return follow


def _version_of(obj: dict[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def _follow_events(client: Client, ref: ObjectRef, version: str) -> Follower:
    async def follow(queue: asyncio.Queue[tuple[str, Any]]) -> None:
        selector = f"involvedObject.uid={ref.uid}"
        with contextlib.suppress(ApiError, ConnectionFailed):
            async for event in client.watch(
                "v1",
                "Event",
                namespace=ref.namespace,
                field_selector=selector,
                resource_version=version or None,
            ):
                item = event.object
                if str(event.type) == "DELETED":
                    continue
                await queue.put(
                    (
                        "entry",
                        {
                            "source": "event",
                            "lane": "Events",
                            "type": item.get("type"),
                            "reason": item.get("reason"),
                            "message": item.get("message"),
                            "count": item.get("count") or 1,
                            "lastTime": item.get("lastTimestamp") or item.get("eventTime"),
                            "firstTime": item.get("firstTimestamp") or item.get("eventTime"),
                        },
                    )
                )

    return follow


def build_app(state: ConsoleState, token: str) -> web.Application:
    """The console's application (its operators' polling starts and stops with it)."""
    app = web.Application(middlewares=[token_middleware(token)])
    app[STATE] = state

    async def lifetime(app: web.Application) -> AsyncIterator[None]:
        state.operators.start()
        yield
        await state.operators.stop()
        if state._refresh is not None:
            state._refresh.cancel()
            with contextlib.suppress(asyncio.CancelledError, ApiError, ConnectionFailed):
                await state._refresh

    app.cleanup_ctx.append(lifetime)
    app.router.add_get("/", _root)
    app.router.add_get("/static/{name}", _asset)
    app.router.add_get("/favicon.ico", _no_icon)
    app.router.add_get("/api/kinds", _kinds)
    app.router.add_get("/api/list", _list)
    app.router.add_get("/api/watch", _watch)
    app.router.add_get("/api/object", _object)
    app.router.add_get("/api/children", _children)
    app.router.add_get("/api/events", _events)
    app.router.add_get("/api/timeline/stream", _timeline_stream)
    app.router.add_get("/api/operators", _operators)
    app.router.add_get("/api/cluster", _cluster)
    app.router.add_get("/{view}", _page)
    return app
