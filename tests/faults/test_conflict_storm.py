"""Conflict storm: 10 writers update one object concurrently through the runtime's helpers
(create_or_update inside retry_on_conflict): every update lands, none is lost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from setpoint.client import Client, Conflict, retry_on_conflict
from setpoint.controller.create_or_update import create_or_update

WRITERS = 10
UPDATES_EACH = 10


async def test_ten_writers_lose_no_update(client: Client, namespace: str) -> None:
    conflicts = 0

    async def writer(index: int) -> None:
        nonlocal conflicts
        for _ in range(UPDATES_EACH):

            def bump(obj: dict[str, Any]) -> None:
                data = obj.setdefault("data", {})
                data["total"] = str(int(data.get("total", "0")) + 1)
                data[f"w{index}"] = str(int(data.get(f"w{index}", "0")) + 1)

            async def attempt() -> None:
                nonlocal conflicts
                target = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "storm", "namespace": namespace},
                }
                try:
                    await create_or_update(client, target, bump)
                except Conflict:
                    conflicts += 1
                    raise

            # 10 writers on one object: far more contention than DefaultRetry's 5 attempts.
            await retry_on_conflict(attempt, attempts=200)

    await asyncio.gather(*(writer(index) for index in range(WRITERS)))
    stored = await client.get("v1", "ConfigMap", "storm", namespace=namespace)
    assert stored["data"]["total"] == str(WRITERS * UPDATES_EACH)
    assert all(stored["data"][f"w{i}"] == str(UPDATES_EACH) for i in range(WRITERS))
    assert conflicts > 0  # the storm happened
    print(
        f"FIGURES conflict storm: {WRITERS * UPDATES_EACH} updates, {conflicts} conflicts retried"
    )


async def test_retry_on_conflict_gives_up_after_its_attempts() -> None:
    calls = 0

    async def always_conflicts() -> None:
        nonlocal calls
        calls += 1
        raise Conflict({"code": 409, "reason": "Conflict", "message": "modified"})

    with pytest.raises(Conflict):
        await retry_on_conflict(always_conflicts)
    assert calls == 5  # client-go's DefaultRetry
