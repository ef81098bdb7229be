"""The quickstart operator (examples/quickstart) does what docs/runtime.md says it does.

It runs the example as a user would (the file loaded as-is, or `setpoint run` on it) against the
local cluster, so a change to the runtime's API that breaks the tutorial fails here.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import secrets
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import pytest

from setpoint.client import Client, NotFound
from setpoint.manager import Manager

REPOSITORY = Path(__file__).resolve().parents[2]
QUICKSTART = REPOSITORY / "examples" / "quickstart" / "operator.py"
# Generous bound for one convergence step on a loaded 2-core machine; a step normally takes ms.
CONVERGE_TIMEOUT = 10.0


class Cluster(Protocol):
    @property
    def kubeconfig_path(self) -> Path: ...


def load_quickstart() -> ModuleType:
    """A fresh copy of the example module (so each test gets its own Operator)."""
    name = f"quickstart_operator_{secrets.token_hex(4)}"
    spec = importlib.util.spec_from_file_location(name, QUICKSTART)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def client(local_cluster: Cluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        yield client


@pytest.fixture
async def operator(local_cluster: Cluster, namespace: str) -> AsyncIterator[Manager]:
    """The quickstart operator, running against the local cluster in the test's namespace."""
    op = load_quickstart().op
    assert isinstance(op, Manager)
    op.configure(kubeconfig=str(local_cluster.kubeconfig_path), namespaces=[namespace])
    async with op:
        yield op


def config_map(name: str, namespace: str, data: dict[str, str], mirror: bool) -> dict[str, Any]:
    labels = {"setpoint.dev/mirror": "true"} if mirror else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": data,
    }


async def wait_for_mirror(
    client: Client, namespace: str, name: str, condition: Callable[[dict[str, Any] | None], bool]
) -> dict[str, Any] | None:
    async with asyncio.timeout(CONVERGE_TIMEOUT):
        return await client.wait_for("v1", "ConfigMap", name, condition, namespace=namespace)


def json_lines(output: bytes) -> list[dict[str, Any]]:
    """The JSON log entries of `output` (a traceback, if any, is not JSON and is skipped)."""
    entries = []
    for line in output.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def has_data(expected: dict[str, str]) -> Callable[[dict[str, Any] | None], bool]:
    return lambda obj: obj is not None and obj.get("data") == expected


@pytest.mark.usefixtures("operator")
async def test_mirror_converges_follows_edits_and_comes_back_when_deleted(
    client: Client, namespace: str
) -> None:
    source = await client.create(config_map("settings", namespace, {"mode": "fast"}, mirror=True))

    mirror = await wait_for_mirror(client, namespace, "settings-mirror", has_data({"mode": "fast"}))
    assert mirror is not None
    owners = mirror["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["uid"], o["controller"]) for o in owners] == [
        ("ConfigMap", "settings", source["metadata"]["uid"], True)
    ]
    assert mirror["metadata"]["labels"]["setpoint.dev/mirror-of"] == "settings"

    await client.patch(source, {"data": {"mode": "slow"}})
    await wait_for_mirror(client, namespace, "settings-mirror", has_data({"mode": "slow"}))

    # A child deleted by hand: its delete event re-reconciles the owner, which recreates it.
    await client.delete("v1", "ConfigMap", "settings-mirror", namespace=namespace)
    recreated = await wait_for_mirror(
        client, namespace, "settings-mirror", has_data({"mode": "slow"})
    )
    assert recreated is not None
    assert recreated["metadata"]["uid"] != mirror["metadata"]["uid"]

    # A child edited by hand is put back.
    await client.patch(recreated, {"data": {"mode": "tampered"}})
    await wait_for_mirror(client, namespace, "settings-mirror", has_data({"mode": "slow"}))


@pytest.mark.usefixtures("operator")
async def test_unlabelled_config_maps_get_no_mirror_and_removing_the_label_deletes_it(
    client: Client, namespace: str
) -> None:
    await client.create(config_map("plain", namespace, {"a": "1"}, mirror=False))
    source = await client.create(config_map("labelled", namespace, {"b": "2"}, mirror=True))
    await wait_for_mirror(client, namespace, "labelled-mirror", has_data({"b": "2"}))
    # The labelled one was reconciled after the plain one was created; the plain one has none.
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "plain-mirror", namespace=namespace)

    await client.patch(source, {"metadata": {"labels": {"setpoint.dev/mirror": None}}})
    await wait_for_mirror(client, namespace, "labelled-mirror", lambda obj: obj is None)


@pytest.mark.slow
async def test_setpoint_run_as_in_the_tutorial_then_sigterm_exits_0(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint.cli.main", "run", str(QUICKSTART),
        "--kubeconfig", str(local_cluster.kubeconfig_path),
        "-n", namespace,
        "--metrics-bind-address", "127.0.0.1:0",
        "--health-probe-bind-address", "127.0.0.1:0",
        "--log-format", "json",
        cwd=REPOSITORY,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await client.create(config_map("settings", namespace, {"mode": "fast"}, mirror=True))
        await wait_for_mirror(client, namespace, "settings-mirror", has_data({"mode": "fast"}))
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(CONVERGE_TIMEOUT):
            assert await process.wait() == 0
        assert process.stderr is not None
        lines = json_lines(await process.stderr.read())
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    created = [entry for entry in lines if entry.get("msg") == "mirror settings-mirror created"]
    assert created, lines
    assert (created[0]["controller"], created[0]["namespace"], created[0]["name"]) == (
        "configmap",
        namespace,
        "settings",
    )
