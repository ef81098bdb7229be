"""The recording client of a reconcile: its writes' answers reach the cache as the server sent
them, each task its own, and nothing is left behind for the next call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.cache import Cache
from setpoint.client.answer_capture import ANSWER_CAPTURE
from setpoint.client.client import Client
from setpoint.client.errors import ApiError
from setpoint.manager.recording_client import RecordingClient
from setpoint.testing import BackgroundCluster


@pytest.fixture
async def client(local_cluster: BackgroundCluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        yield client


@pytest.fixture
async def cache(client: Client, namespace: str) -> AsyncIterator[Cache]:
    cache = Cache(client)
    await cache.start()
    await cache.list("v1", "ConfigMap", namespace)  # starts and syncs the ConfigMap informer
    yield cache
    await cache.stop()


def config_map(namespace: str, name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"value": value},
    }


async def test_concurrent_writes_each_record_their_own_answer(
    client: Client, cache: Cache, namespace: str
) -> None:
    informer = await cache.informer_for("v1", "ConfigMap")
    await informer.stop()  # no watch to catch up: the reads below come from the records

    async def write(n: int) -> dict[str, Any]:
        recording = RecordingClient(client, cache, None)
        await asyncio.sleep(0.001 * (n % 3))  # interleave the tasks' requests
        if n % 2:
            answer = await recording.apply(config_map(namespace, f"cm{n}", str(n)), force=True)
        else:
            answer = await recording.create(config_map(namespace, f"cm{n}", str(n)))
        return dict(answer)

    answers = await asyncio.gather(*(write(n) for n in range(12)))
    for n, answer in enumerate(answers):
        got = await cache.get("v1", "ConfigMap", f"cm{n}", namespace)
        assert got is not None
        assert got["data"] == {"value": str(n)}
        assert got["metadata"]["resourceVersion"] == answer["metadata"]["resourceVersion"]
        assert got["metadata"]["uid"] == answer["metadata"]["uid"]
    assert ANSWER_CAPTURE.get() is None


async def test_a_failed_or_dry_run_write_leaves_no_capture_and_no_record(
    client: Client, cache: Cache, namespace: str
) -> None:
    recording = RecordingClient(client, cache, None)
    await recording.create(config_map(namespace, "taken", "1"))
    with pytest.raises(ApiError):
        await recording.create(config_map(namespace, "taken", "2"))
    assert ANSWER_CAPTURE.get() is None
    dry = await recording.apply(config_map(namespace, "dry", "1"), force=True, dry_run=True)
    assert dry["metadata"]["name"] == "dry"
    assert ANSWER_CAPTURE.get() is None
    assert await cache.get("v1", "ConfigMap", "dry", namespace) is None
    got = await cache.get("v1", "ConfigMap", "taken", namespace)
    assert got is not None and got["data"] == {"value": "1"}
