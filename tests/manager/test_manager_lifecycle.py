"""The manager's lifecycle without a cluster: runnables, servers, shutdown, failures, options.

These managers get a client for an address where nothing listens: with no informers and no
leader election the manager never calls the API server, which is what lets them run here.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest

from setpoint.cli.run import run_operators
from setpoint.client.client import Client
from setpoint.client.config import ClientConfig
from setpoint.controller.reconcile import Request
from setpoint.manager.context import Context
from setpoint.manager.manager import Manager, ManagerError, RunnableFailed
from tests.manager.waiting import eventually

NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing answers there


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    client = await Client.from_config(ClientConfig(server=NOWHERE), max_retries=0)
    try:
        yield client
    finally:
        await client.close()


class Worker:
    """A runnable whose in-flight work takes `work_seconds` to finish after stop()."""

    def __init__(self, work_seconds: float) -> None:
        self.work_seconds = work_seconds
        self.started = asyncio.Event()
        self.finished_work = False
        self.stop_called = False
        self._task: asyncio.Task[None] | None = None

    async def _work(self) -> None:
        await asyncio.sleep(self.work_seconds)
        self.finished_work = True

    async def start(self) -> None:
        self._task = asyncio.create_task(self._work())
        self.started.set()

    async def stop(self) -> None:
        self.stop_called = True
        assert self._task is not None
        try:
            await self._task
        except asyncio.CancelledError:
            self._task.cancel()
            raise


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def test_probes_and_metrics_are_served_while_running(client: Client) -> None:
    manager = Manager(
        client, metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0"
    )
    failing = {"healthy": False}
    manager.add_readyz_check("database", lambda: failing["healthy"])
    async with manager:
        assert manager.probe_endpoint is not None and manager.metrics_endpoint is not None
        probes = manager.probe_endpoint.url
        assert await get(probes + "/healthz") == (200, "ok")
        status, body = await get(probes + "/readyz")
        assert status == 500
        assert "[+]cache-sync ok\n" in body and "[-]database failed" in body
        failing["healthy"] = True
        assert await get(probes + "/readyz") == (200, "ok")
        status, body = await get(manager.metrics_endpoint.url + "/metrics")
        assert status == 200 and "process_cpu_seconds_total" in body
    with pytest.raises(aiohttp.ClientConnectionError):
        await get(probes + "/healthz")


async def test_runnables_start_and_in_flight_work_finishes_on_stop(client: Client) -> None:
    manager = Manager(client, graceful_shutdown_timeout=10)
    worker = Worker(work_seconds=0.3)
    ticks: list[int] = []

    async def ticker() -> None:
        while True:
            ticks.append(1)
            await asyncio.sleep(0.01)

    manager.add(worker)
    manager.add(ticker, needs_leader_election=False)
    await manager.start()
    await asyncio.wait_for(worker.started.wait(), 5)
    await eventually(lambda: bool(ticks), what="the function runnable to run")
    await manager.stop()
    assert worker.stop_called and worker.finished_work
    count = len(ticks)
    await asyncio.sleep(0.05)
    assert len(ticks) == count  # the function runnable was cancelled


async def test_work_beyond_the_graceful_timeout_is_cancelled(client: Client) -> None:
    manager = Manager(client, graceful_shutdown_timeout=0.2)
    worker = Worker(work_seconds=60)
    manager.add(worker)
    await manager.start()
    await asyncio.wait_for(worker.started.wait(), 5)
    await asyncio.wait_for(manager.stop(), 10)
    assert worker.stop_called and not worker.finished_work


async def test_a_failing_runnable_stops_the_manager_with_its_error(client: Client) -> None:
    manager = Manager(client)
    worker = Worker(work_seconds=0)

    async def broken() -> None:
        await asyncio.sleep(0.05)
        raise RuntimeError("boom")

    manager.add(worker)
    manager.add(broken)
    with pytest.raises(RunnableFailed, match="broken failed: RuntimeError: boom"):
        await asyncio.wait_for(manager.run(handle_signals=False), 10)
    assert worker.stop_called


async def test_request_stop_ends_run_cleanly_and_late_adds_start_at_once(client: Client) -> None:
    manager = Manager(client)
    late = Worker(work_seconds=0)
    running = asyncio.create_task(manager.run(handle_signals=False))
    await eventually(lambda: manager.started, what="the manager to start")
    manager.add(late)
    await asyncio.wait_for(late.started.wait(), 5)
    manager.request_stop()
    await asyncio.wait_for(running, 10)
    assert late.stop_called
    with pytest.raises(ManagerError, match="has stopped"):
        manager.add(Worker(0))


def test_bad_options_are_named() -> None:
    with pytest.raises(ManagerError, match=r"leader_election_id .* is required"):
        Manager(leader_election=True)
    with pytest.raises(ManagerError, match="not a valid Lease name"):
        Manager(leader_election=True, leader_election_id="Not_Valid")
    with pytest.raises(ManagerError, match=r"lease_duration .* must be greater than"):
        Manager(leader_election=True, leader_election_id="x", lease_duration=5, renew_deadline=6)
    with pytest.raises(ValueError, match="health_probe_bind_address"):
        Manager(health_probe_bind_address="8081")
    with pytest.raises(ManagerError, match="graceful_shutdown_timeout"):
        Manager(graceful_shutdown_timeout=-1)
    with pytest.raises(ManagerError, match="list of names"):
        Manager(namespaces="default")
    with pytest.raises(TypeError, match="async start"):
        Manager().add(lambda: None)  # type: ignore[arg-type,return-value]


def test_client_and_cache_need_a_connection_first() -> None:
    manager = Manager()
    with pytest.raises(ManagerError, match="connect"):
        _ = manager.client
    with pytest.raises(ManagerError, match="connect"):
        _ = manager.cache


async def test_run_operators_exits_1_and_stops_the_others_when_one_fails(client: Client) -> None:
    healthy, failing = Manager(client), Manager(client)
    worker = Worker(work_seconds=0)

    async def broken() -> None:
        raise RuntimeError("controller crashed")

    healthy.add(worker)
    failing.add(broken)
    assert await asyncio.wait_for(run_operators([healthy, failing], preflight=False), 10) == 1
    assert worker.stop_called


async def test_run_operators_exits_0_after_a_requested_stop(client: Client) -> None:
    manager = Manager(client)
    worker = Worker(work_seconds=0)
    manager.add(worker)
    running = asyncio.create_task(run_operators([manager], preflight=False))
    await asyncio.wait_for(worker.started.wait(), 5)
    manager.request_stop()
    assert await asyncio.wait_for(running, 10) == 0


async def test_a_taken_port_fails_start_and_leaves_nothing_running(client: Client) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        manager = Manager(
            client,
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address=f"127.0.0.1:{port}",
        )
        with pytest.raises(
            OSError,
            match=r"health probes on 127\.0\.0\.1:\d+: address already in use.*"
            r"health_probe_bind_address",
        ):
            await manager.run(handle_signals=False)
        assert manager.metrics_endpoint is not None
        with pytest.raises(RuntimeError):
            _ = manager.metrics_endpoint.url  # stopped: no port any more
    finally:
        taken.close()


class NeverSyncs:
    """A controller-like runnable whose start() waits for a sync that never comes."""

    def __init__(self) -> None:
        self.stopped_with: float | None = None
        self.start_cancelled = False

    async def start(self) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.start_cancelled = True
            raise

    async def stop(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.stopped_with = timeout


async def test_a_runnable_still_starting_is_cancelled_once_stopped(client: Client) -> None:
    manager = Manager(client, graceful_shutdown_timeout=30)
    starting = NeverSyncs()
    manager.add(starting)
    await manager.start()
    await asyncio.sleep(0)
    await asyncio.wait_for(manager.stop(), 5)  # not the 30 s grace: nothing is in flight
    assert starting.stopped_with == 30
    assert starting.start_cancelled


async def test_context_get_needs_a_whole_reference(client: Client) -> None:
    manager = Manager(client)
    ctx = Context(manager, "widget", Request("ns", "w1"), api_version="v1", kind="ConfigMap")
    assert (ctx.namespace, ctx.name, ctx.cache) == ("ns", "w1", manager.cache)
    # ctx.client is the manager's client, recording its writes for read-your-own-writes.
    assert ctx.client.transport is client.transport
    with pytest.raises(TypeError, match=r"\(api_version, kind, name\)"):
        await ctx.get("v1", "Secret")
    with pytest.raises(RuntimeError, match="use `await` instead"):
        ctx.run(asyncio.sleep(0))
    with pytest.raises(RuntimeError, match="no event recorder"):
        _ = ctx.recorder
