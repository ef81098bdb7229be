"""The event recorder against the local cluster: events.k8s.io/v1, core/v1, aggregation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from setpoint.cache.cached_object import CachedObject
from setpoint.client import Client, ClientConfig, StaticToken
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage.memory import MemoryStorage
from setpoint.controller.recorder import EventRecorder

from .waiting import wait_until


async def subject(client: Client, namespace: str, name: str = "subject") -> dict[str, Any]:
    created: dict[str, Any] = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    return created


async def events(
    client: Client, namespace: str, api_version: str = "events.k8s.io/v1"
) -> list[Any]:
    return list(await client.list(api_version, "Event", namespace=namespace))


async def test_event_is_written_with_events_api_fields(client: Client, namespace: str) -> None:
    obj = await subject(client, namespace)
    async with EventRecorder(client, "example.com/widget", reporting_instance="pod-1") as recorder:
        recorder.normal(obj, "Created", "created the thing", action="Create")
        await recorder.flush()
    (event,) = await events(client, namespace)
    assert event["reason"] == "Created"
    assert event["note"] == "created the thing"
    assert event["type"] == "Normal"
    assert event["action"] == "Create"
    assert event["reportingController"] == "example.com/widget"
    assert event["reportingInstance"] == "pod-1"
    assert event["eventTime"]
    regarding = event["regarding"]
    assert (regarding["kind"], regarding["name"], regarding["uid"]) == (
        "ConfigMap", "subject", obj["metadata"]["uid"],
    )  # fmt: skip
    assert "series" not in event


async def test_repeated_events_are_aggregated_into_one_series(
    client: Client, namespace: str
) -> None:
    obj = await subject(client, namespace)
    cached = CachedObject.from_dict(obj)
    async with EventRecorder(client, "example.com/widget") as recorder:
        recorder.warning(cached, "Failed", "backend unreachable")
        await recorder.flush()  # the first occurrence is created on its own
        for _ in range(4):
            recorder.warning(cached, "Failed", "backend unreachable")
        recorder.warning(cached, "Failed", "a different note")  # a different series
        await recorder.flush()
    by_note = {e["note"]: e for e in await events(client, namespace)}
    assert set(by_note) == {"backend unreachable", "a different note"}
    series = by_note["backend unreachable"]["series"]
    assert series["count"] == 5
    assert series["lastObservedTime"]
    assert "series" not in by_note["a different note"]


async def test_core_v1_events_when_asked(client: Client, namespace: str) -> None:
    obj = await subject(client, namespace)
    async with EventRecorder(client, "example.com/widget", events_api="v1") as recorder:
        recorder.normal(obj, "Synced", "all good")
        await recorder.flush()
        recorder.normal(obj, "Synced", "all good")
        recorder.normal(obj, "Synced", "all good")
        await recorder.flush()
    (event,) = await events(client, namespace, "v1")
    assert (event["reason"], event["message"], event["count"]) == ("Synced", "all good", 3)
    assert event["involvedObject"]["name"] == "subject"
    assert event["source"]["component"] == "example.com/widget"


async def test_recording_never_blocks_and_drops_when_overloaded(
    client: Client, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    obj = await subject(client, namespace)
    recorder = EventRecorder(client, "example.com/widget", max_pending=2)
    for i in range(10):
        recorder.normal(obj, "Burst", f"event {i}")  # distinct notes: no aggregation
    assert recorder.dropped == 8
    await recorder.stop()
    assert len(await events(client, namespace)) == 2
    assert "overloaded" in caplog.text
    recorder.normal(obj, "Late", "after stop")  # dropped, no error
    assert recorder.dropped == 9


async def test_events_from_sync_code_in_threads_are_delivered(
    client: Client, namespace: str
) -> None:
    obj = await subject(client, namespace)
    async with EventRecorder(client, "example.com/widget") as recorder:
        await asyncio.to_thread(recorder.normal, obj, "FromThread", "sync reconciler")
        await recorder.flush()
    (event,) = await events(client, namespace)
    assert event["reason"] == "FromThread"


async def test_bad_arguments_raise_naming_the_field(client: Client) -> None:
    recorder = EventRecorder(client, "example.com/widget")
    valid = {"kind": "X", "metadata": {"name": "x"}}
    with pytest.raises(ValueError, match="type"):
        recorder.event(valid, "Info", "Reason", "note")
    with pytest.raises(ValueError, match="reason"):
        recorder.event(valid, "Normal", "", "note")
    with pytest.raises(ValueError, match="regarding"):
        recorder.event({"metadata": {}}, "Normal", "Reason", "note")
    with pytest.raises(ValueError, match="events_api"):
        EventRecorder(client, "example.com/widget", events_api="v2")
    with pytest.raises(ValueError, match="reporting_controller"):
        EventRecorder(client, "")
    # The API server would reject every event of this recorder (reportingController must be a
    # qualified name): say so once, at construction, not in a warning per dropped event.
    with pytest.raises(ValueError, match="reporting_controller"):
        EventRecorder(client, "Widget Controller")
    await recorder.stop()


async def test_a_repeat_after_the_window_starts_a_new_event(client: Client, namespace: str) -> None:
    obj = await subject(client, namespace)
    now = [1000.0]
    recorder = EventRecorder(
        client, "example.com/widget", aggregation_window=60, clock=lambda: now[0]
    )
    recorder.normal(obj, "Tick", "tick")
    await recorder.flush()
    now[0] += 30  # inside the window: same series
    recorder.normal(obj, "Tick", "tick")
    await recorder.flush()
    now[0] += 61  # past the window: a new Event
    recorder.normal(obj, "Tick", "tick")
    await recorder.stop()
    counts = sorted(
        (e.get("series") or {}).get("count", 1) for e in await events(client, namespace)
    )
    assert counts == [1, 2]


async def test_events_about_cluster_scoped_objects_go_to_the_default_namespace(
    client: Client, namespace: str
) -> None:
    ns = await client.get("v1", "Namespace", namespace)
    async with EventRecorder(client, "example.com/widget") as recorder:
        recorder.normal(ns, "Labelled", "namespace labelled")
        await recorder.flush()
    mine = [e for e in await events(client, "default") if e["regarding"].get("name") == namespace]
    assert len(mine) == 1
    assert mine[0]["regarding"]["kind"] == "Namespace"
    assert "namespace" not in mine[0]["regarding"]


async def test_events_about_different_related_objects_are_separate_series(
    client: Client, namespace: str
) -> None:
    # client-go's series key includes `related`: "scaled up ReplicaSet a" and "... b" are two
    # facts, and folding the second into the first would lose which object it was about.
    obj = await subject(client, namespace)
    first = await subject(client, namespace, "related-a")
    second = await subject(client, namespace, "related-b")
    async with EventRecorder(client, "example.com/widget") as recorder:
        recorder.normal(obj, "Scaled", "scaled a child", related=first)
        await recorder.flush()
        recorder.normal(obj, "Scaled", "scaled a child", related=second)
        recorder.normal(obj, "Scaled", "scaled a child", related=second)
        await recorder.flush()
    by_related = {e["related"]["name"]: e for e in await events(client, namespace)}
    assert set(by_related) == {"related-a", "related-b"}
    assert "series" not in by_related["related-a"]
    assert by_related["related-b"]["series"]["count"] == 2


async def test_long_notes_are_cut_to_the_apis_byte_limit(client: Client, namespace: str) -> None:
    # The API server limits note (and action) in bytes of UTF-8, as Go's len() counts: a note
    # of 1000 "é" is 2000 bytes and a real cluster rejects it unless it is cut.
    obj = await subject(client, namespace)
    async with EventRecorder(client, "example.com/widget") as recorder:
        recorder.warning(obj, "Failed", "é" * 1000, action="Ré" * 100)
        await recorder.flush()
    (event,) = await events(client, namespace)
    assert len(event["note"].encode()) <= 1024
    assert event["note"].startswith("é" * 500)
    assert len(event["action"].encode()) <= 128


async def test_events_recorded_while_the_api_server_is_unreachable_are_sent_later() -> None:
    # client-go keeps retrying an event while the server cannot be reached (12 tries, 10 s
    # apart): an API server restart must not lose the events of that moment.
    storage = MemoryStorage()
    server = APIServer(storage, https_port=None)
    await server.start()
    port, token = server.port, server.token
    config = ClientConfig(server=server.url, credentials=StaticToken(token))
    restarted: APIServer | None = None
    async with await Client.from_config(config, max_retries=0) as client:
        try:
            await client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "o"}}
            )
            obj = await subject(client, "o")
            recorder = EventRecorder(client, "example.com/widget", retry_delay=0.01)
            recorder.normal(obj, "Before", "before the outage")
            await recorder.flush()
            await server.stop()
            recorder.normal(obj, "During", "while the server is down")
            await wait_until(lambda: recorder.retries >= 2)
            restarted = APIServer(storage, port=port, token=token, https_port=None)
            await restarted.start()
            await recorder.stop()
            reasons = sorted(e["reason"] for e in await events(client, "o"))
            assert reasons == ["Before", "During"]
        finally:
            await (restarted or server).stop()
