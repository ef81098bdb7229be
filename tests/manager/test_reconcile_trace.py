"""The reconcile trace and the controllers view, read over HTTP as the console does.

A Foo-like operator (a Foo owns a Deployment of ``spec.replicas``) runs with the trace on; its
child write and a ``kubectl patch`` of the Foo show up in order, with their causes and diffs. A
failing reconcile shows its error, its backoff and its key in ``inBackoff``; Secret values never
appear; the ring keeps its bound and says when records were dropped; the stream delivers records
as they come; with the default options there is no trace (404) but the controllers view works.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from typing import Any

import aiohttp
import pytest

from setpoint import kinds
from setpoint.api.owners import set_controller_reference
from setpoint.api.times import parse_micro_time
from setpoint.client.client import Client
from setpoint.client.errors import NotFound
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request, Result
from setpoint.manager.context import Context
from setpoint.manager.operator import Operator
from setpoint.testing import install_crds, run_operator, wait_for

#: Generous: the machine running the tests is shared.
PATIENCE = 30.0
TRACED = {"trace_capacity": 2000, "metrics_bind_address": "127.0.0.1:0"}


def foo_crd(group: str) -> dict[str, Any]:
    """sample-controller's Foo: ``spec.deploymentName`` and ``spec.replicas``."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"foos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "deploymentName": {"type": "string"},
                                        "replicas": {"type": "integer"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"availableReplicas": {"type": "integer"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def foo_operator(group: str) -> Operator:
    op = Operator("foo-op")

    @op.reconciler(for_=(f"{group}/v1alpha1", "Foo"), owns=[kinds.Deployment])
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        foo = await ctx.get()
        if foo is None:
            return None
        name = foo["spec"]["deploymentName"]
        replicas = foo["spec"]["replicas"]
        deployment = await ctx.get(kinds.Deployment, name)
        if deployment is None:
            labels = {"app": name}
            child = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": request.namespace},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
                    },
                },
            }
            set_controller_reference(foo, child)
            await ctx.client.create(child)
            ctx.recorder.normal(foo, "Synced", f"created deployment {name}")
        elif deployment["spec"]["replicas"] != replicas:
            await ctx.client.patch(deployment, {"spec": {"replicas": replicas}})
            ctx.recorder.normal(foo, "Scaled", f"scaled deployment {name} to {replicas}")
        return None

    return op


async def get_json(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.json(content_type=None)


async def trace(operator: Operator, query: str = "") -> dict[str, Any]:
    assert operator.metrics_endpoint is not None
    status, body = await get_json(f"{operator.metrics_endpoint.url}/debug/setpoint/trace{query}")
    assert status == 200, body
    return dict(body)


async def controllers_view(operator: Operator) -> dict[str, Any]:
    assert operator.metrics_endpoint is not None
    url = f"{operator.metrics_endpoint.url}/debug/setpoint/controllers"
    status, body = await get_json(url)
    assert status == 200, body
    return dict(body)


async def kubectl(kubeconfig: str, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", kubeconfig, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


def first(records: list[dict[str, Any]], start: int = 0, **wanted: Any) -> int:
    """The index of the first record from ``start`` on whose fields have the wanted values."""
    for index in range(start, len(records)):
        record = records[index]
        if all(_get(record, field) == value for field, value in wanted.items()):
            return index
    raise AssertionError(f"no record with {wanted} after #{start} in {json.dumps(records)[:4000]}")


def _get(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("__"):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@pytest.fixture
def group() -> str:
    return f"trace{secrets.token_hex(4)}.example.com"


async def test_a_child_write_and_a_kubectl_patch_show_up_in_order_with_causes_and_diffs(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    await install_crds(client, foo_crd(group))
    operator_run = run_operator(
        foo_operator(group), kubeconfig=kubeconfig, namespace=namespace, **TRACED
    )
    async with operator_run as operator:
        await client.create(
            {
                "apiVersion": f"{group}/v1alpha1",
                "kind": "Foo",
                "metadata": {"name": "example-foo", "namespace": namespace},
                "spec": {"deploymentName": "example-foo", "replicas": 1},
            }
        )
        await wait_for(
            lambda: client.get("apps/v1", "Deployment", "example-foo", namespace=namespace),
            timeout=PATIENCE,
        )
        await kubectl(
            kubeconfig, "-n", namespace, "patch", f"foos.{group}", "example-foo",
            "--type=merge", "-p", '{"spec":{"replicas":3}}',
        )  # fmt: skip

        async def scaled() -> bool:
            found = await client.get("apps/v1", "Deployment", "example-foo", namespace=namespace)
            return bool(found["spec"]["replicas"] == 3)

        await wait_for(scaled, timeout=PATIENCE, what="the deployment to be scaled")

        async def settled() -> list[dict[str, Any]]:
            body = await trace(operator, "?controller=foo")
            records: list[dict[str, Any]] = body["records"]
            patched = {
                r["reconcileId"] for r in records if r["type"] == "write" and r["verb"] == "patch"
            }
            ended = {r["reconcileId"] for r in records if r["type"] == "reconcileEnd"}
            return records if patched & ended else []

        records = await wait_for(settled, timeout=PATIENCE, what="the patch's reconcile to end")

    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)
    foo_ref = {"apiVersion": f"{group}/v1alpha1", "kind": "Foo", "namespace": namespace}
    key = f"{namespace}/example-foo"
    # The Foo's creation: watch, enqueue by the object's own handler, dequeue, reconcile.
    added = first(records, type="watch", eventType="ADDED", object__kind="Foo")
    assert records[added]["ownWrite"] is False
    enqueued = first(records, added, type="enqueue", key=key)
    assert records[enqueued]["cause"] == {
        "kind": "event",
        "handler": "EnqueueRequestForObject",
        "source": {**foo_ref, "name": "example-foo"},
        "eventType": "ADDED",
    }
    started = first(records, enqueued, type="reconcileStart", key=key)
    assert records[first(records, enqueued, type="dequeue", key=key)]["queueWaitSeconds"] >= 0
    reconcile_id = records[started]["reconcileId"]
    created = first(records, started, type="write", verb="create")
    write = records[created]
    assert write["reconcileId"] == reconcile_id
    assert write["object"]["kind"] == "Deployment" and write["object"]["name"] == "example-foo"
    assert write["primary"] == {**foo_ref, "name": "example-foo", "uid": None}
    assert {"op": "add", "path": "/spec", "value": write_spec(write)} in write["diff"]
    assert write["fieldManager"] is None  # none sent: the server names it after the User-Agent
    event = first(records, created, type="event", reason="Synced")
    assert records[event]["reconcileId"] == reconcile_id
    assert records[event]["eventType"] == "Normal"
    ended = first(records, created, type="reconcileEnd", reconcileId=reconcile_id)
    assert records[ended]["result"] == "success" and records[ended]["error"] is None
    # The child's ADDED event is the operator's own write, mapped to the Foo through its owner.
    child_added = first(
        records, created, type="watch", eventType="ADDED", object__kind="Deployment"
    )
    assert records[child_added]["ownWrite"] is True
    mapped = first(records, child_added, type="enqueue", key=key)
    assert records[mapped]["ownWrite"] is True
    assert records[mapped]["cause"]["kind"] == "mapping"
    assert records[mapped]["cause"]["handler"] == (f"EnqueueRequestForOwner({group}/v1alpha1 Foo)")
    assert records[mapped]["cause"]["source"]["kind"] == "Deployment"
    # The kubectl patch: a MODIFIED Foo that is not the operator's, then the reconcile it
    # caused, whose write scales the deployment (its diff says so).
    modified = first(
        records, mapped, type="watch", eventType="MODIFIED", object__kind="Foo", ownWrite=False
    )
    cause = first(records, modified, type="enqueue", key=key, cause__eventType="MODIFIED")
    assert records[cause]["cause"]["handler"] == "EnqueueRequestForObject"
    patch_index = first(records, cause, type="write", verb="patch")
    patch = records[patch_index]
    assert {"op": "replace", "path": "/spec/replicas", "value": 3} in patch["diff"]
    assert all(not op["path"].startswith("/metadata/managedFields") for op in patch["diff"])
    assert not any(op["path"] == "/metadata/resourceVersion" for op in patch["diff"])
    scaled_id = patch["reconcileId"]
    scaled_start = first(records, cause, type="reconcileStart", reconcileId=scaled_id)
    assert scaled_start < patch_index
    assert records[first(records, patch_index, type="event", reason="Scaled")][
        "reconcileId"] == scaled_id  # fmt: skip
    end = records[first(records, patch_index, type="reconcileEnd", reconcileId=scaled_id)]
    assert end["result"] == "success" and end["durationSeconds"] >= 0
    # Every record carries a time in RFC 3339 with microseconds.
    assert all(parse_micro_time(r["time"]) for r in records)
    assert all(r["time"].endswith("Z") and len(r["time"]) == 27 for r in records)


def write_spec(write: dict[str, Any]) -> Any:
    (spec,) = [op["value"] for op in write["diff"] if op["path"] == "/spec"]
    assert spec["replicas"] == 1
    return spec


def failing_operator() -> Operator:
    op = Operator("failing-op")

    @op.reconciler(
        for_=kinds.ConfigMap,
        # A long backoff, so the key is still waiting when the test looks.
        rate_limiter=ItemExponentialFailureRateLimiter(base_delay=60.0, max_delay=600.0),
    )
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        if request.name != "broken":
            return None
        raise ValueError("the backend at db.example:5432 refused the connection\nretry later")

    return op


async def test_a_failing_reconcile_shows_its_error_backoff_and_the_key_in_backoff(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    async with run_operator(
        failing_operator(), kubeconfig=kubeconfig, namespace=namespace, **TRACED
    ) as operator:
        await client.create(
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "broken", "namespace": namespace}}
        )  # fmt: skip

        async def failed() -> list[dict[str, Any]]:
            body = await trace(operator, f"?namespace={namespace}&name=broken")
            return [r for r in body["records"] if r["type"] == "reconcileEnd"]

        (end,) = await wait_for(failed, timeout=PATIENCE, what="the failed reconcile")
        assert end["result"] == "error"
        assert end["error"] == (
            "ValueError: the backend at db.example:5432 refused the connection retry later"
        )
        assert end["backoffSeconds"] == 60.0
        records = (await trace(operator, f"?namespace={namespace}&name=broken"))["records"]
        backoff = records[first(records, type="enqueue", cause__kind="backoff")]
        assert backoff["seq"] > end["seq"] and backoff["delaySeconds"] == 60.0

        view = await controllers_view(operator)
    (controller,) = [c for c in view["controllers"] if c["name"] == "configmap"]
    assert controller["forKind"] == "v1/ConfigMap"
    (waiting,) = controller["queue"]["inBackoff"]
    assert waiting["key"] == f"{namespace}/broken"
    assert waiting["retries"] == 1
    assert 0 < waiting["nextAttemptInSeconds"] <= 60.0
    assert waiting["lastError"] == end["error"]
    assert controller["reconciles"]["errors"] >= 1
    assert controller["workers"] == {"max": 1, "busy": 0}
    assert controller["reconciles"]["latencySeconds"]["p50"] is not None
    (informer,) = [i for i in view["informers"] if i["kind"] == "v1/ConfigMap"]
    assert informer["synced"] is True and informer["objects"] >= 1
    assert informer["namespace"] == namespace
    assert view["trace"]["enabled"] is True and view["trace"]["capacity"] == 2000
    assert view["leaderElection"]["enabled"] is False
    assert view["operator"]["name"] == "failing-op"


def secret_operator() -> Operator:
    op = Operator("secret-op")

    @op.reconciler(for_=kinds.ConfigMap, owns=[kinds.Secret])
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        config_map = await ctx.get()
        if config_map is None or request.name != "wants-a-secret":
            return None
        password = (config_map.get("data") or {}).get("password", "")
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "made", "namespace": request.namespace},
            "stringData": {"password": password},
        }
        set_controller_reference(config_map, secret)
        try:
            current = await ctx.client.get("v1", "Secret", "made", namespace=request.namespace)
        except NotFound:
            await ctx.client.create(secret)
            return None
        current["stringData"] = {"password": password}
        await ctx.client.update(current)
        return None

    return op


async def test_secret_values_never_reach_the_trace(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    async with run_operator(
        secret_operator(), kubeconfig=kubeconfig, namespace=namespace, **TRACED
    ) as operator:
        config_map = await client.create(
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "wants-a-secret", "namespace": namespace},
             "data": {"password": "hunter2"}}
        )  # fmt: skip

        async def writes() -> list[dict[str, Any]]:
            body = await trace(operator, "?kind=Secret")
            return [r for r in body["records"] if r["type"] == "write"]

        await wait_for(writes, timeout=PATIENCE, what="the secret's creation")
        await client.patch(config_map, {"data": {"password": "correct-horse"}})

        async def updated() -> list[dict[str, Any]]:
            # Updates that change something (the owner's re-run after the creation writes
            # the same value: an empty diff).
            return [w for w in await writes() if w["verb"] == "update" and w["diff"]]

        (changed,) = await wait_for(updated, timeout=PATIENCE, what="the update")
        (created,) = [w for w in await writes() if w["verb"] == "create"]
        everything = json.dumps((await trace(operator))["records"])
    assert created["verb"] == "create" and changed["verb"] == "update"
    for secret_value in ("hunter2", "aHVudGVyMg==", "correct-horse", "Y29ycmVjdC1ob3JzZQ=="):
        assert secret_value not in everything
    assert {"op": "add", "path": "/data", "value": {"password": "<redacted>"}} in created["diff"]
    assert {"op": "replace", "path": "/data/password", "value": "<redacted>"} in changed["diff"]


async def test_the_ring_keeps_its_bound_and_says_when_records_were_dropped(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    options = {**TRACED, "trace_capacity": 8}
    async with run_operator(
        failing_operator(), kubeconfig=kubeconfig, namespace=namespace, **options
    ) as operator:
        for index in range(4):
            await client.create(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"cm-{index}", "namespace": namespace}}
            )  # fmt: skip

        async def full() -> dict[str, Any]:
            body = await trace(operator)
            return body if body["lastSeq"] > 20 else {}

        body = await wait_for(full, timeout=PATIENCE, what="more records than the ring holds")
        assert body["capacity"] == 8 and body["dropped"] is True
        assert len(body["records"]) == 8
        assert [r["seq"] for r in body["records"]] == list(
            range(body["lastSeq"] - 7, body["lastSeq"] + 1)
        )
        recent = await trace(operator, f"?since={body['lastSeq'] - 2}")
        assert recent["dropped"] is False
        assert [r["seq"] for r in recent["records"]][:2] == [body["lastSeq"] - 1, body["lastSeq"]]
        limited = await trace(operator, "?limit=3")
        assert len(limited["records"]) == 3
        assert operator.metrics_endpoint is not None
        status, error = await get_json(
            f"{operator.metrics_endpoint.url}/debug/setpoint/trace?since=yesterday"
        )
    assert status == 400
    assert error == {"message": "since: must be a whole number, got 'yesterday'"}


async def test_the_stream_delivers_a_new_record_within_a_second_and_ends_with_the_operator(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    operator_run = run_operator(
        failing_operator(), kubeconfig=kubeconfig, namespace=namespace, **TRACED
    )
    operator = await operator_run.__aenter__()
    try:
        assert operator.metrics_endpoint is not None
        last_seq = (await trace(operator))["lastSeq"]
        url = (
            f"{operator.metrics_endpoint.url}/debug/setpoint/trace/stream"
            f"?since={last_seq}&name=streamed"
        )
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "text/event-stream"
            await client.create(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "streamed", "namespace": namespace}}
            )  # fmt: skip
            lines = []
            async with asyncio.timeout(PATIENCE):
                while not lines or lines[-1] != "":
                    lines.append((await response.content.readline()).decode().rstrip("\n"))
            received = time.time()
            # Stopping the operator ends the open stream (it does not wait for the client).
            async with asyncio.timeout(PATIENCE):
                await operator_run.__aexit__(None, None, None)
                rest = await response.content.read()  # to the end: the server closed it
            assert response.content.at_eof()
            assert all(line.startswith((b"id: ", b"event: ", b"data: ")) for line in rest.split(
                b"\n") if line)  # fmt: skip
    except BaseException:
        await operator_run.__aexit__(None, None, None)
        raise
    seq_line, event_line, data_line, _ = lines
    record = json.loads(data_line.removeprefix("data: "))
    assert seq_line == f"id: {record['seq']}" and record["seq"] > last_seq
    assert event_line == "event: record"
    assert record["type"] == "watch" and record["object"]["name"] == "streamed"
    # From the record being made to the client reading it: within the second.
    assert received - parse_micro_time(record["time"]).timestamp() < 1.0


async def test_without_the_option_there_is_no_trace_but_the_controllers_view_works(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    async with run_operator(
        failing_operator(), kubeconfig=kubeconfig, namespace=namespace,
        metrics_bind_address="127.0.0.1:0",
    ) as operator:  # fmt: skip
        assert operator.trace is None
        assert operator.metrics_endpoint is not None
        base = f"{operator.metrics_endpoint.url}/debug/setpoint"
        status, body = await get_json(f"{base}/trace")
        assert status == 404
        assert body["message"].startswith("reconcile tracing is off")
        status, _ = await get_json(f"{base}/trace/stream")
        assert status == 404
        view = await controllers_view(operator)
    assert view["trace"] == {"enabled": False, "capacity": 0, "size": 0, "lastSeq": 0}
    assert [c["name"] for c in view["controllers"]] == ["configmap"]


def sync_operator() -> Operator:
    op = Operator("sync-op")

    @op.reconciler(for_=kinds.ConfigMap)
    def reconcile(ctx: Context, request: Request) -> Result | None:
        config_map = ctx.run(ctx.get())
        if config_map is not None and request.name == "noted":
            ctx.recorder.normal(config_map, "Noted", "seen by a sync reconciler")
        return None

    return op


async def test_an_event_recorded_by_a_sync_reconciler_belongs_to_its_reconcile(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    async with run_operator(
        sync_operator(), kubeconfig=kubeconfig, namespace=namespace, **TRACED
    ) as operator:
        await client.create(
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "noted", "namespace": namespace}}
        )  # fmt: skip

        async def noted() -> list[dict[str, Any]]:
            body = await trace(operator, f"?namespace={namespace}&name=noted")
            return [r for r in body["records"] if r["type"] == "event"]

        (event,) = await wait_for(noted, timeout=PATIENCE, what="the Event's record")
        records = (await trace(operator, f"?namespace={namespace}&name=noted"))["records"]
    start = records[first(records, type="reconcileStart")]
    assert event["reconcileId"] == start["reconcileId"]
    assert event["controller"] == "configmap"
    assert (event["reason"], event["message"]) == ("Noted", "seen by a sync reconciler")
    assert event["primary"]["name"] == "noted"
