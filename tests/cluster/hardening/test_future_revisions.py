"""A watch or list from a resourceVersion the server has not reached.

kube-apiserver waits up to 3 s for it, then answers 504 "Too large resource version" with the
cause ResourceVersionTooLarge, on which reflectors relist. A server restarted in memory
starts its revisions above any an earlier one handed out, so an old revision is too old.
"""

from __future__ import annotations

import asyncio

import pytest

from setpoint.cluster.apiserver.http import fresh_revision
from setpoint.cluster.apiserver.storage import MemoryStorage
from setpoint.cluster.local_cluster import open_storage
from tests.cluster.hardening.conftest import served

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(autouse=True)
def short_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fresh_revision, "BLOCK_TIMEOUT_SECONDS", 0.2)


def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def assert_too_large(status: dict[str, object], requested: int) -> None:
    assert status["code"] == 504
    assert status["reason"] == "Timeout"
    assert str(status["message"]).startswith(f"Timeout: Too large resource version: {requested}")
    details = status["details"]
    assert isinstance(details, dict)
    assert details["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert details["retryAfterSeconds"] == 1


async def test_a_watch_from_a_future_revision_gets_too_large() -> None:
    storage = MemoryStorage()
    async with served(storage) as (_, api):
        future = storage.revision + 1000
        events = await api.watch(f"{CONFIGMAPS}?watch=1&resourceVersion={future}&timeoutSeconds=2")
        assert [e["type"] for e in events] == ["ERROR"]
        assert_too_large(events[0]["object"], future)
    await storage.close()


async def test_a_list_from_a_future_revision_gets_too_large() -> None:
    storage = MemoryStorage()
    async with served(storage) as (_, api):
        future = storage.revision + 5
        reply = await api.request("GET", f"{CONFIGMAPS}?resourceVersion={future}")
        assert reply.status == 504
        assert_too_large(reply.body, future)
    await storage.close()


async def test_a_watch_from_a_revision_reached_while_waiting_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fresh_revision, "BLOCK_TIMEOUT_SECONDS", 30.0)
    storage = MemoryStorage()
    async with served(storage) as (_, api):
        soon = storage.revision + 1
        watching = asyncio.create_task(
            api.watch(f"{CONFIGMAPS}?watch=1&resourceVersion={soon}&timeoutSeconds=1")
        )
        await asyncio.sleep(0.05)
        assert (await api.request("POST", CONFIGMAPS, configmap("a"))).status == 201
        assert (await api.request("POST", CONFIGMAPS, configmap("b"))).status == 201
        events = await watching
        # Events after the requested revision only: "a" is at it, "b" after it.
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "b")]
    await storage.close()


async def test_a_revision_of_an_earlier_in_memory_server_is_too_old() -> None:
    first = open_storage(None)
    async with served(first) as (_, api):
        for i in range(20):
            assert (await api.request("POST", CONFIGMAPS, configmap(f"c{i}"))).status == 201
        old = int((await api.request("GET", CONFIGMAPS)).body["metadata"]["resourceVersion"])
    await first.close()

    second = open_storage(None)
    async with served(second) as (_, api):
        assert second.revision > old
        events = await api.watch(f"{CONFIGMAPS}?watch=1&resourceVersion={old}&timeoutSeconds=2")
        assert [e["type"] for e in events] == ["ERROR"]
        assert events[0]["object"]["code"] == 410
        assert events[0]["object"]["reason"] == "Expired"
    await second.close()
