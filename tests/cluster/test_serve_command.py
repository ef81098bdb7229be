"""``setpoint cluster serve`` as users run it: readiness, clean stop, durability across kill -9."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.cluster.serve_process import ServeProcess, connection_of

pytestmark = pytest.mark.slow

#: Concurrent writers in the durability test, so a kill lands with writes in flight.
WRITERS = 8
#: Acknowledged writes before the server is killed.
WRITES_BEFORE_KILL = 120


async def _get(url: str, token: str, ssl_context: object, path: str) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.get(url + path, ssl=ssl_context) as response,
    ):
        return response.status, await response.json()


async def test_kubeconfig_is_written_once_the_server_answers(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "kubeconfig", "--in-memory")
    try:
        config = server.wait_for_kubeconfig()
        url, token, context = connection_of(config)
        status, body = await _get(url, token, context, "/api/v1/namespaces/default")
        assert status == 200
        assert body["status"]["phase"] == "Active"
        status, body = await _get(url, "wrong-token", context, "/api/v1/namespaces")
        assert (status, body["reason"]) == (401, "Unauthorized")
    finally:
        server.close()


async def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "kubeconfig", "--in-memory")
    server.wait_for_kubeconfig()
    assert server.terminate(signal.SIGTERM) == 0


async def _write_until_killed(
    url: str, token: str, context: object, server: ServeProcess
) -> dict[str, str]:
    """Create ConfigMaps from several writers; kill -9 the server mid-stream.

    Returns name -> resourceVersion of every create the server acknowledged.
    """
    acknowledged: dict[str, str] = {}
    counter = iter(range(1_000_000))
    killed = asyncio.Event()

    async def writer(session: aiohttp.ClientSession) -> None:
        while True:
            name = f"cm-{next(counter):06d}"
            body = {"metadata": {"name": name}, "data": {"n": name}}
            try:
                async with session.post(
                    f"{url}/api/v1/namespaces/default/configmaps", json=body, ssl=context
                ) as response:
                    if response.status != 201:
                        return
                    created = await response.json()
            except (aiohttp.ClientError, OSError):
                return
            acknowledged[name] = created["metadata"]["resourceVersion"]
            if len(acknowledged) >= WRITES_BEFORE_KILL and not killed.is_set():
                killed.set()
                server.process.kill()

    timeout = aiohttp.ClientTimeout(total=60)
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
        await asyncio.gather(*(writer(session) for _ in range(WRITERS)))
    assert killed.is_set()
    return acknowledged


async def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = ServeProcess(tmp_path / "kubeconfig-1", "--data-dir", str(data_dir))
    try:
        url, token, context = connection_of(first.wait_for_kubeconfig())
        acknowledged = await _write_until_killed(url, token, context, first)
    finally:
        first.close()

    second = ServeProcess(tmp_path / "kubeconfig-2", "--data-dir", str(data_dir))
    try:
        url, token, context = connection_of(second.wait_for_kubeconfig())
        status, listed = await _get(url, token, context, "/api/v1/namespaces/default/configmaps")
        assert status == 200
        stored = {
            item["metadata"]["name"]: item["metadata"]["resourceVersion"]
            for item in listed["items"]
        }
        missing = {name for name in acknowledged if name not in stored}
        assert not missing
        changed = {name for name, rv in acknowledged.items() if stored[name] != rv}
        assert not changed
        # A watch resumes from a resourceVersion acknowledged before the crash.
        oldest = min(int(rv) for rv in acknowledged.values())
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as session,
            session.get(
                f"{url}/api/v1/namespaces/default/configmaps"
                f"?watch=1&resourceVersion={oldest}&timeoutSeconds=1",
                ssl=context,
            ) as response,
        ):
            lines = [line async for line in response.content if line.strip()]
        assert lines
        assert all(b'"type":"ADDED"' in line for line in lines)
    finally:
        second.close()
