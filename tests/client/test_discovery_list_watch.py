"""Discovery (REST mapping), paginated lists and watch streams against a scripted server."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.gvk import ResourceInfo
from setpoint.client import Client, ConnectionFailed, Gone, NoKindMatch, WatchEventType

from .conftest import ScriptedServer, json_response, status_body

WIDGETS_V1 = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "example.com/v1",
    "resources": [
        {
            "name": "widgets",
            "singularName": "widget",
            "namespaced": True,
            "kind": "Widget",
            "verbs": ["get", "list", "watch"],
            "shortNames": ["wd"],
        },
        {"name": "widgets/status", "singularName": "", "namespaced": True, "kind": "Widget"},
        {
            "name": "widgets/scale",
            "singularName": "",
            "namespaced": True,
            "kind": "Scale",
            "group": "autoscaling",
            "version": "v1",
        },
    ],
}


async def test_core_kinds_are_mapped(client: Client) -> None:
    info = await client.mapper.resource_for("v1", "ConfigMap")
    assert info.resource == "configmaps"
    assert info.namespaced
    assert info.list_kind == "ConfigMapList"
    assert info.short_names == ("cm",)
    ns = await client.mapper.resource_for("v1", "Namespace")
    assert not ns.namespaced
    assert ns.subresources == ("status",)
    assert (await client.mapper.resource_for_plural("v1", "cm")).kind == "ConfigMap"


async def test_a_new_crd_is_found_after_a_miss(
    scripted_server: ScriptedServer, client: Client
) -> None:
    expected = re.escape('no matches for kind "Widget" in version "example.com/v1"')
    with pytest.raises(NoKindMatch, match=expected):
        await client.mapper.resource_for("example.com/v1", "Widget")
    scripted_server.answer("GET", "/apis/example.com/v1", lambda: json_response(WIDGETS_V1))
    info = await client.mapper.resource_for("example.com/v1", "Widget")
    assert info.path("ns", "w") == "/apis/example.com/v1/namespaces/ns/widgets/w"
    assert info.subresources == ("status", "scale")
    # Cached: a second lookup does not ask the server again.
    asked = len(scripted_server.calls("GET", "/apis/example.com/v1"))
    await client.mapper.resource_for("example.com/v1", "Widget")
    assert len(scripted_server.calls("GET", "/apis/example.com/v1")) == asked


async def test_concurrent_misses_share_one_discovery_request(
    scripted_server: ScriptedServer, client: Client
) -> None:
    async def slow(_: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.05)
        return json_response(WIDGETS_V1)

    scripted_server.on("GET", "/apis/example.com/v1", slow)
    infos = await asyncio.gather(
        *(client.mapper.resource_for("example.com/v1", "Widget") for _ in range(5))
    )
    assert {i.resource for i in infos} == {"widgets"}
    assert len(scripted_server.calls("GET", "/apis/example.com/v1")) == 1


async def test_unknown_kind_in_a_known_version(client: Client) -> None:
    with pytest.raises(NoKindMatch) as caught:
        await client.mapper.resource_for("v1", "Gadget")
    assert caught.value.kind == "Gadget"


async def test_find_by_short_name_uses_preferred_versions(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.answer(
        "GET", "/api", lambda: json_response({"kind": "APIVersions", "versions": ["v1"]})
    )
    scripted_server.answer(
        "GET",
        "/apis",
        lambda: json_response(
            {
                "kind": "APIGroupList",
                "groups": [
                    {
                        "name": "example.com",
                        "versions": [{"groupVersion": "example.com/v1", "version": "v1"}],
                        "preferredVersion": {"groupVersion": "example.com/v1", "version": "v1"},
                    }
                ],
            }
        ),
    )
    scripted_server.answer("GET", "/apis/example.com/v1", lambda: json_response(WIDGETS_V1))
    assert (await client.mapper.find("wd")).kind == "Widget"
    assert (await client.mapper.find("Widget")).resource == "widgets"
    assert (await client.mapper.find("configmap")).kind == "ConfigMap"
    assert await client.mapper.preferred_version("example.com") == "v1"
    with pytest.raises(NoKindMatch):
        await client.mapper.find("nothing")


def _cm(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"},
    }


def _pager(pages: int, *, expire_at: int | None = None) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        token = request.query.get("continue")
        index = int(token) if token else 0
        if expire_at is not None and index == expire_at:
            return json_response(status_body(410, "Expired", "continue token expired"), 410)
        limit = request.query.get("limit")
        if limit is None:  # unpaginated: everything at once
            items = [_cm(f"cm-{i}") for i in range(pages)]
            return json_response(
                {
                    "kind": "ConfigMapList",
                    "apiVersion": "v1",
                    "metadata": {"resourceVersion": "99"},
                    "items": items,
                }
            )
        metadata: dict[str, Any] = {"resourceVersion": "42"}
        if index + 1 < pages:
            metadata["continue"] = str(index + 1)
        return json_response(
            {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": metadata,
                "items": [_cm(f"cm-{index}")],
            }
        )

    return handler


async def test_list_follows_continue_tokens(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/ns/configmaps"
    scripted_server.on("GET", path, _pager(3))
    result = await client.list(
        "v1", "ConfigMap", namespace="ns", page_size=1, label_selector={"app": "web"}
    )
    assert [i["metadata"]["name"] for i in result.items] == ["cm-0", "cm-1", "cm-2"]
    assert result.resource_version == "42"
    assert result.kind == "ConfigMapList"
    calls = scripted_server.calls("GET", path)
    assert [c.query.get("continue") for c in calls] == [None, "1", "2"]
    assert all(c.query["labelSelector"] == "app=web" and c.query["limit"] == "1" for c in calls)


async def test_list_restarts_unpaginated_when_the_token_expires(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/ns/configmaps"
    scripted_server.on("GET", path, _pager(3, expire_at=2))
    result = await client.list("v1", "ConfigMap", namespace="ns", page_size=1)
    assert [i["metadata"]["name"] for i in result.items] == ["cm-0", "cm-1", "cm-2"]
    assert result.resource_version == "99"


async def test_list_without_namespace_covers_all_namespaces(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.on("GET", "/api/v1/configmaps", _pager(1))
    assert len(await client.list("v1", "ConfigMap")) == 1


class Widget(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")
    api_version: str = Field("v1", alias="apiVersion")
    kind: str = "ConfigMap"
    metadata: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, str] | None = None


async def test_list_into_a_model_class(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.on("GET", "/api/v1/namespaces/ns/configmaps", _pager(2))
    result = await client.list(Widget, namespace="ns")
    assert all(isinstance(i, Widget) for i in result.items)
    assert result.items[1].metadata["name"] == "cm-1"


def _stream(lines: list[bytes], *, chunk: int = 7) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        payload = b"".join(line + b"\n" for line in lines)
        for start in range(0, len(payload), chunk):
            await response.write(payload[start : start + chunk])
        await response.write_eof()
        return response

    return handler


def _event(kind: str, name: str, rv: str) -> bytes:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "resourceVersion": rv},
    }
    if kind == "BOOKMARK":
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"resourceVersion": rv}}
    return json.dumps({"type": kind, "object": obj}).encode()


async def test_watch_raw_yields_whole_lines_across_chunks(
    scripted_server: ScriptedServer, client: Client
) -> None:
    big = json.dumps({"type": "ADDED", "object": {"data": {"x": "y" * 3_000_000}}}).encode()
    lines = [_event("ADDED", "a", "1"), big, _event("MODIFIED", "a", "2")]
    path = "/api/v1/namespaces/ns/configmaps"
    scripted_server.on("GET", path, _stream(lines, chunk=65536))
    info: ResourceInfo = await client.mapper.resource_for("v1", "ConfigMap")
    received = [
        line
        async for line in client.watch_raw(info, "ns", resource_version="0", timeout_seconds=30)
    ]
    assert received == lines
    query = scripted_server.calls("GET", path)[0].query
    assert query["watch"] == "true"
    assert query["allowWatchBookmarks"] == "true"
    assert query["resourceVersion"] == "0"
    assert query["timeoutSeconds"] == "30"


async def test_watch_raw_refusal_raises_before_streaming(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.answer(
        "GET",
        "/api/v1/namespaces/ns/configmaps",
        lambda: json_response(status_body(410, "Expired", "too old resource version"), 410),
    )
    info = await client.mapper.resource_for("v1", "ConfigMap")
    with pytest.raises(Gone):
        async for _ in client.watch_raw(info, "ns", resource_version="1"):
            pass


async def test_watch_decodes_events_and_filters_bookmarks(
    scripted_server: ScriptedServer, client: Client
) -> None:
    lines = [_event("ADDED", "a", "1"), _event("BOOKMARK", "", "3"), _event("DELETED", "a", "4")]
    scripted_server.on("GET", "/api/v1/namespaces/ns/configmaps", _stream(lines))
    events = [e async for e in client.watch("v1", "ConfigMap", namespace="ns")]
    assert [(e.type, e.resource_version) for e in events] == [
        (WatchEventType.ADDED, "1"),
        (WatchEventType.DELETED, "4"),
    ]
    assert events[0].object["metadata"]["name"] == "a"
    with_bookmarks = [
        e async for e in client.watch("v1", "ConfigMap", namespace="ns", bookmarks=True)
    ]
    assert [e.type for e in with_bookmarks][1] is WatchEventType.BOOKMARK


async def test_watch_error_event_raises_gone(
    scripted_server: ScriptedServer, client: Client
) -> None:
    error = json.dumps({"type": "ERROR", "object": status_body(410, "Expired", "too old")})
    lines = [_event("ADDED", "a", "1"), error.encode()]
    scripted_server.on("GET", "/api/v1/namespaces/ns/configmaps", _stream(lines))
    seen = []
    with pytest.raises(Gone, match="too old"):
        async for event in client.watch("v1", "ConfigMap", namespace="ns", resource_version="1"):
            seen.append(event)
    assert len(seen) == 1


async def test_watch_by_name_uses_a_field_selector(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/ns/configmaps"
    scripted_server.on("GET", path, _stream([]))
    _ = [
        e
        async for e in client.watch(
            "v1", "ConfigMap", namespace="ns", name="a", field_selector={"status.phase": "x,y"}
        )
    ]
    assert scripted_server.calls("GET", path)[0].query["fieldSelector"] == (
        "status.phase=x\\,y,metadata.name=a"
    )


async def test_watch_stream_cut_mid_event_raises_connection_failed(
    scripted_server: ScriptedServer, client: Client
) -> None:
    async def cut(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(_event("ADDED", "a", "1") + b"\n" + b'{"type":"MOD')
        assert request.transport is not None
        request.transport.abort()
        return response

    scripted_server.on("GET", "/api/v1/namespaces/ns/configmaps", cut)
    seen = []
    with pytest.raises(ConnectionFailed, match="stream broken"):
        async for event in client.watch("v1", "ConfigMap", namespace="ns"):
            seen.append(event)
    assert [e.object["metadata"]["name"] for e in seen] == ["a"]


@pytest.mark.parametrize("name", ["a/status", "..", "50%"])
async def test_names_that_would_change_the_url_are_rejected(client: Client, name: str) -> None:
    with pytest.raises(ValueError, match=r"metadata\.name"):
        await client.get("v1", "ConfigMap", name, namespace="ns")


async def test_calls_name_missing_arguments(client: Client) -> None:
    with pytest.raises(ValueError, match="kind: required"):
        await client.get("v1", "", "x")
    with pytest.raises(ValueError, match=r"metadata\.name: required"):
        await client.update({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    with pytest.raises(ValueError, match="apiVersion"):
        await client.create({"kind": "ConfigMap", "metadata": {"name": "x"}})
    with pytest.raises(ValueError, match="JSON patch must be a list"):
        await client.patch("v1", "ConfigMap", "x", {"a": 1}, patch_type="json", namespace="n")
    with pytest.raises(ValueError, match="force"):
        await client.patch("v1", "ConfigMap", "x", {"a": 1}, force=True, namespace="n")
    with pytest.raises(TypeError, match="Kubernetes object"):
        await client.create(42)  # type: ignore[call-overload]


async def test_manual_paging_with_limit(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.on("GET", "/api/v1/namespaces/ns/configmaps", _pager(2))
    first = await client.list("v1", "ConfigMap", namespace="ns", limit=1)
    assert [i["metadata"]["name"] for i in first] == ["cm-0"]
    assert first.continue_token == "1"
    second = await client.list(
        "v1", "ConfigMap", namespace="ns", limit=1, continue_token=first.continue_token
    )
    assert [i["metadata"]["name"] for i in second] == ["cm-1"]
    assert second.continue_token is None
    with pytest.raises(ValueError, match="limit"):
        await client.list("v1", "ConfigMap", namespace="ns", limit=0)


async def test_no_kind_match_names_the_versions_that_serve_the_kind(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.answer(
        "GET", "/api", lambda: json_response({"kind": "APIVersions", "versions": ["v1"]})
    )
    scripted_server.answer(
        "GET",
        "/apis",
        lambda: json_response(
            {
                "kind": "APIGroupList",
                "groups": [
                    {
                        "name": "example.com",
                        "versions": [{"groupVersion": "example.com/v1", "version": "v1"}],
                        "preferredVersion": {"groupVersion": "example.com/v1", "version": "v1"},
                    }
                ],
            }
        ),
    )
    scripted_server.answer("GET", "/apis/example.com/v1", lambda: json_response(WIDGETS_V1))
    with pytest.raises(NoKindMatch, match=r"serves this kind in: example\.com/v1"):
        await client.mapper.resource_for("example.com/v2", "Widget")


async def test_selectors_from_setpoint_api(scripted_server: ScriptedServer, client: Client) -> None:
    from setpoint.api.selectors import FieldSelector, LabelSelector

    path = "/api/v1/namespaces/ns/configmaps"
    scripted_server.on("GET", path, _pager(1))
    await client.list(
        "v1",
        "ConfigMap",
        namespace="ns",
        label_selector=LabelSelector.parse("app in (a,b),!legacy"),
        field_selector=FieldSelector.parse("metadata.name=x"),
    )
    query = scripted_server.calls("GET", path)[0].query
    expected = LabelSelector.parse("app in (a,b),!legacy")
    assert LabelSelector.parse(query["labelSelector"]) == expected
    assert query["fieldSelector"] == "metadata.name=x"
    with pytest.raises(ValueError, match="matches nothing"):
        await client.list("v1", "ConfigMap", label_selector=LabelSelector.nothing())
