"""Two replicas with leader election (client-go's 15 s / 10 s / 2 s): kill -9 the leader and
the standby takes over once the Lease expires; SIGTERM releases the Lease and hands over at
once. The new leader converges the work. Times are recorded, not asserted."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from setpoint.client.client import Client
from setpoint.testing import BackgroundCluster
from tests.faults.support import (
    json_lines,
    kill9,
    parent,
    start_run,
    stop_process,
    wait_converged,
    write_operator,
)

pytestmark = pytest.mark.slow

LEASE = "widgets-failover"


async def holder(client: Client, namespace: str) -> str:
    try:
        lease = await client.get("coordination.k8s.io/v1", "Lease", LEASE, namespace=namespace)
    except Exception:
        return ""
    return str(lease.get("spec", {}).get("holderIdentity") or "")


def identity_of(log_file: Path) -> str:
    """The identity a replica logged when it acquired the Lease ('' if it has not)."""
    if not log_file.exists():
        return ""
    for entry in json_lines(log_file.read_text()):
        message = str(entry.get("msg", ""))
        if message.startswith("successfully acquired lease "):
            return message.rsplit(" as ", 1)[1]
    return ""


async def wait_holder(client: Client, namespace: str, logs: dict[str, Path], not_: str) -> str:
    """The replica (key of ``logs``) that holds the Lease, once it is not ``not_``."""
    async with asyncio.timeout(120):
        while True:
            current = await holder(client, namespace)
            for name, log_file in logs.items():
                if name != not_ and current and identity_of(log_file) == current:
                    return name
            await asyncio.sleep(0.1)


async def test_kill_9_fails_over_after_the_lease_and_sigterm_hands_over_at_once(
    tmp_path: Path, local_cluster: BackgroundCluster, client: Client, namespace: str
) -> None:
    target = write_operator(tmp_path)
    args = ("-n", namespace, "--leader-elect", "--leader-election-id", LEASE,
            "--leader-election-namespace", namespace)  # fmt: skip
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b", "c")}
    kubeconfig = local_cluster.kubeconfig_path
    replicas = {
        name: await start_run(target, kubeconfig, *args, log_file=logs[name]) for name in "ab"
    }
    loop = asyncio.get_running_loop()
    try:
        leader = await wait_holder(client, namespace, logs, not_="")
        await client.create(parent("w1", "1"), namespace=namespace)
        await wait_converged(client, namespace, {"w1": "1"})

        kill9(replicas[leader])
        killed = loop.time()
        successor = await wait_holder(client, namespace, logs, not_=leader)
        kill_failover = loop.time() - killed
        await client.create(parent("w2", "2"), namespace=namespace)
        await wait_converged(client, namespace, {"w1": "1", "w2": "2"})

        replicas["c"] = await start_run(target, kubeconfig, *args, log_file=logs["c"])
        async with asyncio.timeout(60):
            while "attempting to acquire leader lease" not in _text(logs["c"]):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
        replicas[successor].send_signal(signal.SIGTERM)
        terminated = loop.time()
        assert await wait_holder(client, namespace, logs, not_=successor) == "c"
        term_handover = loop.time() - terminated
        assert await stop_process(replicas[successor]) == 0
        await client.create(parent("w3", "3"), namespace=namespace)
        await wait_converged(client, namespace, {"w1": "1", "w2": "2", "w3": "3"})
    finally:
        for process in replicas.values():
            await stop_process(process)
    assert kill_failover > 0 and term_handover > 0
    print(
        f"FIGURES leader kill -9 -> standby leads after {kill_failover:.1f}s (lease 15 s); "
        f"SIGTERM -> hand-over in {term_handover:.1f}s"
    )


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""
