"""The console's HTTP API on the session's local cluster, with the contract fake as its
operator and audit feed: the token, lists and their pages, the live relay, an object's
owners/children/Events, what is forbidden, operators going and coming back, the timeline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from setpoint.client import Client
from setpoint.console.operators import OperatorWatch, normalize_operator_url
from setpoint.testing import install_crds
from setpoint.testing.background_cluster import BackgroundCluster
from tests.console.conftest import RunningConsole, open_console
from tests.console.contract_fake import ContractFake
from tests.console.stories import ERROR, FOO, foo_story

FOO_CRD = Path(__file__).parents[2] / "examples/sample-controller/config/crd"


async def _events(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, Any]]:
    name = ""
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


async def test_every_route_needs_the_token(console: RunningConsole) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as stranger:
        for path in ("/", "/resources", "/static/console.js", "/api/kinds"):
            async with stranger.get(console.url + path) as got:
                assert got.status == 403
                text = await got.text()
                assert text.startswith("no token: open the URL") and text.count("\n") == 1
        async with stranger.get(console.url + "/api/kinds?token=wrong") as got:
            assert got.status == 403 and (await got.text()).startswith("wrong token")
        async with stranger.get(f"{console.url}/static/console.js?token={console.token}") as got:
            assert got.status == 200 and got.content_type == "text/javascript"
            port = console.url.rsplit(":", 1)[1]  # two consoles on one host keep their cookies
            assert got.cookies[f"setpoint-console-token-{port}"]["httponly"]
        async with stranger.get(console.url + "/api/kinds") as got:  # the cookie now
            assert got.status == 200
        headers = {"Host": "console.example.com"}
        async with stranger.get(console.url + "/api/kinds", headers=headers) as got:
            assert got.status == 403 and "127.0.0.1 only" in await got.text()


async def test_kinds_come_from_discovery(console: RunningConsole) -> None:
    kinds = {(k["apiVersion"], k["kind"]): k for k in (await console.json("/api/kinds"))["kinds"]}
    assert kinds[("v1", "ConfigMap")]["namespaced"] is True
    assert kinds[("v1", "Namespace")]["namespaced"] is False
    assert kinds[("apps/v1", "Deployment")]["watchable"] is True
    async with console.http.get(console.url + "/api/list", params={"apiVersion": "v1"}) as got:
        assert (
            got.status == 400 and await got.text() == "kind: required query parameter is missing\n"
        )
    params = {"apiVersion": "v1", "kind": "Nothing"}
    async with console.http.get(console.url + "/api/list", params=params) as got:
        assert got.status == 404 and "v1 Nothing is not served" in await got.text()
    # The catalog holds each group's preferred version (autoscaling/v2); a link to another
    # served version of a kind (a CRD's older version, a sample written in it) lists too.
    assert ("autoscaling/v1", "HorizontalPodAutoscaler") not in kinds
    old = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler"}
    assert (await console.json("/api/list", **old, namespace="default"))["items"] == []


async def test_lists_come_in_pages_and_stay_live(
    console: RunningConsole, client: Client, namespace: str
) -> None:
    for index in range(5):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{index}", "namespace": namespace},
            }
        )
    query = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "limit": "2"}
    first = await console.json("/api/list", **query)
    assert [row["name"] for row in first["items"]] == ["cm-0", "cm-1"]
    assert first["remaining"] == 4 and first["continue"]  # with kube-root-ca.crt
    second = await console.json("/api/list", **query, **{"continue": first["continue"]})
    assert [row["name"] for row in second["items"]] == ["cm-2", "cm-3"]
    async with console.http.get(console.url + "/api/list", params={**query, "limit": "0"}) as got:
        assert got.status == 400 and (await got.text()).startswith("limit: must be")
    watch = {**query, "resourceVersion": first["resourceVersion"]}
    async with console.http.get(console.url + "/api/watch", params=watch) as stream:
        assert stream.headers["Content-Type"] == "text/event-stream"
        await client.patch("v1", "ConfigMap", "cm-4", {"data": {"a": "b"}}, namespace=namespace)
        async with asyncio.timeout(10):
            async for name, change in _events(stream):
                assert name == "change"
                assert (change["type"], change["row"]["name"]) == ("MODIFIED", "cm-4")
                break


async def test_an_object_with_its_owner_children_and_events(
    console: RunningConsole, client: Client, namespace: str
) -> None:
    parent = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "parent", "namespace": namespace},
        }
    )
    owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "parent",
        "uid": parent["metadata"]["uid"],
        "controller": True,
    }
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "child", "namespace": namespace, "ownerReferences": [owner]},
        }
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "parent.1", "namespace": namespace},
            "involvedObject": {
                "kind": "ConfigMap",
                "name": "parent",
                "namespace": namespace,
                "uid": parent["metadata"]["uid"],
            },
            "reason": "Checked",
            "message": "all good",
            "type": "Normal",
            "source": {"component": "tester"},
        }
    )
    child = await console.json(
        "/api/object", apiVersion="v1", kind="ConfigMap", namespace=namespace, name="child"
    )
    assert "ownerReferences" in child["yaml"] and "managedFields" not in child["yaml"]
    assert [(o["kind"], o["name"]) for o in child["owners"]] == [("ConfigMap", "parent")]
    uid = parent["metadata"]["uid"]
    children = await console.json("/api/children", uid=uid, namespace=namespace)
    assert [(c["kind"], c["name"]) for c in children["children"]] == [("ConfigMap", "child")]
    events = await console.json("/api/events", uid=uid, namespace=namespace)
    assert [(e["reason"], e["message"], e["source"]) for e in events["events"]] == [
        ("Checked", "all good", "tester")
    ]
    missing = await console.json(
        "/api/object", apiVersion="v1", kind="ConfigMap", namespace=namespace, name="nothing"
    )
    assert missing["notFound"] == 'configmaps "nothing" not found'


async def test_what_the_user_may_not_read_is_shown_as_forbidden(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    kubeconfig = local_cluster.write_user_kubeconfig(tmp_path / "kubeconfig", "nobody")
    runner, console, clients = await open_console(str(kubeconfig), [], None)
    try:
        kinds = await console.json("/api/kinds")  # discovery is open to every user
        assert any(k["kind"] == "Secret" for k in kinds["kinds"])
        page = await console.json("/api/list", apiVersion="v1", kind="Secret")
        assert page["code"] == 403
        assert page["forbidden"] == (
            'secrets is forbidden: User "nobody" cannot list resource "secrets" in API group "" '
            "at the cluster scope"
        )
        overview = await console.json("/api/cluster")
        assert 'cannot list resource "pods"' in overview["pods"]["forbidden"]
        async with console.http.get(console.url + "/resources?apiVersion=v1&kind=Secret") as got:
            assert got.status == 200
    finally:
        await runner.cleanup()
        await console.http.close()
        for opened in clients:
            await opened.close()


async def test_an_operator_that_goes_away_is_gone_and_comes_back(
    contract_fake: ContractFake,
) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        watch = OperatorWatch([contract_fake.url], http)
        endpoint = watch.endpoints[0]
        await watch.poll_once(endpoint)
        assert endpoint.state == "up" and endpoint.snapshot is not None
        port = contract_fake.port
        await contract_fake.stop()
        await watch.poll_once(endpoint)
        assert endpoint.state == "gone" and "ClientConnectorError" in str(endpoint.reason)
        assert endpoint.snapshot is not None  # the last one is kept, shown as stale
        await contract_fake.start(port)
        await watch.poll_once(endpoint)
        assert endpoint.state == "up" and endpoint.reason is None
        assert len(endpoint.history) == 2


def test_operator_urls_are_checked() -> None:
    assert normalize_operator_url("127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert normalize_operator_url("http://127.0.0.1:8080/metrics") == "http://127.0.0.1:8080"
    with pytest.raises(ValueError, match=r"only http:// and https:// URLs"):
        normalize_operator_url("ftp://x")
    with pytest.raises(ValueError, match=r"no host"):
        normalize_operator_url("http://")


async def test_the_timeline_joins_audit_trace_and_events_then_streams(
    console: RunningConsole, client: Client, namespace: str, contract_fake: ContractFake
) -> None:
    await install_crds(client, FOO_CRD)
    foo = await client.create(
        {
            "apiVersion": FOO,
            "kind": "Foo",
            "metadata": {"name": "foo-1", "namespace": namespace},
            "spec": {"deploymentName": "foo-1", "replicas": 1},
        }
    )
    uid = foo["metadata"]["uid"]
    foo_story(contract_fake, namespace, "foo-1", uid)
    contract_fake.add_trace(
        {
            "type": "enqueue",
            "controller": "foo",
            "key": f"{namespace}/other",
            "object": {"apiVersion": FOO, "kind": "Foo", "namespace": namespace, "name": "other"},
        }
    )
    await console.state.operators.poll_once(console.state.operators.endpoints[0])
    params = {"apiVersion": FOO, "kind": "Foo", "namespace": namespace, "name": "foo-1"}
    async with console.http.get(console.url + "/api/timeline/stream", params=params) as stream:
        events = _events(stream)
        async with asyncio.timeout(10):
            name, reset = await anext(events)
        assert name == "reset"
        assert reset["sources"]["audit"]["state"] == "ok"
        assert reset["sources"][contract_fake.url]["state"] == "ok"
        entries = reset["entries"]
        kinds = [e.get("type") or e.get("verb") for e in entries if e["source"] != "event"]
        assert kinds.count("reconcileEnd") == 4 and "other" not in json.dumps(entries)
        patches = [e["diff"] for e in entries if e["source"] == "audit" and e["verb"] == "patch"]
        assert patches[0] == [{"op": "replace", "path": "/spec/replicas", "value": 3}]
        child = [e for e in entries if e.get("about") == "child"]
        assert [c["objectRef"]["kind"] for c in child] == ["Deployment"]
        errors = [e for e in entries if e.get("result") == "error"]
        assert {e["error"] for e in errors} == {ERROR} and errors[0]["backoffSeconds"] == 0.01
        contract_fake.add_audit(
            {
                "verb": "delete",
                "objectRef": {
                    "apiVersion": FOO,
                    "resource": "foos",
                    "kind": "Foo",
                    "namespace": namespace,
                    "name": "foo-1",
                    "uid": uid,
                },
            }
        )
        async with asyncio.timeout(10):
            name, entry = await anext(events)
        assert (name, entry["source"], entry["verb"]) == ("entry", "audit", "delete")


async def test_the_timeline_follows_an_operator_through_its_restart(
    console: RunningConsole, client: Client, namespace: str, contract_fake: ContractFake
) -> None:
    obj = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": namespace},
        }
    )
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": namespace,
        "name": "cm",
        "uid": obj["metadata"]["uid"],
    }
    for number in range(5):
        contract_fake.add_trace(
            {
                "type": "enqueue",
                "controller": "cm",
                "object": ref,
                "key": f"{namespace}/cm",
                "cause": {"kind": "event"},
                "note": f"before {number}",
            }
        )
    params = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "name": "cm"}
    async with console.http.get(console.url + "/api/timeline/stream", params=params) as stream:
        events = _events(stream)
        async with asyncio.timeout(10):
            name, reset = await anext(events)
        assert [e.get("note") for e in reset["entries"] if e["source"] == "trace"] == [
            f"before {number}" for number in range(5)
        ]
        port = contract_fake.port
        await contract_fake.stop()
        states: list[str] = []
        async with asyncio.timeout(10):
            while "gone" not in states:  # (the fake is the audit feed too: it goes as well)
                name, change = await anext(events)
                if name == "source" and change["source"] == contract_fake.url:
                    states.append(change["state"])
        contract_fake.trace.clear()  # a new process: its sequence starts again at 1
        await contract_fake.start(port)
        contract_fake.add_trace(
            {
                "type": "enqueue",
                "controller": "cm",
                "object": ref,
                "key": f"{namespace}/cm",
                "cause": {"kind": "event"},
                "note": "after the restart",
            }
        )
        notes: list[str] = []
        async with asyncio.timeout(10):
            while not notes:
                name, change = await anext(events)
                if name == "source" and change["source"] == contract_fake.url:
                    states.append(change["state"])
                elif name == "entry" and change["source"] == "trace":
                    notes.append(change["note"])
        assert states == ["gone", "ok"] and notes == ["after the restart"]


async def test_without_an_audit_feed_the_timeline_follows_the_object_s_watch(
    local_cluster: BackgroundCluster, client: Client, namespace: str
) -> None:
    no_feed = ContractFake(serve_audit=False)
    await no_feed.start()
    runner, console, clients = await open_console(
        str(local_cluster.kubeconfig_path), [], no_feed.url
    )
    try:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "data": {"a": "1"},
                "metadata": {"name": "watched", "namespace": namespace},
            }
        )
        params = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "namespace": namespace,
            "name": "watched",
        }
        async with console.http.get(console.url + "/api/timeline/stream", params=params) as got:
            events = _events(got)
            async with asyncio.timeout(10):
                name, reset = await anext(events)
            assert reset["sources"]["audit"]["state"] == "unavailable"
            await client.patch(
                "v1", "ConfigMap", "watched", {"data": {"a": "2"}}, namespace=namespace
            )
            async with asyncio.timeout(10):
                name, entry = await anext(events)
        assert (name, entry["source"], entry["verb"]) == ("entry", "watch", "update")
        assert entry["diff"] == [{"op": "replace", "path": "/data/a", "value": "2"}]
    finally:
        await runner.cleanup()
        await console.http.close()
        for opened in clients:
            await opened.close()
        await no_feed.stop()
