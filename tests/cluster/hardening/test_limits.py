"""Limits that keep small requests from turning into huge work or huge objects (issue 13).

Each case is a request that took the server down or stored something absurd before: a YAML
alias bomb, a JSON patch of doubling copies, an object above etcd's 1.5 MiB, documents nested
a thousand deep, integers beyond int64, long request lines and unknown methods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from setpoint.cluster.apiserver.http.body_limits import MAX_NESTING_DEPTH
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.hardening.conftest import served
from tests.cluster.raw_api import RawAPI

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def server() -> AsyncIterator[tuple[APIServer, RawAPI]]:
    storage = MemoryStorage()
    async with served(storage) as pair:
        yield pair
    await storage.close()


@pytest.fixture
def api(server: tuple[APIServer, RawAPI]) -> RawAPI:
    return server[1]


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def assert_status(reply: Any, code: int, *fragments: str) -> None:
    assert reply.status == code, reply.raw[:300]
    assert reply.body["kind"] == "Status"
    assert reply.body["code"] == code
    for fragment in fragments:
        assert fragment in reply.body["message"], reply.body["message"]


YAML_BOMB = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: bomb}
x:
  a: &a [q,q,q,q,q,q,q,q,q]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


async def test_a_yaml_alias_bomb_is_refused(api: RawAPI) -> None:
    reply = await api.request("POST", CONFIGMAPS, data=YAML_BOMB, content_type="application/yaml")
    assert_status(reply, 400, "excessive aliasing")
    assert (await api.request("GET", f"{CONFIGMAPS}/bomb")).status == 404


async def test_yaml_with_a_few_aliases_still_works(api: RawAPI) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: few, labels: &l {a: b}}\n"
    body += b"data: *l\n"
    reply = await api.request("POST", CONFIGMAPS, data=body, content_type="application/yaml")
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"a": "b"}


async def test_a_json_patch_of_doubling_copies_is_capped(api: RawAPI) -> None:
    assert (await api.request("POST", CONFIGMAPS, configmap("grow", v="x" * 1000))).status == 201
    # Each copy puts the whole list into itself: its size doubles every operation.
    doubling: list[dict[str, Any]] = [{"op": "add", "path": "/spec", "value": ["z" * 1000]}]
    doubling += [{"op": "copy", "from": "/spec", "path": "/spec/-"} for _ in range(40)]
    reply = await api.request(
        "PATCH", f"{CONFIGMAPS}/grow", doubling, content_type="application/json-patch+json"
    )
    assert_status(reply, 422)
    causes = reply.body["details"]["causes"]
    assert "the accumulated size increase of copy is" in causes[0]["message"]
    stored = await api.request("GET", f"{CONFIGMAPS}/grow")
    assert stored.body["data"] == {"v": "x" * 1000}


async def test_too_many_json_patch_operations_get_413(api: RawAPI) -> None:
    assert (await api.request("POST", CONFIGMAPS, configmap("many"))).status == 201
    operations = [{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10_001
    reply = await api.request(
        "PATCH", f"{CONFIGMAPS}/many", operations, content_type="application/json-patch+json"
    )
    assert_status(reply, 413, "The allowed maximum operations in a JSON patch is 10000, got 10001")


async def test_an_object_above_1_5_mib_is_not_stored(api: RawAPI) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] = True
    assert (
        await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    ).status == 201
    path = f"/apis/{group}/v1/namespaces/default/widgets"
    big = widget("big", group)
    big["spec"]["blob"] = ["b" * 1000] * 1700  # 1.7 MB of JSON, under the 3 MiB body limit
    reply = await api.request("POST", path, big)
    assert_status(reply, 413, "request is too large")
    assert (await api.request("GET", f"{path}/big")).status == 404


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 5, 1000, 100_000])
async def test_deep_nesting_is_refused_at_decode(api: RawAPI, depth: int) -> None:
    data = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":'
    data += b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    reply = await api.request("POST", CONFIGMAPS, data=data)
    assert_status(reply, 400, "max depth")
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: "
    yaml_body += b"[" * depth + b"]" * depth + b"\n"
    reply = await api.request("POST", CONFIGMAPS, data=yaml_body, content_type="application/yaml")
    assert_status(reply, 400, "max depth")


async def test_deep_patches_and_delete_bodies_are_refused(api: RawAPI) -> None:
    assert (await api.request("POST", CONFIGMAPS, configmap("target"))).status == 201
    deep = b'{"a":' * 1000 + b"1" + b"}" * 1000
    reply = await api.request(
        "PATCH",
        f"{CONFIGMAPS}/target",
        data=b'{"metadata":{"annotations":' + deep + b"}}",
        content_type="application/merge-patch+json",
    )
    assert_status(reply, 400, "max depth")
    reply = await api.request("DELETE", f"{CONFIGMAPS}/target", data=deep)
    assert_status(reply, 400, "max depth")
    # Each copy nests the object one level deeper.
    grow = [{"op": "add", "path": "/data", "value": {}}]
    grow += [{"op": "copy", "from": "/data", "path": "/data/x"} for _ in range(MAX_NESTING_DEPTH)]
    reply = await api.request(
        "PATCH", f"{CONFIGMAPS}/target", grow, content_type="application/json-patch+json"
    )
    assert_status(reply, 422, "nests deeper")
    assert (await api.request("GET", f"{CONFIGMAPS}/target")).status == 200


async def test_a_crd_schema_nested_too_deep_is_refused(api: RawAPI) -> None:
    crd = widget_crd()
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(400):
        schema = {"type": "object", "properties": {"p": schema}}
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = schema
    reply = await api.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert_status(reply, 400, "max depth")


@pytest.mark.parametrize(
    "query",
    ["limit=18446744073709551617", "limit=9223372036854775808", "limit=1_0", "timeoutSeconds=1e3"],
)
async def test_integer_parameters_are_parsed_as_int64(api: RawAPI, query: str) -> None:
    reply = await api.request("GET", f"{CONFIGMAPS}?{query}")
    assert_status(reply, 400, "strconv.ParseInt")


async def test_a_huge_grace_period_is_a_client_error(api: RawAPI) -> None:
    assert (await api.request("POST", CONFIGMAPS, configmap("grace"))).status == 201
    reply = await api.request(
        "DELETE", f"{CONFIGMAPS}/grace?gracePeriodSeconds=99999999999999999999"
    )
    assert_status(reply, 400, "gracePeriodSeconds")
    reply = await api.request("DELETE", f"{CONFIGMAPS}/grace", {"gracePeriodSeconds": 2**70})
    assert_status(reply, 400, "gracePeriodSeconds")


async def test_a_resource_version_beyond_int64_is_a_client_error(api: RawAPI) -> None:
    reply = await api.request("GET", f"{CONFIGMAPS}?watch=1&resourceVersion={2**64}")
    assert_status(reply, 400, "invalid resource version")


async def test_a_long_label_selector_is_served(api: RawAPI) -> None:
    values = ",".join(f"v{i:05d}" for i in range(3000))  # about 20 KB of request line
    reply = await api.request("GET", f"{CONFIGMAPS}?labelSelector=k+in+({values})")
    assert reply.status in (200, 422), reply.raw[:200]
    assert reply.body is not None and reply.body["kind"] in ("ConfigMapList", "Status")


async def test_parser_refusals_are_statuses(server: tuple[APIServer, RawAPI]) -> None:
    srv, api = server
    reply = await api.request("FOO", CONFIGMAPS)
    assert_status(reply, 405, "does not allow this method")
    headers = {"Authorization": f"Bearer {srv.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            srv.url + CONFIGMAPS, headers={**headers, "X-Big": "h" * (1 << 20) + "h"}
        ) as response,
    ):
        body = await response.json(content_type=None)
        assert response.status == 431
        assert body["kind"] == "Status" and "header" in body["message"]


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 5, 1000])
@pytest.mark.parametrize("media", ["json", "yaml"])
async def test_deep_apply_patches_are_refused(api: RawAPI, depth: int, media: str) -> None:
    # A server-side apply body nested deeper than the limit was a 500 (found by fuzzing).
    if media == "json":
        labels = b'{"a":' * depth + b'"1"' + b"}" * depth
        body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","labels":'
        body += labels + b"}}"
    else:
        body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  labels: "
        body += b"{a: " * depth + b"'1'" + b"}" * depth + b"\n"
    reply = await api.request(
        "PATCH",
        f"{CONFIGMAPS}/deep?fieldManager=fuzz",
        data=body,
        content_type="application/apply-patch+yaml",
    )
    assert_status(reply, 400, "max depth")
    assert (await api.request("GET", f"{CONFIGMAPS}/deep")).status == 404


async def test_an_apply_patch_alias_bomb_is_refused(api: RawAPI) -> None:
    reply = await api.request(
        "PATCH",
        f"{CONFIGMAPS}/bomb?fieldManager=fuzz",
        data=YAML_BOMB,
        content_type="application/apply-patch+yaml",
    )
    assert_status(reply, 400, "excessive aliasing")
    assert (await api.request("GET", f"{CONFIGMAPS}/bomb")).status == 404
