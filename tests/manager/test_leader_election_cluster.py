"""Leader election against the local cluster: a real Lease, real resourceVersion conflicts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any, Protocol

import pytest

from setpoint.client.client import Client
from setpoint.client.errors import Conflict
from setpoint.controller.reconcile import Request
from setpoint.manager.leader_election import LeaderElectionConfig, LeaderElectionLost, LeaderElector
from setpoint.manager.lease_lock import ClientLeaseLock
from setpoint.manager.manager import Manager
from setpoint.manager.operator import Operator
from tests.manager.waiting import eventually

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
# Short timings keep the tests fast; the ratios are those of the 15 s / 10 s / 2 s defaults.
SHORT = {"lease_duration": 3.0, "renew_deadline": 2.5, "retry_period": 0.3}


class Cluster(Protocol):
    kubeconfig_path: str


@pytest.fixture
async def client(local_cluster: Cluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(local_cluster.kubeconfig_path) as client:
        yield client


async def lease(client: Client, namespace: str, name: str) -> dict[str, Any]:
    stored: dict[str, Any] = await client.get(
        "coordination.k8s.io/v1", "Lease", name, namespace=namespace
    )
    return stored


async def test_elector_writes_a_lease_the_server_accepts(client: Client, namespace: str) -> None:
    config = LeaderElectionConfig(
        name="solo",
        namespace=namespace,
        identity="solo-1",
        lease_duration=SHORT["lease_duration"],
        renew_deadline=SHORT["renew_deadline"],
        retry_period=SHORT["retry_period"],
    )
    elector = LeaderElector(ClientLeaseLock(client, namespace, "solo"), config)
    await asyncio.wait_for(elector.acquire(), 10)
    spec = (await lease(client, namespace, "solo"))["spec"]
    assert spec["holderIdentity"] == "solo-1"
    assert spec["leaseDurationSeconds"] == 3
    assert spec["leaseTransitions"] == 0
    assert MICRO_TIME.match(spec["acquireTime"]) and MICRO_TIME.match(spec["renewTime"])
    first_renew = spec["renewTime"]
    holding = asyncio.create_task(elector.hold())
    await asyncio.sleep(SHORT["retry_period"] * 3)
    holding.cancel()
    spec = (await lease(client, namespace, "solo"))["spec"]
    assert spec["renewTime"] > first_renew
    assert await elector.release()
    spec = (await lease(client, namespace, "solo"))["spec"]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1


def leader_elected_operator(
    cluster: Cluster, namespace: str, identity: str, seen: list[tuple[str, str]], **options: Any
) -> Operator:
    """An operator that records (identity, name) for each ConfigMap it reconciles."""
    operator = Operator(
        "le-test",
        kubeconfig=cluster.kubeconfig_path,
        namespaces=[namespace],
        leader_election=True,
        leader_election_namespace=namespace,
        identity=identity,
        **{**SHORT, **options},
    )

    @operator.reconciler(for_=("v1", "ConfigMap"))
    async def reconcile(request: Request) -> None:
        seen.append((identity, request.name))

    return operator


async def create_config_map(client: Client, namespace: str, name: str) -> None:
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
        }
    )


async def wait_leader(*managers: Manager) -> Manager:
    await eventually(lambda: any(m.is_leader for m in managers), 15, "a leader")
    leaders = [m for m in managers if m.is_leader]
    assert len(leaders) == 1
    return leaders[0]


async def test_only_the_leader_reconciles_and_a_killed_leader_is_replaced(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    seen: list[tuple[str, str]] = []
    # The first never releases its Lease: stopping it is like a crash, as far as the Lease goes.
    first = leader_elected_operator(
        local_cluster, namespace, "first", seen, leader_election_release_on_cancel=False
    )
    await first.start()
    await eventually(lambda: first.is_leader, 15, "the first manager to lead")
    second = leader_elected_operator(local_cluster, namespace, "second", seen)
    await second.start()
    try:
        await create_config_map(client, namespace, "cm-1")
        await eventually(lambda: ("first", "cm-1") in seen, 15, "the leader to reconcile cm-1")
        await asyncio.sleep(SHORT["lease_duration"])  # the standby had every chance to act
        assert not second.is_leader
        assert all(identity == "first" for identity, _ in seen)

        await first.stop()  # no release: the standby must wait for the Lease to expire
        held_by_first = (await lease(client, namespace, "le-test-leader-election"))["spec"]
        assert held_by_first["holderIdentity"] == "first"
        await asyncio.wait_for(second.wait_for_leadership(), SHORT["lease_duration"] * 4)
        spec = (await lease(client, namespace, "le-test-leader-election"))["spec"]
        assert spec["holderIdentity"] == "second"
        assert spec["leaseTransitions"] == held_by_first["leaseTransitions"] + 1

        await create_config_map(client, namespace, "cm-2")
        await eventually(lambda: ("second", "cm-2") in seen, 15, "the new leader to reconcile")
        assert ("first", "cm-2") not in seen
    finally:
        await first.stop()
        await second.stop()


async def test_a_released_lease_is_taken_over_at_once(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    seen: list[tuple[str, str]] = []
    # A 30 s lease: without the release, the standby would wait 30 s.
    slow = {"lease_duration": 30.0, "renew_deadline": 20.0, "retry_period": 0.2}
    first = leader_elected_operator(local_cluster, namespace, "first", seen, **slow)
    second = leader_elected_operator(local_cluster, namespace, "second", seen, **slow)
    await first.start()
    await eventually(lambda: first.is_leader, 15, "the first manager to lead")
    await second.start()
    try:
        await first.stop()
        assert (await lease(client, namespace, "le-test-leader-election"))["spec"][
            "holderIdentity"
        ] in ("", "second")
        await asyncio.wait_for(second.wait_for_leadership(), 10)
    finally:
        await second.stop()
    assert (await lease(client, namespace, "le-test-leader-election"))["spec"][
        "holderIdentity"
    ] == ""


async def test_losing_the_lease_stops_controllers_and_run_raises(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    seen: list[tuple[str, str]] = []
    operator = leader_elected_operator(local_cluster, namespace, "victim", seen)
    running = asyncio.create_task(operator.run(handle_signals=False))
    await eventually(lambda: operator.is_leader, 15, "the operator to lead")
    # Someone else takes the Lease over (as after a long pause of this process).
    await steal_lease(client, namespace, "le-test-leader-election")
    with pytest.raises(LeaderElectionLost, match="intruder"):
        await asyncio.wait_for(running, 15)
    assert not operator.is_leader
    assert all(controller.queue.shutting_down for controller in operator.controllers)


async def test_a_standby_warms_up_its_cache_when_asked(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    seen: list[tuple[str, str]] = []
    await create_config_map(client, namespace, "before-failover")
    leader = leader_elected_operator(local_cluster, namespace, "leader", seen)
    await leader.start()
    await eventually(lambda: leader.is_leader, 15, "the leader to lead")
    cold = leader_elected_operator(local_cluster, namespace, "cold", seen)
    warm = leader_elected_operator(local_cluster, namespace, "warm", seen, warm_up_caches=True)
    await cold.start()
    await warm.start()
    try:
        await eventually(lambda: warm.cache.has_synced and bool(warm.cache.informers), 15)
        informer = warm.cache.informers[0]
        assert informer.store.get(Request(namespace, "before-failover")) is not None
        assert not warm.is_leader
        assert cold.cache.informers == []  # without warm-up a standby watches nothing
        assert [name for _, name in seen if name == "before-failover"] != []
        assert {identity for identity, _ in seen} == {"leader"}
    finally:
        for operator in (cold, warm, leader):
            await operator.stop()


async def test_losing_the_lease_during_a_graceful_stop_cancels_the_draining_reconcile(
    local_cluster: Cluster, client: Client, namespace: str
) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()
    operator = Operator(
        "le-drain",
        kubeconfig=local_cluster.kubeconfig_path,
        namespaces=[namespace],
        leader_election=True,
        leader_election_namespace=namespace,
        identity="drainer",
        graceful_shutdown_timeout=60,
        **SHORT,
    )

    @operator.reconciler(for_=("v1", "ConfigMap"))
    async def reconcile(request: Request) -> None:
        started.set()
        try:
            await asyncio.sleep(120)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    await operator.start()
    try:
        await eventually(lambda: operator.is_leader, 15, "the operator to lead")
        await create_config_map(client, namespace, "slow")
        await asyncio.wait_for(started.wait(), 15)
        stopping = asyncio.create_task(operator.stop())  # drains for up to 60 s
        await asyncio.sleep(SHORT["retry_period"] * 2)
        assert not stopping.done() and not cancelled.is_set()
        await steal_lease(client, namespace, "le-drain-leader-election")
        # A former leader must not keep acting: the reconcile is cancelled, not drained.
        await asyncio.wait_for(cancelled.wait(), 15)
        await asyncio.wait_for(stopping, 15)
    finally:
        await operator.stop()
    spec = (await lease(client, namespace, "le-drain-leader-election"))["spec"]
    assert spec["holderIdentity"] == "intruder"  # not released: it was no longer ours


async def steal_lease(client: Client, namespace: str, name: str) -> None:
    """Make "intruder" the holder, as after a long pause of the leader. The leader renews the
    Lease every retry period, so a write may conflict with a renewal: read and try again."""
    for _ in range(20):
        stolen = await lease(client, namespace, name)
        stolen["spec"]["holderIdentity"] = "intruder"
        stolen["spec"]["leaseDurationSeconds"] = 60
        try:
            await client.update(stolen)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not take over lease {name}: every write conflicted")
