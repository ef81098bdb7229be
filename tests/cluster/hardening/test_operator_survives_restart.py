"""An operator keeps working across a restart of an in-memory local cluster.

Before, its reflectors resumed watching from the old server's resourceVersion, which the new
server accepted silently: the stream dropped every event up to it and nothing recreated was
reconciled. Now the old revision is too old for the new server, so the reflectors relist.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from setpoint.client import Client, ClientConfig, StaticToken
from setpoint.cluster.apiserver.http import fresh_revision
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage
from setpoint.cluster.local_cluster import LocalCluster
from tests.controller.mini_manager import MiniManager
from tests.controller.test_integration import copy_controller, source_config_map
from tests.controller.waiting import wait_until_async

SOURCES = 20
TOKEN = "restart-test-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def children_count(client: Client) -> int:
    listed: list[Any] = await client.list(
        "v1", "ConfigMap", namespace="default", label_selector="role=child"
    )
    return len(listed)


async def test_an_operator_reconciles_objects_recreated_after_a_restart() -> None:
    port = free_port()
    config = ClientConfig(server=f"http://127.0.0.1:{port}", credentials=StaticToken(TOKEN))
    first = LocalCluster(in_memory=True, port=port, https_port=None, token=TOKEN)
    await first.start()
    client = await Client.from_config(config, field_manager="restart-test")
    manager = MiniManager(client)
    try:
        copy_controller(manager, "copier")
        async with manager:
            for i in range(SOURCES):
                await client.create(source_config_map("default", f"s{i}", "one"))
            await wait_until_async(lambda: _has(client, SOURCES))
            await first.stop()

            second = LocalCluster(in_memory=True, port=port, https_port=None, token=TOKEN)
            await second.start()
            try:
                for i in range(SOURCES):
                    await client.create(source_config_map("default", f"s{i}", "two"))
                await wait_until_async(lambda: _has(client, SOURCES), within=60)
            finally:
                await second.stop()
    finally:
        await client.close()
        await first.stop()


async def _has(client: Client, count: int) -> bool:
    return await children_count(client) == count


async def test_an_operator_relists_when_its_revision_is_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that comes back *behind* the operator's revision (a restore from an older
    backup, a counter that restarted low): the watch gets 504 Too large, the reflector relists."""
    monkeypatch.setattr(fresh_revision, "BLOCK_TIMEOUT_SECONDS", 0.2)
    port = free_port()
    config = ClientConfig(server=f"http://127.0.0.1:{port}", credentials=StaticToken(TOKEN))
    ahead = MemoryStorage(start_revision=1_000_000)
    first = APIServer(ahead, port=port, https_port=None, token=TOKEN)
    await first.start()
    client = await Client.from_config(config, field_manager="restart-test")
    manager = MiniManager(client)
    try:
        copy_controller(manager, "copier")
        async with manager:
            for i in range(SOURCES):
                await client.create(source_config_map("default", f"s{i}", "one"))
            await wait_until_async(lambda: _has(client, SOURCES))
            await first.stop()

            behind = MemoryStorage()  # revisions start at 0 again
            second = APIServer(behind, port=port, https_port=None, token=TOKEN)
            await second.start()
            try:
                for i in range(SOURCES):
                    await client.create(source_config_map("default", f"s{i}", "two"))
                await wait_until_async(lambda: _has(client, SOURCES), within=60)
            finally:
                await second.stop()
    finally:
        await client.close()
        await first.stop()
