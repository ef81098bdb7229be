"""Stand-in cluster fixtures until `setpoint.testing.plugin` provides `local_cluster`/`namespace`.

Same names and attributes (`.url`, `.token`, `.kubeconfig_path`) as the plugin's, so the tests
switch over by deleting this file.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from setpoint.client.client import Client
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage


@dataclass
class StandInCluster:
    url: str
    token: str
    kubeconfig_path: str


def _write_kubeconfig(path: Path, url: str, token: str) -> None:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": {"server": url}}],
                "users": [{"name": "local", "user": {"token": token}}],
                "contexts": [{"name": "local", "context": {"cluster": "local", "user": "local"}}],
                "current-context": "local",
            }
        )
    )


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandInCluster]:
    """An API server on its own event loop in a thread, for the whole session."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    server = APIServer(MemoryStorage())

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, name="stand-in-apiserver", daemon=True)
    thread.start()
    assert started.wait(30), "the API server did not start"
    path = tmp_path_factory.mktemp("cluster") / "kubeconfig"
    _write_kubeconfig(path, server.url, server.token)
    yield StandInCluster(server.url, server.token, str(path))
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)


@pytest.fixture
async def namespace(local_cluster: StandInCluster) -> AsyncIterator[str]:
    """A fresh namespace per test."""
    name = f"test-{uuid.uuid4().hex[:8]}"
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        yield name
        await client.delete("v1", "Namespace", name)
