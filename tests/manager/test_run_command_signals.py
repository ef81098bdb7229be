"""`setpoint run` in a subprocess: SIGTERM lets the in-flight reconcile finish, then exits 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from setpoint.client.client import Client
from setpoint.client.errors import Conflict

pytestmark = pytest.mark.slow

SLOW_OPERATOR = """
import asyncio
import logging

import setpoint.manager

op = setpoint.manager.Operator("slow-op")
log = logging.getLogger("slow-op")


@op.reconciler(for_=("v1", "ConfigMap"))
async def reconcile(ctx, request):
    config_map = await ctx.get()
    if config_map is None or "done" in (config_map["metadata"].get("annotations") or {}):
        return None
    if "seconds" not in (config_map.get("data") or {}):
        return None  # not the test's (kube-root-ca.crt is in every namespace)
    log.info("reconcile started")
    await asyncio.sleep(float(config_map["data"]["seconds"]))
    config_map["metadata"].setdefault("annotations", {})["done"] = "yes"
    await ctx.client.update(config_map)
    log.info("reconcile finished")
    return None
"""

RUN = "import sys; from setpoint.cli.run import run_command; run_command(sys.argv[1:])"


class Cluster(Protocol):
    kubeconfig_path: str


@pytest.fixture
async def client(local_cluster: Cluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        yield client


async def start_operator(
    tmp_path: Path, cluster: Cluster, namespace: str, source: str = SLOW_OPERATOR
) -> asyncio.subprocess.Process:
    target = tmp_path / "slow_operator.py"
    target.write_text(source)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", RUN, str(target),
        "--kubeconfig", cluster.kubeconfig_path,
        "-n", namespace,
        "--leader-elect", "--leader-election-namespace", namespace,
        "--metrics-bind-address", "127.0.0.1:0",
        "--health-probe-bind-address", "127.0.0.1:0",
        "--log-format", "json",
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def read_until(
    process: asyncio.subprocess.Process, message: str, seen: list[dict[str, Any]]
) -> dict[str, Any]:
    """Collect JSON log lines until one has `msg` starting with `message`."""
    assert process.stderr is not None
    async with asyncio.timeout(30):
        while True:
            line = await process.stderr.readline()
            if not line:
                raise AssertionError(f"operator exited before logging {message!r}: {seen}")
            try:
                entry: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            seen.append(entry)
            if str(entry.get("msg", "")).startswith(message):
                return entry


async def wait_for_exit(process: asyncio.subprocess.Process, seen: list[dict[str, Any]]) -> int:
    """The exit code, reading the log meanwhile: a full stderr pipe must not stall the exit."""
    assert process.stderr is not None
    async with asyncio.timeout(30):
        while line := await process.stderr.readline():
            with contextlib.suppress(ValueError):
                seen.append(json.loads(line))
        return await process.wait()


async def steal_lease(client: Client, namespace: str, name: str) -> None:
    """Make "intruder" the holder of a Lease. Its leader renews it every retry period, so the
    write may conflict with a renewal: then read it again and retry."""
    for _ in range(20):
        lease = await client.get("coordination.k8s.io/v1", "Lease", name, namespace=namespace)
        lease["spec"]["holderIdentity"] = "intruder"
        lease["spec"]["leaseDurationSeconds"] = 60
        try:
            await client.update(lease)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not take over lease {name}: every write conflicted")


async def create_config_map(client: Client, namespace: str, seconds: float) -> None:
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "slow", "namespace": namespace},
            "data": {"seconds": str(seconds)},
        }
    )


async def test_sigterm_finishes_the_in_flight_reconcile_and_releases_the_lease(
    tmp_path: Path, local_cluster: Cluster, client: Client, namespace: str
) -> None:
    process = await start_operator(tmp_path, local_cluster, namespace)
    seen: list[dict[str, Any]] = []
    try:
        await read_until(process, "successfully acquired lease", seen)
        await create_config_map(client, namespace, seconds=1.0)
        started = await read_until(process, "reconcile started", seen)
        assert started["controller"] == "configmap"
        assert (started["namespace"], started["name"]) == (namespace, "slow")
        assert started["reconcileID"]
        process.send_signal(signal.SIGTERM)
        finished = await read_until(process, "reconcile finished", seen)
        assert finished["reconcileID"] == started["reconcileID"]
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    stored = await client.get("v1", "ConfigMap", "slow", namespace=namespace)
    assert stored["metadata"]["annotations"]["done"] == "yes"
    lease = await client.get(
        "coordination.k8s.io/v1", "Lease", "slow-op-leader-election", namespace=namespace
    )
    assert lease["spec"]["holderIdentity"] == ""


async def test_a_second_signal_forces_the_exit(
    tmp_path: Path, local_cluster: Cluster, client: Client, namespace: str
) -> None:
    process = await start_operator(tmp_path, local_cluster, namespace)
    seen: list[dict[str, Any]] = []
    try:
        await read_until(process, "successfully acquired lease", seen)
        await create_config_map(client, namespace, seconds=120)
        await read_until(process, "reconcile started", seen)
        process.send_signal(signal.SIGTERM)
        await read_until(process, "received SIGTERM", seen)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 1
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    stored = await client.get("v1", "ConfigMap", "slow", namespace=namespace)
    assert "done" not in (stored["metadata"].get("annotations") or {})


TWO_OPERATORS = """
import setpoint.manager

# Short lease timings, so that losing the Lease is noticed quickly.
timings = {"lease_duration": 3, "renew_deadline": 2.5, "retry_period": 0.3}
maps = setpoint.manager.Operator("maps", **timings)
secrets = setpoint.manager.Operator("secrets", **timings)


@maps.reconciler(for_=("v1", "ConfigMap"))
async def reconcile_map(request):
    return None


@secrets.reconciler(for_=("v1", "Secret"))
async def reconcile_secret(request):
    return None
"""


async def test_two_operators_run_and_losing_a_lease_exits_1(
    tmp_path: Path, local_cluster: Cluster, client: Client, namespace: str
) -> None:
    process = await start_operator(tmp_path, local_cluster, namespace, TWO_OPERATORS)
    seen: list[dict[str, Any]] = []
    try:
        started = {"controller configmap started", "controller secret started"}
        while not all(any(e["msg"].startswith(m) for e in seen) for m in started):
            await read_until(process, "controller", seen)
        await steal_lease(client, namespace, "secrets-leader-election")
        lost = await read_until(process, "leader election lost", seen)
        assert "secrets-leader-election" in lost["msg"]
        assert await wait_for_exit(process, seen) == 1
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    maps_lease = await client.get(
        "coordination.k8s.io/v1", "Lease", "maps-leader-election", namespace=namespace
    )
    assert maps_lease["spec"]["holderIdentity"] == ""  # the other one stopped cleanly
