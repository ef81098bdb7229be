"""Operator scenarios of bench.runtime: freshness behind a backlog, fan-out requests,
and start-up time of ``setpoint run``.

(e) freshness: ``backlog`` ConfigMaps exist when an ``Operator`` with 1 worker starts (each
    reconcile takes ``RECONCILE_SECONDS``, as a write would); while it works through them, new
    ConfigMaps are created one by one and the time from each create's answer to the start of
    its reconcile is measured (p50/p99). A FIFO queue would take the whole backlog's time.
(f) fan-out: ``fanout`` Widgets (a CRD) exist when an operator starts whose reconcile makes a
    child ConfigMap (``ctx.create_or_patch``) and writes the Widget's status
    (``ctx.patch_status``); the requests its client sends until every Widget converged, per
    Widget (writes and object reads; lists, watches and discovery are counted apart), then the
    requests of an idle period.
(g) start-up: seconds from starting ``setpoint run`` to its first request, received by a
    listener the kubeconfig points at, with bytecode cached as in an installed package; and
    the CPU seconds (user + system) the process used until then, which a busy machine inflates
    much less than the wall time. Beside it, alternately, the same for the floor: a plain
    aiohttp client reading the same kubeconfig (``bench/startup_floor.py``). Alone:
    ``python -m bench.operator_scenarios startup [RUNS]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from setpoint import kinds
from setpoint.client import Client
from setpoint.controller import Request
from setpoint.manager import Context, Operator

log = logging.getLogger("bench.operator_scenarios")

RECONCILE_SECONDS: Final = 0.002
FRESHNESS_SAMPLES: Final = 50
IDLE_SECONDS: Final = 3.0
CREATE_CONCURRENCY: Final = 32
WAIT_TIMEOUT_SECONDS: Final = 600.0
WIDGET_GROUP: Final = "bench.setpoint.dev"

FRESHNESS_KEYS: Final = (
    "freshness_p50_ms", "freshness_p99_ms", "freshness_samples", "freshness_backlog",
    "freshness_backlog_left",
)  # fmt: skip
FANOUT_KEYS: Final = (
    "fanout_objects", "fanout_writes_per_object", "fanout_reads_per_object",
    "fanout_list_watch_discovery_requests", "fanout_idle_requests", "fanout_reconciles_per_object",
    "fanout_status_patches_per_object",
)  # fmt: skip
STARTUP_KEYS: Final = (
    "startup_to_first_request_s", "startup_cpu_s", "floor_to_first_request_s", "floor_cpu_s",
    "startup_over_floor",
)  # fmt: skip


class Sample(NamedTuple):
    """One start-up: wall seconds to the first request, and CPU seconds until then."""

    seconds: float
    cpu: float


def _percentile(samples: list[float], fraction: float) -> float | None:
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _create_all(client: Client, bodies: list[dict[str, Any]]) -> None:
    semaphore = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(body: dict[str, Any]) -> None:
        async with semaphore:
            await client.create(body)

    await asyncio.gather(*(one(body) for body in bodies))


def _config_map(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"k": "v"},
    }


async def freshness(
    client: Client, kubeconfig: Path, namespace: str, backlog: int
) -> dict[str, Any]:
    """(e): new keys reconciled ahead of an initial-list backlog."""
    await _create_all(client, [_config_map(namespace, f"old-{i}") for i in range(backlog)])
    started: dict[str, float] = {}
    op = Operator("bench-freshness", kubeconfig=str(kubeconfig), namespaces=[namespace])

    @op.reconciler(for_=kinds.ConfigMap)
    async def reconcile(ctx: Context, request: Request) -> None:
        started.setdefault(request.name, time.monotonic())
        await asyncio.sleep(RECONCILE_SECONDS)

    samples: list[float] = []
    async with op:
        for i in range(FRESHNESS_SAMPLES):
            name = f"new-{i}"
            await client.create(_config_map(namespace, name))
            created = time.monotonic()
            async with asyncio.timeout(WAIT_TIMEOUT_SECONDS):
                while name not in started:  # noqa: ASYNC110 - polling the reconciler's record
                    await asyncio.sleep(0.001)
            samples.append((started[name] - created) * 1000)
        left = backlog - sum(1 for key in started if key.startswith("old-"))
    p50, p99 = _percentile(samples, 0.5), _percentile(samples, 0.99)
    return {
        "freshness_p50_ms": p50,
        "freshness_p99_ms": p99,
        "freshness_samples": len(samples),
        "freshness_backlog": backlog,
        "freshness_backlog_left": left,
    }


def _widget_crd() -> dict[str, Any]:
    anything = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{WIDGET_GROUP}"},
        "spec": {
            "group": WIDGET_GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": anything, "status": anything},
                        }
                    },
                }
            ],
        },
    }


class RequestCounter:
    """Counts what a client sends: writes, object reads, and lists/watches/discovery."""

    def __init__(self, client: Client) -> None:
        self.counts: Counter[str] = Counter()
        transport = client.transport
        request, open_stream = transport.request, transport.open_stream

        async def counted_request(method: str, path: str, **kwargs: Any) -> Any:
            self.counts[self._classify(method, path)] += 1
            return await request(method, path, **kwargs)

        async def counted_stream(method: str, path: str, **kwargs: Any) -> Any:
            self.counts["list_watch_discovery"] += 1
            return await open_stream(method, path, **kwargs)

        transport.request = counted_request  # type: ignore[method-assign]
        transport.open_stream = counted_stream  # type: ignore[method-assign]

    @staticmethod
    def _classify(method: str, path: str) -> str:
        if method != "GET":
            return "write"
        last = path.rstrip("/").rsplit("/", 1)[-1]
        if path.startswith(("/api", "/apis")) and (
            last in ("widgets", "configmaps", "events", "leases") or path.count("/") <= 3
        ):
            return "list_watch_discovery"
        return "read"

    def snapshot(self) -> Counter[str]:
        return Counter(self.counts)


async def fanout(
    client: Client,
    namespace: str,
    objects: int,
    *,
    trace_capacity: int | None = None,
    idle_seconds: float = IDLE_SECONDS,
    before_operator: Callable[[], Awaitable[None]] | None = None,
    after_convergence: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """(f): requests per Widget on first convergence, then while idle.

    ``trace_capacity`` turns the operator's reconcile trace on (``bench.trace_overhead``); the
    process CPU seconds from the operator's start to convergence come back as
    ``fanout_cpu_seconds`` (the server runs in another process).
    """
    with contextlib.suppress(Exception):
        await client.create(_widget_crd())
    async with asyncio.timeout(WAIT_TIMEOUT_SECONDS):
        while True:
            try:
                await client.list(f"{WIDGET_GROUP}/v1", "Widget", namespace=namespace)
                break
            except Exception:
                await asyncio.sleep(0.1)
    await _create_all(
        client,
        [
            {
                "apiVersion": f"{WIDGET_GROUP}/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{i}", "namespace": namespace},
                "spec": {"size": i},
            }
            for i in range(objects)
        ],
    )
    operator_client = await Client.from_config(client.config)
    counter = RequestCounter(operator_client)
    op = Operator(
        "bench-fanout", operator_client, namespaces=[namespace], trace_capacity=trace_capacity
    )
    reconciles: Counter[str] = Counter()
    status_patches = 0
    # Widgets whose status the operator has written: all of them = converged, seen without
    # listing (a list of N Widgets every poll would cost this process more than the operator).
    patched: set[str] = set()
    all_patched = asyncio.Event()

    @op.reconciler(for_=(f"{WIDGET_GROUP}/v1", "Widget"), owns=[kinds.ConfigMap], max_concurrent=16)
    async def reconcile(ctx: Context, request: Request) -> None:
        nonlocal status_patches
        reconciles[request.name] += 1
        widget = await ctx.get()
        if widget is None:
            return
        size = str(widget["spec"]["size"])
        await ctx.create_or_patch(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{request.name}-cm"}},
            lambda cm: cm.update(data={"size": size}),
        )
        before = (widget.get("status") or {}).get("size")
        if before != size:
            status_patches += 1
        await ctx.patch_status({"size": size})
        patched.add(request.name)
        if len(patched) == objects:
            all_patched.set()

    if before_operator is not None:
        await before_operator()  # e.g. start counting instructions (bench.trace_overhead)
    cpu_started, wall_started = time.process_time(), time.perf_counter()
    async with op:
        async with asyncio.timeout(WAIT_TIMEOUT_SECONDS):
            await all_patched.wait()
            while True:
                widgets = await client.list(f"{WIDGET_GROUP}/v1", "Widget", namespace=namespace)
                if sum(1 for w in widgets if (w.get("status") or {}).get("size")) == objects:
                    break
                await asyncio.sleep(0.2)
        # Let in-flight work and the last events settle before the idle window.
        await asyncio.sleep(1.0)
        cpu_seconds = time.process_time() - cpu_started
        wall_seconds = time.perf_counter() - wall_started
        if after_convergence is not None:
            await after_convergence()
        converged = counter.snapshot()
        await asyncio.sleep(idle_seconds)
        idle = counter.snapshot() - converged
    await operator_client.close()
    return {
        "fanout_objects": objects,
        "fanout_writes_per_object": converged["write"] / objects,
        "fanout_reads_per_object": converged["read"] / objects,
        "fanout_list_watch_discovery_requests": converged["list_watch_discovery"],
        "fanout_idle_requests": sum(idle.values()),
        "fanout_reconciles_per_object": sum(reconciles.values()) / objects,
        "fanout_status_patches_per_object": status_patches / objects,
        "fanout_cpu_seconds": cpu_seconds,
        "fanout_converge_seconds": wall_seconds,
        "fanout_trace_records": op.trace.ring.last_seq if op.trace is not None else 0,
    }


OPERATOR_SOURCE = """
import setpoint

op = setpoint.Operator("bench-startup")

@op.reconciler(for_=setpoint.kinds.ConfigMap)
async def reconcile(ctx, request):
    return None
"""

KUBECONFIG = """
apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: bench}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
"""


SETPOINT_RUN: Final = (
    "-m", "setpoint.cli.main", "run", "startup_operator.py", "--kubeconfig", "kubeconfig",
    "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
)  # fmt: skip
# The floor: a plain aiohttp client that reads the same kubeconfig and sends one GET (run as
# a script: it imports nothing of setpoint or bench).
FLOOR: Final = (str(Path(__file__).with_name("startup_floor.py")), "kubeconfig")


async def _to_first_request(arguments: Sequence[str], workdir: Path, env: dict[str, str]) -> Sample:
    """Seconds from starting ``python ARGUMENTS`` to the first connection on a listener the
    kubeconfig in ``workdir`` points at, and the CPU seconds the process used until then (it
    is killed there)."""
    first: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not first.done():
            first.set_result(time.monotonic())
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    (workdir / "kubeconfig").write_text(KUBECONFIG.format(port=port))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable, *arguments, cwd=workdir, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with asyncio.timeout(60):
            connected = await first
    finally:
        process.kill()
        await process.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server.close()
        await server.wait_closed()
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Sample(connected - began, cpu)


async def startup(runs: int = 5) -> dict[str, Any]:
    """(g): median seconds from starting ``setpoint run`` to its first request, and median CPU
    seconds it used until then (the process is killed at its first request); the same for the
    floor (``bench/startup_floor.py``), run alternately with it, and the ratio of the medians."""
    samples: dict[str, list[Sample]] = {"setpoint": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-startup-") as tmp:
        workdir = Path(tmp)
        (workdir / "startup_operator.py").write_text(OPERATOR_SOURCE)
        # As installed (pip writes .pyc files): bytecode cached in a private directory, even
        # when PYTHONDONTWRITEBYTECODE is set, and a first run, not counted, to fill it.
        # Without it every run compiles setpoint's sources, which is most of its start-up.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
        for run in range(runs + 1):
            # Back to back, in alternating order, so that both see the same load.
            order = [("setpoint", SETPOINT_RUN), ("floor", FLOOR)]
            for name, arguments in order if run % 2 else order[::-1]:
                sample = await _to_first_request(arguments, workdir, env)
                if run > 0:  # run 0 filled the bytecode cache
                    samples[name].append(sample)
    seconds = _percentile([sample.seconds for sample in samples["setpoint"]], 0.5)
    floor = _percentile([sample.seconds for sample in samples["floor"]], 0.5)
    return {
        "startup_to_first_request_s": seconds,
        "startup_cpu_s": _percentile([sample.cpu for sample in samples["setpoint"]], 0.5),
        "floor_to_first_request_s": floor,
        "floor_cpu_s": _percentile([sample.cpu for sample in samples["floor"]], 0.5),
        "startup_over_floor": seconds / floor if seconds is not None and floor else None,
    }


if __name__ == "__main__":
    if sys.argv[1:2] != ["startup"]:
        sys.exit("usage: python -m bench.operator_scenarios startup [RUNS]")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    print(json.dumps(asyncio.run(startup(runs))))
