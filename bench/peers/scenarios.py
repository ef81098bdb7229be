"""The six scenarios, run for one contestant against a cluster the harness started.

fanout → storm → idle → restart run in that order in one namespace (each starts from the state
the previous one left); freshness and fault get their own namespace (fault its own SQLite
cluster). Every scenario gives one :class:`Result`; its ``requests`` are those the contestant's
user agents started during the scenario, read from the cluster's counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from bench.peers import widgets
from bench.peers.cluster import Cluster, Requests
from bench.peers.processes import Contestant, Running

log = logging.getLogger("bench.peers")

SCENARIOS: Final = ("fanout", "storm", "idle", "restart", "freshness", "fault")
#: Scenarios the raw client takes part in: it converges once and exits, so it has no idle
#: period, sees no new object (freshness) and does not retry through an outage (fault).
RAW_SCENARIOS: Final = frozenset({"fanout", "storm", "restart"})
WRITE_VERBS: Final = ("create", "update", "patch", "delete")


@dataclass
class Settings:
    """Sizes and durations of one run."""

    workdir: Path
    objects: int = 1000
    freshness_objects: int = 10_000
    freshness_samples: int = 5
    fault_objects: int = 1000
    idle_seconds: float = 60.0
    #: A restarted operator is ready once it has sent nothing for this long.
    quiet_seconds: float = 3.0
    #: Interval of the harness's convergence checks (two lists each).
    poll_seconds: float = 0.2

    def timeout(self, objects: int) -> float:
        return 120.0 + 0.2 * objects


@dataclass
class Result:
    """One scenario of one contestant, in the shape of ``bench/results/latest.json``."""

    scenario: str
    contestant: str
    objects: int
    seconds: float
    requests: dict[str, int]
    writes_per_object: float
    peak_rss_mib: float
    cpu_seconds: float
    converged: bool
    apiserver_cpu_seconds: float = 0.0
    #: Discovery, ``/version`` and other requests outside resources (not in ``requests``).
    other_requests: int = 0
    #: Fan-out of a watching contestant: its CPU seconds until it went idle after converging
    #: (work still queued then, e.g. the runs its own writes' events cause, is counted).
    settled_cpu_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        document = asdict(self)
        del document["extra"]
        return document


class Meter:
    """Counters, contestant CPU and API server CPU at the start of a scenario."""

    def __init__(self, cluster: Cluster, contestant: Contestant) -> None:
        self.cluster = cluster
        self.contestant = contestant
        self.requests = Requests()
        self.api_cpu = 0.0
        self.started = 0.0

    async def start(self) -> Meter:
        self.requests = await self.cluster.requests()
        self.api_cpu = self.cluster.cpu_seconds()
        self.started = time.monotonic()
        return self

    async def result(
        self,
        scenario: str,
        objects: int,
        seconds: float,
        running: Running,
        converged: bool,
        cpu_before: float = 0.0,
        earlier: Requests | None = None,
    ) -> Result:
        now = await self.cluster.requests()
        delta = now.since(self.requests) if earlier is None else earlier + now
        requests = delta.by_verb(self.contestant.clients)
        writes = sum(requests[verb] for verb in WRITE_VERBS)
        return Result(
            scenario=scenario,
            contestant=self.contestant.name,
            objects=objects,
            seconds=round(seconds, 3),
            requests=requests,
            writes_per_object=round(writes / objects, 3) if objects else 0.0,
            peak_rss_mib=round(running.peak_rss_mib(), 1),
            cpu_seconds=round(running.cpu_seconds() - cpu_before, 3),
            converged=converged,
            apiserver_cpu_seconds=round(self.cluster.cpu_seconds() - self.api_cpu, 3),
            other_requests=delta.non_resource(self.contestant.clients),
        )


async def wait_converged(
    cluster: Cluster,
    namespace: str,
    started: float,
    timeout: float,  # noqa: ASYNC109 - a deadline for the whole wait, not one await
    poll: float,
    running: Running | None = None,
) -> tuple[float, widgets.Convergence]:
    """Wait until every Widget is converged; (seconds since ``started``, final state).

    Progress is followed with watches (:class:`widgets.Tracker`); the final state is checked
    once more with lists (children and orphans included).
    """
    tracker = widgets.Tracker(cluster, namespace)
    await tracker.start()
    try:
        while time.monotonic() - started < timeout:
            if tracker.state().done:
                break
            if running is not None and running.poll_exit() and running.popen.returncode:
                break
            tracker.changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll):
                    await tracker.changed.wait()
        seconds = time.monotonic() - started
    finally:
        await tracker.close()
    for _ in range(50):
        with contextlib.suppress(Exception):
            return seconds, await widgets.convergence(cluster, namespace)
        await asyncio.sleep(0.2)
    return seconds, widgets.Convergence(0, 0, 0, 0)


async def _wait_quiet(
    cluster: Cluster, contestant: Contestant, started: float, settings: Settings
) -> float:
    """Seconds from ``started`` to the contestant's last request before a quiet period."""
    baseline = (await cluster.requests()).total(contestant.clients)
    last_total, last_change = baseline, started
    deadline = started + settings.timeout(settings.objects)
    while time.monotonic() < deadline:
        total = (await cluster.requests()).total(contestant.clients)
        now = time.monotonic()
        if total != last_total:
            last_total, last_change = total, now
        elif total > baseline and now - last_change >= settings.quiet_seconds:
            break
        await asyncio.sleep(0.05)
    return last_change - started


class ContestantRun:
    """Runs the scenarios of one contestant in one namespace of ``cluster``."""

    def __init__(
        self, cluster: Cluster, contestant: Contestant, settings: Settings, tag: str
    ) -> None:
        self.cluster = cluster
        self.contestant = contestant
        self.settings = settings
        self.tag = tag
        self.namespace = f"{contestant.name}-{tag}"
        self.names = [f"w{i}" for i in range(settings.objects)]
        self.running: Running | None = None

    def _spawn(
        self, namespace: str, workers: int | None = None, cluster: Cluster | None = None
    ) -> Running:
        cluster = cluster or self.cluster
        log_path = self.settings.workdir / f"{self.contestant.name}-{self.tag}.log"
        return Running(self.contestant, namespace, cluster.kubeconfig, log_path, workers)

    async def stop(self) -> None:
        if self.running is not None:
            await self.running.stop()
            self.running = None

    async def fanout(self) -> Result:
        await widgets.create_namespace(self.cluster, self.namespace)
        await widgets.create_widgets(self.cluster, self.namespace, self.names)
        meter = await Meter(self.cluster, self.contestant).start()
        self.running = running = self._spawn(self.namespace)
        seconds, state = await wait_converged(
            self.cluster, self.namespace, meter.started, self.settings.timeout(len(self.names)),
            self.settings.poll_seconds, running,
        )  # fmt: skip
        if not self.contestant.watches:
            with contextlib.suppress(TimeoutError):
                await running.wait_exit(30)
        result = await meter.result("fanout", len(self.names), seconds, running, state.done)
        if self.contestant.watches:
            result.settled_cpu_seconds = round(await running.settled_cpu_seconds(), 3)
        return result

    async def storm(self, round_: int = 1) -> Result:
        meter = await Meter(self.cluster, self.contestant).start()
        cpu_before = 0.0
        if self.contestant.watches and self.running is not None:
            cpu_before = self.running.cpu_seconds()
        await widgets.change_all(self.cluster, self.namespace, self.names, round_)
        if not self.contestant.watches:
            self.running = self._spawn(self.namespace)
        running = self.running
        assert running is not None
        seconds, state = await wait_converged(
            self.cluster, self.namespace, meter.started, self.settings.timeout(len(self.names)),
            self.settings.poll_seconds, running,
        )  # fmt: skip
        if not self.contestant.watches:
            with contextlib.suppress(TimeoutError):
                await running.wait_exit(30)
        return await meter.result(
            "storm", len(self.names), seconds, running, state.done, cpu_before
        )

    async def idle(self) -> Result:
        running = self.running
        assert running is not None
        cpu_before = running.cpu_seconds()
        meter = await Meter(self.cluster, self.contestant).start()
        await asyncio.sleep(self.settings.idle_seconds)
        state = await widgets.convergence(self.cluster, self.namespace)
        return await meter.result(
            "idle", len(self.names), self.settings.idle_seconds, running, state.done, cpu_before
        )

    async def restart(self) -> Result:
        await self.stop()
        meter = await Meter(self.cluster, self.contestant).start()
        self.running = running = self._spawn(self.namespace)
        if self.contestant.watches:
            seconds = await _wait_quiet(self.cluster, self.contestant, meter.started, self.settings)
        else:
            await running.wait_exit(self.settings.timeout(len(self.names)))
            seconds = time.monotonic() - meter.started
        state = await widgets.convergence(self.cluster, self.namespace)
        return await meter.result("restart", len(self.names), seconds, running, state.done)

    async def freshness(self) -> Result:
        """Converge ``freshness_objects`` Widgets, restart with 1 worker, time new Widgets."""
        settings = self.settings
        namespace = f"{self.namespace}-fresh"
        names = [f"w{i}" for i in range(settings.freshness_objects)]
        await widgets.create_namespace(self.cluster, namespace)
        await widgets.create_widgets(self.cluster, namespace, names)
        first = self._spawn(namespace)
        _, state = await wait_converged(
            self.cluster, namespace, time.monotonic(), settings.timeout(len(names)), 1.0, first
        )
        await first.stop()
        if not state.done:
            log.warning("%s: freshness backlog did not converge", self.contestant.name)
        meter = await Meter(self.cluster, self.contestant).start()
        running = self._spawn(namespace, workers=1)
        latencies: list[float] = []

        async def sample(index: int) -> None:
            # The first 100 ms after the start (the case), the others every 2 s while
            # the backlog is being worked through.
            await asyncio.sleep(0.1 + 2.0 * index)
            name = f"fresh{index}"
            await widgets.create_widgets(self.cluster, namespace, [name], first=100_000 + index)
            created = time.monotonic()
            while time.monotonic() - created < settings.timeout(len(names)):
                if await widgets.child_exists(self.cluster, namespace, name):
                    latencies.append(time.monotonic() - created)
                    return
                await asyncio.sleep(0.02)

        await asyncio.gather(*(sample(i) for i in range(settings.freshness_samples)))
        result = await meter.result(
            "freshness", len(names), max(latencies, default=settings.timeout(len(names))), running,
            len(latencies) == settings.freshness_samples,
        )  # fmt: skip
        result.extra["latencies"] = sorted(latencies)
        log.info(
            "freshness %s: latencies %s", self.contestant.name, [round(x, 2) for x in latencies]
        )
        await running.stop()
        return result


async def fault(contestant: Contestant, settings: Settings, tag: str) -> Result:
    """Fan-out on a SQLite cluster killed (SIGKILL) once mid-run and restarted on its data.

    The kill comes as soon as the contestant's first write is counted (polled every 50 ms), so it
    lands mid-run at any size. Requests are those counted up to the last poll before the kill
    plus those after the restart (the counters restart with the server).
    """
    workdir = settings.workdir / f"fault-{contestant.name}-{tag}"
    workdir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(workdir, data_dir=workdir / "data")
    await cluster.start()
    running: Running | None = None
    try:
        await widgets.install(cluster)
        namespace = f"{contestant.name}-{tag}-fault"
        names = [f"w{i}" for i in range(settings.fault_objects)]
        await widgets.create_namespace(cluster, namespace)
        await widgets.create_widgets(cluster, namespace, names)
        meter = await Meter(cluster, contestant).start()
        running = Running(contestant, namespace, cluster.kubeconfig, workdir / "contestant.log")
        before_kill = Requests()
        while time.monotonic() - meter.started < settings.timeout(len(names)):
            before_kill = (await cluster.requests()).since(meter.requests)
            written = before_kill.by_verb(contestant.clients)
            if any(written[verb] for verb in WRITE_VERBS):
                break
            await asyncio.sleep(0.05)
        at_kill = await widgets.convergence(cluster, namespace)
        api_cpu_before_kill = cluster.cpu_seconds() - meter.api_cpu
        cluster.kill()
        await cluster.start()
        meter.api_cpu = -api_cpu_before_kill
        seconds, state = await wait_converged(
            cluster, namespace, meter.started, settings.timeout(len(names)),
            settings.poll_seconds, running,
        )  # fmt: skip
        ok = state.done and state.children == len(names) and state.orphans == 0
        result = await meter.result("fault", len(names), seconds, running, ok, earlier=before_kill)
        result.extra.update(
            converged_at_kill=at_kill.converged, children=state.children, orphans=state.orphans
        )
        return result
    finally:
        if running is not None:
            await running.stop()
        await cluster.close()
