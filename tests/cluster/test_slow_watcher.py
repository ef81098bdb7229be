"""A watcher that stops reading is dropped; writers and other watchers carry on."""

from __future__ import annotations

import asyncio
import json

import pytest

from setpoint.cluster.apiserver.http import watch_stream
from tests.cluster.raw_api import RawAPI

#: Bytes per object: large enough that the unread stream fills the socket buffers quickly.
OBJECT_BYTES = 64 * 1024
WRITES = 200


async def test_slow_watcher_is_closed_and_does_not_block_writers(
    api: RawAPI, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_stream, "WATCHER_BUFFER", 4)
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = (await api.request("GET", path)).body["metadata"]["resourceVersion"]
    watch_url = f"{api.url}{path}?watch=1&resourceVersion={start}&timeoutSeconds=60"
    async with api.session.get(watch_url) as slow, api.session.get(watch_url) as healthy:
        seen = 0

        async def read_healthy() -> None:
            nonlocal seen
            async for line in healthy.content:
                if line.strip():
                    seen += 1
                    if seen == WRITES:
                        return

        reader = asyncio.create_task(read_healthy())
        payload = "x" * OBJECT_BYTES
        for index in range(WRITES):
            reply = await api.request(
                "POST", path, {"metadata": {"name": f"big-{index}"}, "data": {"p": payload}}
            )
            assert reply.status == 201
        await asyncio.wait_for(reader, 30)
        assert seen == WRITES  # the healthy watcher got everything
        # The slow one was cut off: its stream ends early, without every event.
        lines = await asyncio.wait_for(slow.content.read(), 30)
        received = [json.loads(line) for line in lines.split(b"\n") if line.strip()]
        assert len(received) < WRITES
