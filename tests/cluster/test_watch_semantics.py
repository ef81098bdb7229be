"""Watch semantics: replay, resume, 410 Expired, selector transitions, bookmarks, timeouts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.raw_api import RawAPI, raw_api

MERGE = "application/merge-patch+json"
#: The root CA publisher's ConfigMap: in every namespace before the test's own objects.
ROOT_CA = "kube-root-ca.crt"


async def test_resource_version_zero_replays_current_objects(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await api.request("POST", path, {"metadata": {"name": "a"}})
    await api.request("POST", path, {"metadata": {"name": "b"}})
    events = await api.watch(f"{path}?watch=true&resourceVersion=0&timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("ADDED", ROOT_CA),
    ]


async def test_deleted_carries_last_state_with_new_resource_version(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, {"metadata": {"name": "d"}, "data": {"k": "v"}})
    await api.request("DELETE", f"{path}/d")
    rv = created.body["metadata"]["resourceVersion"]
    events = await api.watch(f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    assert [e["type"] for e in events] == ["DELETED"]
    deleted = events[0]["object"]
    assert deleted["data"] == {"k": "v"}
    assert int(deleted["metadata"]["resourceVersion"]) > int(rv)


async def test_label_selector_transitions_become_added_and_deleted(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, {"metadata": {"name": "t"}})
    rv = created.body["metadata"]["resourceVersion"]
    for value in ("on", "on2", None):
        labels = {"metadata": {"labels": {"sel": value} if value else None}}
        if value == "on2":
            labels = {"metadata": {"labels": {"sel": "on", "other": "x"}}}
        await api.request("PATCH", f"{path}/t", labels, content_type=MERGE)
    events = await api.watch(
        f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=1&labelSelector=sel%3Don"
    )
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]


async def test_send_initial_events_ends_with_marked_bookmark(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await api.request("POST", path, {"metadata": {"name": "i"}})
    events = await api.watch(
        f"{path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        "&allowWatchBookmarks=true&timeoutSeconds=1"
    )
    assert [e["type"] for e in events[:3]] == ["ADDED", "ADDED", "BOOKMARK"]
    assert {e["object"]["metadata"]["name"] for e in events[:2]} == {"i", ROOT_CA}
    bookmark = events[2]["object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["kind"] == "ConfigMap"
    assert events[-1]["type"] == "BOOKMARK"  # one more before the stream closes


async def test_send_initial_events_requires_bookmarks(api: RawAPI, namespace: str) -> None:
    reply = await api.request(
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=1&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan",
    )
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")


async def test_watch_stream_is_newline_delimited_compact_json(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await api.request(
        "POST", path, {"metadata": {"name": "c", "labels": {"own": "yes"}}, "data": {"n": "1"}}
    )
    async with api.session.get(
        f"{api.url}{path}?watch=1&resourceVersion=0&timeoutSeconds=1&labelSelector=own"
    ) as response:
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.headers["Transfer-Encoding"] == "chunked"
        raw = await response.read()
    lines = raw.split(b"\n")
    assert lines[-1] == b""
    assert len(lines) == 2
    assert b": " not in lines[0]
    assert json.loads(lines[0])["type"] == "ADDED"


async def test_watch_sees_new_events_as_they_happen(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    listed = await api.request("GET", path)
    rv = listed.body["metadata"]["resourceVersion"]
    async with api.session.get(
        f"{api.url}{path}?watch=1&resourceVersion={rv}&timeoutSeconds=5"
    ) as response:
        await api.request("POST", path, {"metadata": {"name": "live"}})
        line = await asyncio.wait_for(response.content.readline(), 5)
    event = json.loads(line)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "live")


@pytest.fixture
async def small_history_api() -> AsyncIterator[RawAPI]:
    """A server whose storage keeps only a few events of history."""
    storage = MemoryStorage(history_max_events=3)
    server = APIServer(storage, https_port=None)
    await server.start()
    try:
        async with raw_api(server.url, server.token) as client:
            yield client
    finally:
        await server.stop()
        await storage.close()


async def test_too_old_resource_version_gets_410_error_event(small_history_api: RawAPI) -> None:
    api = small_history_api
    path = "/api/v1/namespaces/default/configmaps"
    first = await api.request("POST", path, {"metadata": {"name": "x0"}})
    for index in range(1, 8):
        await api.request("POST", path, {"metadata": {"name": f"x{index}"}})
    rv = first.body["metadata"]["resourceVersion"]
    events = await api.watch(f"{path}?watch=1&resourceVersion={rv}")
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["code"], status["reason"]) == (410, "Expired")
    assert status["message"].startswith(f"too old resource version: {rv} (")


async def test_expired_continue_token_gets_410(small_history_api: RawAPI) -> None:
    api = small_history_api
    path = "/api/v1/namespaces/default/configmaps"
    for index in range(3):
        await api.request("POST", path, {"metadata": {"name": f"p{index}"}})
    page = await api.request("GET", f"{path}?limit=1")
    token = page.body["metadata"]["continue"]
    for index in range(3, 10):
        await api.request("POST", path, {"metadata": {"name": f"p{index}"}})
    expired = await api.request("GET", f"{path}?limit=1&continue={token}")
    assert (expired.status, expired.body["reason"]) == (410, "Expired")
    assert expired.body["message"].startswith("The provided continue parameter is too old")


async def test_exact_list_at_an_older_resource_version(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    first = await api.request("POST", path, {"metadata": {"name": "e1"}, "data": {"v": "1"}})
    rv = first.body["metadata"]["resourceVersion"]
    await api.request("POST", path, {"metadata": {"name": "e2"}})
    await api.request(
        "PATCH", f"{path}/e1", {"data": {"v": "2"}}, content_type="application/merge-patch+json"
    )
    old = await api.request("GET", f"{path}?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert old.body["metadata"]["resourceVersion"] == rv
    assert [(i["metadata"]["name"], i["data"].get("v")) for i in old.body["items"]] == [
        ("e1", "1"),
        (ROOT_CA, None),
    ]
    now = await api.request("GET", f"{path}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan")
    assert [i["metadata"]["name"] for i in now.body["items"]] == ["e1", "e2", ROOT_CA]
