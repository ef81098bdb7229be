"""``/debug/setpoint/audit``: the local cluster's recent writes with their diffs.

Read over HTTP as the console reads it: what kubectl's writes changed, who made them, the
requests that failed; Secret values redacted; the filters, the stream, and authorization as a
non-resource URL.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from setpoint.api.times import parse_micro_time
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI, raw_api

FEED = "/debug/setpoint/audit"
SA = "system:serviceaccount:default:console"
AS_SA = {"Impersonate-User": SA}


async def feed(api: RawAPI, query: str = "", headers: dict[str, str] | None = None) -> Any:
    reply = await api.request("GET", FEED + query, headers=headers)
    assert reply.status == 200, reply.body
    return reply.body


async def test_kubectl_writes_are_recorded_with_who_what_and_the_diff(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with (
        LocalCluster(controllers=False, audit_log=log) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        kubectl = Kubectl(cluster.kubeconfig_path, tmp_path / "cache")

        def run(*args: str) -> None:
            kubectl.run(*args)

        await asyncio.to_thread(
            run, "create", "configmap", "settings", "-n", "default", "--from-literal=size=1"
        )
        await asyncio.to_thread(
            run, "patch", "configmap", "settings", "-n", "default", "--type=merge",
            "-p", '{"data":{"size":"3","color":"blue"}}',
        )  # fmt: skip
        stale = await api.request(
            "PUT",
            "/api/v1/namespaces/default/configmaps/settings",
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "settings", "resourceVersion": "1"}},
        )  # fmt: skip
        await asyncio.to_thread(run, "delete", "configmap", "settings", "-n", "default")
        await api.request("GET", "/api/v1/namespaces/default/configmaps")  # not recorded
        body = await feed(api, "?resource=configmaps&namespace=default")
        cluster.flush_audit_log()
        logged = {
            event["auditID"]: event
            for event in map(json.loads, log.read_text().splitlines())
            if event.get("objectRef", {}).get("resource") == "configmaps"
        }
    assert stale.status == 409
    created, patched, conflict, deleted = body["records"]
    assert [r["seq"] for r in body["records"]] == sorted(r["seq"] for r in body["records"])
    assert body["lastSeq"] >= deleted["seq"]
    assert [r["verb"] for r in body["records"]] == ["create", "patch", "update", "delete"]
    # The create keeps the object (without managedFields), and says who made it and how.
    assert created["responseCode"] == 201 and created["diff"] is None
    assert created["object"]["data"] == {"size": "1"}
    assert "managedFields" not in created["object"]["metadata"]
    assert created["user"]["username"] == "setpoint-admin"
    assert "system:masters" in created["user"]["groups"]
    assert created["userAgent"].startswith("kubectl")
    assert created["auditID"] in logged, "the audit log's ID"
    assert created["objectRef"] == {
        "apiVersion": "v1",
        "apiGroup": "",
        "resource": "configmaps",
        "kind": "ConfigMap",
        "namespace": "default",
        "name": "settings",
        "uid": created["object"]["metadata"]["uid"],
        "subresource": None,
    }
    # The patch: what changed, as a JSON patch from the stored object to the new one.
    assert patched["fieldManager"] == "kubectl-patch"
    assert patched["responseCode"] == 200
    assert sorted(patched["diff"], key=lambda op: op["path"]) == [
        {"op": "add", "path": "/data/color", "value": "blue"},
        {"op": "replace", "path": "/data/size", "value": "3"},
    ]
    assert int(patched["resourceVersion"]) > int(created["resourceVersion"])
    # A refused write is recorded too, with its code and no change.
    assert conflict["responseCode"] == 409 and conflict["diff"] is None
    assert conflict["resourceVersion"] is None and conflict["objectRef"]["name"] == "settings"
    assert deleted["responseCode"] == 200 and deleted["diff"] is None
    assert deleted["resourceVersion"] is not None
    assert all(parse_micro_time(r["time"]) and r["time"].endswith("Z") for r in body["records"])


async def test_secret_values_are_redacted_in_created_objects_and_diffs(tmp_path: Path) -> None:
    async with (
        LocalCluster(controllers=False) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        kubectl = Kubectl(cluster.kubeconfig_path, tmp_path / "cache")
        manifest = tmp_path / "secret.yaml"
        manifest.write_text(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\n"
            "stringData: {password: hunter2}\n"
        )
        await asyncio.to_thread(kubectl.run, "apply", "-f", str(manifest))
        manifest.write_text(manifest.read_text().replace("hunter2", "correct-horse"))
        await asyncio.to_thread(kubectl.run, "apply", "-f", str(manifest))
        reply = await api.request("GET", FEED + "?resource=secrets")
    text = reply.raw.decode()
    for value in ("hunter2", "aHVudGVyMg==", "correct-horse", "Y29ycmVjdC1ob3JzZQ=="):
        assert value not in text
    created, changed = reply.body["records"]
    assert created["object"]["data"] == {"password": "<redacted>"}
    annotations = created["object"]["metadata"]["annotations"]
    assert annotations["kubectl.kubernetes.io/last-applied-configuration"] == "<redacted>"
    assert {"op": "replace", "path": "/data/password", "value": "<redacted>"} in changed["diff"]


async def test_reading_the_feed_needs_the_non_resource_url_rule(tmp_path: Path) -> None:
    async with (
        LocalCluster(controllers=False) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        denied = await api.request("GET", FEED, headers=AS_SA)
        await api.request(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "audit-reader"},
             "rules": [{"nonResourceURLs": [FEED], "verbs": ["get"]}]},
        )  # fmt: skip
        await api.request(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "audit-reader"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "audit-reader"},
             "subjects": [{"kind": "ServiceAccount", "name": "console",
                           "namespace": "default"}]},
        )  # fmt: skip

        async def allowed() -> Any:
            for _ in range(100):
                reply = await api.request("GET", FEED, headers=AS_SA)
                if reply.status == 200:
                    return reply
                await asyncio.sleep(0.05)
            return reply

        granted = await allowed()
        wrong_verb = await api.request("DELETE", FEED, headers=AS_SA)
        bad = await api.request("GET", FEED + "?since=soon")
    assert denied.status == 403
    assert denied.body["reason"] == "Forbidden"
    assert denied.body["message"] == (f'forbidden: User "{SA}" cannot get path "{FEED}"')
    assert granted.status == 200
    records = granted.body["records"]
    assert [r["objectRef"]["resource"] for r in records][-2:] == [
        "clusterroles",
        "clusterrolebindings",
    ]
    assert wrong_verb.status == 403
    assert bad.status == 400
    assert bad.body["message"] == "since: must be a whole number, got 'soon'"


async def test_the_watch_streams_new_writes_as_they_are_made_until_the_server_stops(
    tmp_path: Path,
) -> None:
    cluster = LocalCluster(controllers=False)
    await cluster.__aenter__()
    try:
        async with raw_api(cluster.url, cluster.token) as api:
            last_seq = (await feed(api))["lastSeq"]
            url = f"{cluster.url}{FEED}?watch=1&since={last_seq}&name=streamed"
            async with api.session.get(url) as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == "text/event-stream"
                for name in ("other", "streamed"):
                    await api.request(
                        "POST",
                        "/api/v1/namespaces/default/configmaps",
                        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
                    )
                lines: list[str] = []
                async with asyncio.timeout(30):
                    while not lines or lines[-1] != "":
                        lines.append((await response.content.readline()).decode().rstrip("\n"))
                received = time.time()
                # Stopping the server ends the open stream.
                async with asyncio.timeout(30):
                    await cluster.__aexit__(None, None, None)
                    assert await response.content.read() == b""
    except BaseException:
        await cluster.__aexit__(None, None, None)
        raise
    seq_line, event_line, data_line, _ = lines
    record = json.loads(data_line.removeprefix("data: "))
    assert event_line == "event: audit"
    assert seq_line == f"id: {record['seq']}" and record["seq"] > last_seq + 1
    assert (record["verb"], record["objectRef"]["name"]) == ("create", "streamed")
    assert received - parse_micro_time(record["time"]).timestamp() < 1.0


async def test_a_deletecollection_names_no_single_object() -> None:
    async with (
        LocalCluster(controllers=False) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        for name in ("a", "b"):
            await api.request(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
            )
        deleted = await api.request("DELETE", "/api/v1/namespaces/default/configmaps")
        (record,) = (await feed(api, "?resource=configmaps"))["records"][-1:]
    assert deleted.status == 200
    assert record["verb"] == "deletecollection" and record["responseCode"] == 200
    assert record["objectRef"]["name"] is None and record["objectRef"]["uid"] is None
    assert record["objectRef"]["kind"] == "ConfigMap"
    assert record["diff"] is None and record["resourceVersion"] is None


def test_begin_then_complete_or_abandon_sets_the_capture_back() -> None:
    """The capture a mutating request gets is the one its record keeps; completing or
    abandoning the request puts back the capture that was there before (none, or an outer
    one); reads are not captured; the audit log's ID is taken when there is an audit log."""
    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    from setpoint.cluster.apiserver.audit.audit_feed import AuditFeed
    from setpoint.cluster.apiserver.registry.served_resources import ServedResource
    from setpoint.cluster.apiserver.registry.write_capture import WRITE_CAPTURE, WriteCapture

    config_maps = ServedResource(
        group="", version="v1", plural="configmaps", kind="ConfigMap", namespaced=True
    )
    path = "/api/v1/namespaces/default/configmaps"
    stored = b'{"metadata":{"name":"a","namespace":"default","uid":"u1"}}'
    for audit_id in (None, lambda request: "id-1"):
        feed = AuditFeed(10, audit_id=audit_id)
        assert feed.begin(make_mocked_request("GET", path)) is None
        outer = WriteCapture()
        outer_token = WRITE_CAPTURE.set(outer)
        try:
            recording = feed.begin(make_mocked_request("POST", path))
            assert recording is not None
            capture = WRITE_CAPTURE.get()
            assert capture is recording[0] and capture is not outer
            capture.wrote(config_maps, None, stored, 7)
            feed.complete(make_mocked_request("POST", path), web.Response(status=201), recording)
            assert WRITE_CAPTURE.get() is outer
            abandoned = feed.begin(make_mocked_request("DELETE", path + "/a"))
            assert abandoned is not None and WRITE_CAPTURE.get() is abandoned[0]
            AuditFeed.abandon(abandoned)
            assert WRITE_CAPTURE.get() is outer
        finally:
            WRITE_CAPTURE.reset(outer_token)
        ((seq, record),) = feed.ring.since(0)[0]
        assert seq == 1 and record.capture is capture and record.status == 201
        assert record.audit_id == (None if audit_id is None else "id-1")
        document = record.document()
        assert document is not None
        assert document["objectRef"]["name"] == "a" and document["resourceVersion"] == "7"
