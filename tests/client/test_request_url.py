"""Request URLs: built from parts when the path allows it, and the same on the wire either way."""

from __future__ import annotations

import pytest
from aiohttp import web
from yarl import URL

from setpoint.client import Client, ClientConfig, StaticToken
from setpoint.client.request_url import RequestUrls

from .conftest import CORE_RESOURCES, ScriptedServer, json_response

CASES = [
    ("http://127.0.0.1:8080", "/api/v1/namespaces/default/configmaps/x", None),
    ("http://127.0.0.1:8080", "/api/v1/namespaces/a/pods/p", {"fieldManager": "setpoint"}),
    (
        "https://[::1]:6443",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregate-to-edit",
        {"fieldManager": "set point+x", "force": "true"},
    ),
    ("https://rancher.example/k8s/clusters/c-1", "/api/v1/pods", {"labelSelector": "a in (b,c)"}),
    ("http://h:1", "/api/v1/namespaces/default/configmaps", {"labelSelector": "app!=web,x"}),
    ("http://user:pw@h:1", "/api/v1/namespaces", {"limit": "500", "continue": "eyJ2Ijo=="}),
    # Paths yarl would change (quoting, dot segments): left to aiohttp.
    ("http://h:1", "/api/v1/namespaces/default/configmaps/a b", {"dryRun": "All"}),
    ("http://h:1", "/api/v1/namespaces/default/configmaps/x?y", None),
    ("http://h:1", "/api/v1/namespaces/default/configmaps/ü", None),
    ("http://h:1", "/api/v1/namespaces/default/configmaps/.x", None),
]


@pytest.mark.parametrize(("server", "path", "params"), CASES)
def test_a_built_url_is_the_one_aiohttp_would_build(
    server: str, path: str, params: dict[str, str] | None
) -> None:
    expected = URL(server + path)
    if params:
        expected = expected.extend_query(params)
    built = RequestUrls(server).url(path, params)
    if built is None:
        return
    assert str(built) == str(expected)
    assert built.raw_path_qs == expected.raw_path_qs
    assert (built.host, built.port, built.scheme) == (expected.host, expected.port, expected.scheme)


def test_plain_paths_are_built_and_others_left_to_aiohttp() -> None:
    urls = RequestUrls("http://h:1")
    assert urls.url("/api/v1/namespaces/a/configmaps/x", {"force": "true"}) is not None
    assert urls.url("/apis/x.io/v1/clusterthings/system:a@b~c", None) is not None
    for path in ("/api/v1/x/a b", "/api/v1/x/ü", "/api/v1/x/y#z", "/api/v1/x/..", "/api/v1/x/.y"):
        assert urls.url(path, None) is None, path
    # A base URL with a query cannot be joined by parts.
    assert RequestUrls("http://h:1/?x=1").url("/api/v1/pods", None) is None


def test_encoded_queries_are_remembered_within_a_bound() -> None:
    urls = RequestUrls("http://h:1")
    first = urls.url("/api/v1/pods", {"fieldManager": "m", "force": "true"})
    again = urls.url("/api/v1/pods/p", {"fieldManager": "m", "force": "true"})
    assert first is not None and again is not None
    assert again.raw_query_string == "fieldManager=m&force=true"
    for n in range(1000):
        built = urls.url("/api/v1/pods", {"resourceVersion": str(n)})
        assert built is not None and built.raw_query_string == f"resourceVersion={n}"
    assert len(urls._queries) <= 256


@pytest.mark.parametrize("name", ["plain-name", "system:role", "with space", "ünïcode"])
async def test_the_server_sees_the_same_request_line_for_built_and_parsed_urls(
    scripted_server: ScriptedServer, client: Client, name: str
) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{name}"

    async def answer(_: web.Request) -> web.StreamResponse:
        return json_response({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})

    scripted_server.on("PATCH", path, answer)
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    await client.apply(desired, field_manager="a b+c", force=True)
    (request,) = scripted_server.calls("PATCH", path)
    assert request.path == path
    assert request.query["fieldManager"] == "a b+c"
    assert request.query["force"] == "true"
    assert request.raw_path == str(URL(path).extend_query(dict(request.query)).raw_path_qs)


async def test_a_server_url_with_a_path_prefix_keeps_it(scripted_server: ScriptedServer) -> None:
    prefixed = "/k8s/clusters/c-1/api/v1/namespaces/default/configmaps/x"

    async def answer(_: web.Request) -> web.StreamResponse:
        return json_response({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})

    async def discovery(_: web.Request) -> web.StreamResponse:
        return json_response(CORE_RESOURCES)

    scripted_server.on("GET", prefixed, answer)
    scripted_server.on("GET", "/k8s/clusters/c-1/api/v1", discovery)
    config = ClientConfig(
        server=scripted_server.url + "/k8s/clusters/c-1", credentials=StaticToken("t")
    )
    async with await Client.from_config(config) as client:
        got = await client.get("v1", "ConfigMap", "x", namespace="default")
    assert got["metadata"]["name"] == "x"
    assert [r.raw_path for r in scripted_server.calls("GET", prefixed)] == [prefixed]
