"""Two replicas with leader election (client-go's 15 s / 10 s / 2 s): kill -9 the leader and
the standby takes over once the Lease expires; SIGTERM releases the Lease and hands over at
once. The new leader converges the work. Times are recorded, not asserted.

Each replica acts as a ServiceAccount of its own (``setpoint run --as``), so the session
cluster's audit log tells who wrote what, and when: at no time do two replicas write — every
write of a leader ends before the first write of its successor begins (Lease writes aside:
every candidate makes those)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from setpoint.client.client import Client
from setpoint.testing import BackgroundCluster
from setpoint.testing.least_privilege import install_rbac, service_account_user
from tests.faults.support import (
    json_lines,
    kill9,
    parent,
    start_run,
    stop_process,
    wait_converged,
    write_operator,
)

LEASE = "widgets-failover"
#: Seconds between two changes of the ``tick`` parent: the leader always has work to do.
TICK = 0.2
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: What a replica acting as its own ServiceAccount needs: its ConfigMaps, the Lease, Events.
ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: widgets-{replica}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
"""


@dataclass(frozen=True)
class Write:
    """One write request of a replica, as the audit log saw it."""

    replica: str
    received: datetime
    completed: datetime
    what: str

    def __str__(self) -> str:
        return f"{self.replica} at {self.received.time()}: {self.what}"


def replica_writes(audit_log: Path, namespace: str, users: dict[str, str]) -> list[Write]:
    """The writes in ``namespace`` made as one of ``users`` (replica -> user name), in the
    order they arrived, without the Lease writes."""
    replica_of = {user: replica for replica, user in users.items()}
    writes = []
    for event in json_lines(audit_log.read_text()):
        ref: dict[str, Any] = event.get("objectRef") or {}
        if event.get("stage") != "ResponseComplete" or event.get("verb") not in WRITE_VERBS:
            continue
        lease = (ref.get("apiGroup"), ref.get("resource")) == ("coordination.k8s.io", "leases")
        if ref.get("namespace") != namespace or lease:
            continue
        acting = event.get("impersonatedUser") or event.get("user") or {}
        replica = replica_of.get(str(acting.get("username", "")))
        if replica is None:
            continue
        what = f"{event['verb']} {ref.get('resource')}/{ref.get('name', '')}"
        writes.append(
            Write(
                replica,
                datetime.fromisoformat(event["requestReceivedTimestamp"]),
                datetime.fromisoformat(event["stageTimestamp"]),
                what + f" -> {event.get('responseStatus', {}).get('code')}",
            )
        )
    return sorted(writes, key=lambda write: write.received)


def assert_one_writer_at_a_time(writes: list[Write], leaders: list[str]) -> list[float]:
    """Check that only ``leaders`` wrote, one after the other in that order, each one's writes
    all complete before the next one's first write arrived; the gaps (seconds) between one
    leader's last write and the next one's first."""
    strays = [write for write in writes if write.replica not in leaders]
    assert not strays, f"replicas that were not leading wrote: {'; '.join(map(str, strays[:10]))}"
    gaps = []
    for before, after in itertools.pairwise(leaders):
        earlier = [write for write in writes if write.replica == before]
        later = [write for write in writes if write.replica == after]
        assert earlier, f"leader {before} wrote nothing (the check would prove nothing)"
        assert later, f"leader {after} wrote nothing (the check would prove nothing)"
        last = max(write.completed for write in earlier)
        first = min(write.received for write in later)
        overlapping = [w for w in earlier if w.completed >= first] + [
            w for w in later if w.received <= last
        ]
        assert last < first, (
            f"{before} and {after} both wrote between {first.time()} and {last.time()}: "
            + "; ".join(map(str, overlapping[:10]))
        )
        gaps.append((first - last).total_seconds())
    return gaps


class Ticker:
    """Keeps whoever leads writing: parent ``tick`` gets a new size every :data:`TICK` seconds
    (from the admin, whose requests the audit log leaves out), so the leader applies its child
    and annotates it all the time, and the audit log shows when each replica stopped writing
    and when the next one started."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.size = 0
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.size == 0:
            await self.client.create(parent("tick", "0"), namespace=self.namespace)
        self._stopping.clear()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> str:
        """Stop changing ``tick`` (after the change under way); its last size."""
        self._stopping.set()
        if self._task is not None:
            await self._task
            self._task = None
        return str(self.size)

    async def _run(self) -> None:
        while not self._stopping.is_set():
            size = self.size + 1
            body = {"data": {"size": str(size)}}
            await self.client.patch("v1", "ConfigMap", "tick", body, namespace=self.namespace)
            self.size = size
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), TICK)


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


@pytest.mark.slow
async def test_kill_9_fails_over_after_the_lease_and_sigterm_hands_over_at_once(
    tmp_path: Path, local_cluster: BackgroundCluster, client: Client, namespace: str
) -> None:
    target = write_operator(tmp_path)
    names = ("a", "b", "c")
    users = {name: service_account_user(namespace, f"replica-{name}") for name in names}
    for name in names:
        (tmp_path / f"role-{name}.yaml").write_text(ROLE.format(replica=name))
    await asyncio.gather(
        *(
            install_rbac(
                client, tmp_path / f"role-{name}.yaml", namespace=namespace,
                service_account=f"replica-{name}",
            )
            for name in names
        )
    )  # fmt: skip
    args = ("-n", namespace, "--leader-elect", "--leader-election-id", LEASE,
            "--leader-election-namespace", namespace)  # fmt: skip
    logs = {name: tmp_path / f"{name}.log" for name in names}
    kubeconfig = local_cluster.kubeconfig_path
    assert local_cluster.audit_log_path is not None
    audit_log = local_cluster.audit_log_path

    def writes() -> list[Write]:
        local_cluster.flush_audit_log()
        return replica_writes(audit_log, namespace, users)

    async def start(name: str) -> asyncio.subprocess.Process:
        return await start_run(target, kubeconfig, *args, "--as", users[name], log_file=logs[name])

    replicas = {name: await start(name) for name in "ab"}
    ticker = Ticker(client, namespace)
    expected: dict[str, str] = {}

    async def converge(name: str, size: str) -> None:
        """Create parent ``name``, and wait until the leader converged it and ``tick``."""
        await client.create(parent(name, size), namespace=namespace)
        expected[name] = size
        await wait_converged(client, namespace, {**expected, "tick": await ticker.stop()})

    loop = asyncio.get_running_loop()
    try:
        leader = await wait_holder(client, namespace, logs, not_="")
        await ticker.start()
        await converge("w1", "1")
        assert_one_writer_at_a_time(writes(), [leader])  # the standby has written nothing
        await ticker.start()

        kill9(replicas[leader])
        killed = loop.time()
        successor = await wait_holder(client, namespace, logs, not_=leader)
        kill_failover = loop.time() - killed
        await converge("w2", "2")
        await ticker.start()

        replicas["c"] = await start("c")
        async with asyncio.timeout(60):
            while "attempting to acquire leader lease" not in _text(logs["c"]):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
        replicas[successor].send_signal(signal.SIGTERM)
        terminated = loop.time()
        assert await wait_holder(client, namespace, logs, not_=successor) == "c"
        term_handover = loop.time() - terminated
        assert await stop_process(replicas[successor]) == 0
        await converge("w3", "3")
    finally:
        for process in replicas.values():
            await stop_process(process)
        await ticker.stop()
    written = writes()
    kill_gap, term_gap = assert_one_writer_at_a_time(written, [leader, successor, "c"])
    counts = {name: sum(1 for write in written if write.replica == name) for name in names}
    assert kill_failover > 0 and term_handover > 0
    print(
        f"FIGURES leader kill -9 -> standby leads after {kill_failover:.1f}s (lease 15 s); "
        f"SIGTERM -> hand-over in {term_handover:.1f}s; audit log: no overlapping writes, "
        f"{kill_gap:.1f}s from the killed leader's last write to the successor's first, "
        f"{term_gap:.1f}s from the terminated leader's last write to the successor's first "
        f"(writes: {leader} {counts[leader]}, {successor} {counts[successor]}, c {counts['c']})"
    )


def _write(replica: str, received: float, completed: float) -> Write:
    def at(seconds: float) -> datetime:
        return datetime.fromisoformat(f"2026-01-01T00:00:{seconds:09.6f}Z")

    return Write(replica, at(received), at(completed), "patch configmaps/w1-child -> 200")


def test_the_write_check_fails_when_two_replicas_write_at_once() -> None:
    serial = [_write("a", 1, 1.1), _write("a", 2, 2.1), _write("b", 3, 3.2), _write("b", 4, 4.1)]
    assert assert_one_writer_at_a_time(serial, ["a", "b"]) == pytest.approx([0.9])
    with pytest.raises(AssertionError, match="a and b both wrote"):
        assert_one_writer_at_a_time([*serial, _write("a", 3.5, 3.6)], ["a", "b"])
    with pytest.raises(AssertionError, match="a and b both wrote"):  # in flight at once
        assert_one_writer_at_a_time([_write("a", 1, 2.5), _write("b", 2, 2.1)], ["a", "b"])
    with pytest.raises(AssertionError, match="not leading wrote"):
        assert_one_writer_at_a_time([*serial, _write("c", 5, 5.1)], ["a", "b"])


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""
