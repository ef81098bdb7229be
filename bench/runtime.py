"""Benchmark of the operator runtime: work queue, cache memory, reconcile latency, loop blocking.

    python -m bench.runtime [--json] [--quick]

In one run on this machine:

(a) work queue throughput: adds + gets per second through a controller's ``WorkQueue`` with 1
    and with 8 workers (each worker yields to the loop once per key, like a reconcile would);
(b) informer cache memory: RSS per byte of JSON of 10,000 and 100,000 cached ConfigMaps of
    about 1 KiB, each measured in a fresh process, against plain ``json.loads`` dicts (the peer);
(c) event-to-reconcile latency, p50 and p99, with a writer process patching ConfigMaps at
    200/s on the local API server (``setpoint cluster serve --in-memory``, its own process) and a
    ``setpoint.controller.Controller`` on a ``setpoint.cache.Cache`` in this process;
    The peer: Kopf (standalone, default settings, in its own process) with an ``on.event``
    handler on the same kind of patches at the same rate;
(d) the longest the event loop was blocked while the cache synced an initial list of 10,000
    Pods from the local server (a task sleeping 1 ms records its overshoot);
(e)-(g) operator scenarios (``bench/operator_scenarios.py``): freshness of a new object behind a
    10,000-key initial backlog with 1 worker; requests per object of a fan-out operator at
    N = 1,000 (first convergence, then idle); start-up of ``setpoint run`` to its first request,
    beside the floor of a plain aiohttp client doing the same.

The table goes to stdout; with ``--json`` stdout is one JSON object and nothing else. Logs go
to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import importlib.util
import json
import logging
import os
import platform
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from bench import http_load
from bench.command_line import run_benchmark
from bench.latency_writer import command_arguments, object_name
from bench.operator_scenarios import (
    FANOUT_KEYS,
    FRESHNESS_KEYS,
    STARTUP_KEYS,
    fanout,
    freshness,
    startup,
)
from bench.results_table import render_table
from bench.server_process import ServerProcess, free_port, python_module_argv
from setpoint.cache import Cache
from setpoint.client import AlreadyExists, Client, ClientConfig, StaticToken
from setpoint.controller import Controller, EnqueueRequestForObject, KindSource, Request, WorkQueue

log = logging.getLogger("bench.runtime")


@dataclass(frozen=True)
class Sizes:
    """How much work each part does."""

    queue_keys: int
    cache_small: int
    cache_large: int
    latency_objects: int
    latency_rate: float
    latency_seconds: float
    pods: int
    freshness_backlog: int = 10_000
    fanout: int = 1_000


#: The full run (about 3-4 minutes on 2 busy cores).
FULL: Final = Sizes(
    queue_keys=200_000,
    cache_small=10_000,
    cache_large=100_000,
    latency_objects=50,
    latency_rate=200.0,
    latency_seconds=20.0,
    pods=10_000,
)
#: ``--quick``: every part once with tiny sizes, for the smoke test.
QUICK: Final = Sizes(
    queue_keys=5_000,
    cache_small=500,
    cache_large=1_000,
    latency_objects=5,
    latency_rate=200.0,
    latency_seconds=1.0,
    pods=100,
    freshness_backlog=300,
    fanout=20,
)
#: Keys added between yields to the loop, so workers and the producer interleave.
QUEUE_ADD_BATCH: Final = 256
#: The loop-lag probe's nap; its overshoot is how long something else held the loop.
PROBE_INTERVAL_SECONDS: Final = 0.001
#: After the writer stops, how long reconciles of its last patches may take to arrive.
LATENCY_DRAIN_SECONDS: Final = 2.0
#: Writes in flight while filling the server with Pods.
POD_CREATE_CONCURRENCY: Final = 16
#: A generous bound on any one wait (cache sync, server start): the run must end by itself.
WAIT_TIMEOUT_SECONDS: Final = 300.0

LATENCY_NAMESPACE: Final = "bench-latency"
KOPF_NAMESPACE: Final = "bench-latency-kopf"
KOPF_KEYS: Final = ("kopf_latency_p50_ms", "kopf_latency_p99_ms", "kopf_latency_samples")
#: The figures of each part (null when that part failed).
QUEUE_KEYS: Final = ("queue_ops_per_s_1", "queue_ops_per_s_8")
CACHE_MEMORY_KEYS: Final = tuple(
    f"{prefix}_{size}"
    for size in ("10k", "100k")
    for prefix in (
        "cache_rss_per_json_byte", "cache_rss_bytes_per_object",
        "cache_rss_per_json_byte_without_managed_fields", "dict_rss_per_json_byte",
        "dict_rss_bytes_per_object", "dict_rss_per_json_byte_without_managed_fields",
        "json_bytes_per_object",
    )
)  # fmt: skip
LATENCY_KEYS: Final = (
    "latency_p50_ms", "latency_p99_ms", "latency_max_ms", "latency_samples", "writer_patches",
    "writer_failures", "writer_rate_per_s", "write_round_trip_p50_ms", "write_round_trip_p99_ms",
)  # fmt: skip
LOOP_BLOCK_KEYS: Final = (
    "max_loop_block_ms", "pods_synced", "pod_json_bytes_per_object", "pod_sync_seconds",
)  # fmt: skip
PODS_NAMESPACE: Final = "bench-pods"
FRESHNESS_NAMESPACE: Final = "bench-freshness"
FANOUT_NAMESPACE: Final = "bench-fanout"

#: The runtime's aims.
AIM_CACHE_RSS_PER_JSON_BYTE: Final = 1.5
AIM_LATENCY_P99_MS: Final = 50.0
AIM_QUEUE_OPS_PER_S: Final = 100_000.0
AIM_MAX_LOOP_BLOCK_MS: Final = 100.0


# -- (a) work queue ---------------------------------------------------------------------------


async def queue_throughput(workers: int, keys: int) -> float:
    """Adds + gets per second of ``keys`` distinct keys through a named (metered) queue."""
    queue: WorkQueue[Request] = WorkQueue(f"bench-queue-{workers}", controller="bench")
    requests = [Request(f"ns-{i % 20}", f"object-{i}") for i in range(keys)]
    processed = 0
    finished = asyncio.Event()

    async def worker() -> None:
        nonlocal processed
        while True:
            key = await queue.get()
            await asyncio.sleep(0)  # a reconcile awaits at least once
            queue.done(key)
            processed += 1
            if processed == keys:
                finished.set()

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    started = time.perf_counter()
    for start in range(0, keys, QUEUE_ADD_BATCH):
        for request in requests[start : start + QUEUE_ADD_BATCH]:
            queue.add(request)
        await asyncio.sleep(0)
    await finished.wait()
    elapsed = time.perf_counter() - started
    queue.shut_down()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return 2 * keys / elapsed


async def queue_figures(sizes: Sizes) -> dict[str, Any]:
    """Work queue throughput with 1 and with 8 workers."""
    figures: dict[str, Any] = {}
    for workers in (1, 8):
        ops = await queue_throughput(workers, sizes.queue_keys)
        figures[f"queue_ops_per_s_{workers}"] = ops
        log.info("work queue, %d worker(s): %.0f ops/s", workers, ops)
    return figures


# -- (b) cache memory ---------------------------------------------------------------------------


def _latency_arguments(url: str, token: str, namespace: str, sizes: Sizes) -> list[str]:
    return command_arguments(
        url,
        token,
        namespace,
        objects=sizes.latency_objects,
        rate=sizes.latency_rate,
        seconds=sizes.latency_seconds,
    )


async def _run_module(*args: str) -> bytes:
    process = await asyncio.create_subprocess_exec(
        *python_module_argv(*args), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"python -m {' '.join(args)} failed with code {process.returncode}")
    return out


async def cache_memory_figures(sizes: Sizes, workdir: Path) -> dict[str, Any]:
    """Cache and dict RSS per JSON byte at both sizes, each in a fresh process."""
    figures: dict[str, Any] = {}
    for label, count in (("10k", sizes.cache_small), ("100k", sizes.cache_large)):
        pages = workdir / f"configmaps-{count}.pages"
        await _run_module("bench.cache_memory", "write", str(pages), str(count))
        for variant in ("cache", "dict"):
            out = await _run_module("bench.cache_memory", "measure", str(pages), variant)
            result = json.loads(out)
            figures[f"{variant}_rss_per_json_byte_{label}"] = result["rss_per_json_byte"]
            figures[f"{variant}_rss_bytes_per_object_{label}"] = result["rss_bytes_per_object"]
            figures[f"json_bytes_per_object_{label}"] = result["json_bytes_per_object"]
            figures[f"{variant}_rss_per_json_byte_without_managed_fields_{label}"] = result[
                "rss_per_json_byte_without_managed_fields"
            ]
            log.info(
                "%s of %d ConfigMaps: %.0f RSS bytes per object, %.2f x the JSON",
                variant,
                count,
                result["rss_bytes_per_object"],
                result["rss_per_json_byte"],
            )
        pages.unlink()
    return figures


# -- the local cluster ------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def local_cluster(workdir: Path) -> AsyncIterator[ServerProcess]:
    """``setpoint cluster serve --in-memory`` in its own process."""
    port = free_port()
    kubeconfig = workdir / "kubeconfig"
    argv = python_module_argv(
        "setpoint", "cluster", "serve", "--in-memory", "--port", str(port),
        "--kubeconfig", str(kubeconfig), "--log-level", "warning",
    )  # fmt: skip
    server = ServerProcess("setpoint", argv, port, workdir / "server.log")
    await server.start(kubeconfig)
    try:
        yield server
    finally:
        server.stop()


async def open_client(server: ServerProcess) -> Client:
    """A setpoint client on the local cluster."""
    token = server.headers["Authorization"].removeprefix("Bearer ")
    config = ClientConfig(server=server.url, credentials=StaticToken(token))
    return await Client.from_config(config, field_manager="setpoint-bench")


async def ensure_namespace(client: Client, name: str) -> None:
    """Create namespace ``name`` unless it exists."""
    with contextlib.suppress(AlreadyExists):
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def _freshness(server: ServerProcess, sizes: Sizes, workdir: Path) -> dict[str, Any]:
    client = await open_client(server)
    try:
        await ensure_namespace(client, FRESHNESS_NAMESPACE)
        return await freshness(
            client, workdir / "kubeconfig", FRESHNESS_NAMESPACE, sizes.freshness_backlog
        )
    finally:
        await client.close()


async def _fanout(server: ServerProcess, sizes: Sizes) -> dict[str, Any]:
    client = await open_client(server)
    try:
        await ensure_namespace(client, FANOUT_NAMESPACE)
        return await fanout(client, FANOUT_NAMESPACE, sizes.fanout)
    finally:
        await client.close()


# -- (c) event-to-reconcile latency -----------------------------------------------------------


def _percentile(samples: list[float], fraction: float) -> float | None:
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def reconcile_latency(server: ServerProcess, sizes: Sizes) -> dict[str, Any]:
    """p50/p99 milliseconds from a patch's stamp to the reconcile that sees it."""
    client = await open_client(server)
    latencies: list[float] = []
    seen: dict[Request, str] = {}
    try:
        await ensure_namespace(client, LATENCY_NAMESPACE)
        for index in range(sizes.latency_objects):
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": object_name(index), "namespace": LATENCY_NAMESPACE},
                    "data": {"stamp": ""},
                }
            )
        cache = Cache(client)

        async def reconcile(request: Request) -> None:
            obj = await cache.get_cached("v1", "ConfigMap", request.name, request.namespace)
            now = time.time()
            if obj is None or request.namespace != LATENCY_NAMESPACE:
                return
            stamp = (obj.get("data") or {}).get("stamp", "")
            if stamp and seen.get(request) != stamp:
                seen[request] = stamp
                latencies.append((now - float(stamp)) * 1000)

        source = KindSource(cache, "v1", "ConfigMap", EnqueueRequestForObject())
        controller = Controller("bench-latency", reconcile, sources=[source])
        await cache.start()
        await controller.start()
        try:
            token = server.headers["Authorization"].removeprefix("Bearer ")
            out = await _run_module(
                "bench.latency_writer",
                *_latency_arguments(server.url, token, LATENCY_NAMESPACE, sizes),
            )
            writer = json.loads(out)
            await asyncio.sleep(LATENCY_DRAIN_SECONDS)
        finally:
            await controller.stop(timeout=5)
            await cache.stop()
    finally:
        await client.close()
    log.info(
        "latency: %d reconciles saw %d patches written at %.0f/s",
        len(latencies),
        writer["patches"],
        writer["rate"],
    )
    p50, p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
    return {
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "latency_max_ms": max(latencies) if latencies else None,
        "latency_samples": len(latencies),
        "writer_patches": writer["patches"],
        "writer_failures": writer["failures"],
        "writer_rate_per_s": writer["rate"],
        "write_round_trip_p50_ms": writer["round_trip_p50_ms"],
        "write_round_trip_p99_ms": writer["round_trip_p99_ms"],
    }


async def kopf_latency(server: ServerProcess, sizes: Sizes, kubeconfig: Path) -> dict[str, Any]:
    """The same stamped patches at the same rate, seen by a Kopf handler in its own process."""
    client = await open_client(server)
    try:
        await ensure_namespace(client, KOPF_NAMESPACE)
        for index in range(sizes.latency_objects):
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": object_name(index), "namespace": KOPF_NAMESPACE},
                    "data": {"stamp": ""},
                }
            )
    finally:
        await client.close()
    peer = await asyncio.create_subprocess_exec(
        *python_module_argv("bench.kopf_peer", KOPF_NAMESPACE),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "KUBECONFIG": str(kubeconfig)},
    )
    assert peer.stdin is not None and peer.stdout is not None
    try:
        async with asyncio.timeout(WAIT_TIMEOUT_SECONDS):
            ready = await peer.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the Kopf peer did not start (said {ready[:200]!r})")
        token = server.headers["Authorization"].removeprefix("Bearer ")
        await _run_module(
            "bench.latency_writer", *_latency_arguments(server.url, token, KOPF_NAMESPACE, sizes)
        )
        await asyncio.sleep(LATENCY_DRAIN_SECONDS)
        peer.stdin.write(b"stop\n")
        await peer.stdin.drain()
        async with asyncio.timeout(WAIT_TIMEOUT_SECONDS):
            out, _ = await peer.communicate()
    finally:
        if peer.returncode is None:
            peer.kill()
            await peer.wait()
    latencies: list[float] = json.loads(out)
    log.info("Kopf latency: %d handler calls", len(latencies))
    return {
        "kopf_latency_p50_ms": _percentile(latencies, 0.5),
        "kopf_latency_p99_ms": _percentile(latencies, 0.99),
        "kopf_latency_samples": len(latencies),
    }


# -- (d) event-loop blocking during an initial list -------------------------------------------

_encode = msgspec.json.Encoder().encode


def pod_body(index: int) -> bytes:
    """A Pod of about 1.5 KiB of JSON, shaped like a Deployment's."""
    return _encode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"web-{index:06d}",
                "namespace": PODS_NAMESPACE,
                "labels": {"app": f"web-{index % 100}", "pod-template-hash": "5d8f7c9b4"},
            },
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "registry.example.com/team/web:1.4.2",
                        "ports": [{"containerPort": 8080, "name": "http"}],
                        "env": [{"name": f"SETTING_{k}", "value": f"value-{k}-{index}"}
                                for k in range(12)],
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                        },
                    }
                ],
            },
        }
    )  # fmt: skip


async def _probe_loop_lag(stop: asyncio.Event, worst: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(PROBE_INTERVAL_SECONDS)
        lag = time.perf_counter() - started - PROBE_INTERVAL_SECONDS
        worst[0] = max(worst[0], lag)


async def loop_block_during_sync(server: ServerProcess, sizes: Sizes) -> dict[str, Any]:
    """Fill the server with Pods, then sync a fresh cache of them while probing the loop."""
    client = await open_client(server)
    try:
        await ensure_namespace(client, PODS_NAMESPACE)
        async with http_load.session(POD_CREATE_CONCURRENCY, server.headers) as http:
            filled = await http_load.create_objects(
                http,
                f"{server.url}/api/v1/namespaces/{PODS_NAMESPACE}/pods",
                sizes.pods,
                POD_CREATE_CONCURRENCY,
                pod_body,
            )
        log.info("created %d Pods (%.0f/s)", filled.created, filled.per_second)
        cache = Cache(client)
        informer = await cache.informer_for("v1", "Pod")
        worst = [0.0]
        stop = asyncio.Event()
        probe = asyncio.create_task(_probe_loop_lag(stop, worst))
        await asyncio.sleep(0.05)  # the probe's first naps measure an idle loop
        worst[0] = 0.0
        started = time.perf_counter()
        await cache.start()
        await informer.wait_for_sync(WAIT_TIMEOUT_SECONDS)
        synced = time.perf_counter() - started
        stop.set()
        await probe
        listed = len(informer.store)
        await cache.stop()
    finally:
        await client.close()
    log.info(
        "synced %d Pods in %.2f s; loop blocked at most %.1f ms", listed, synced, worst[0] * 1e3
    )
    return {
        "max_loop_block_ms": worst[0] * 1000,
        "pods_synced": listed,
        "pod_json_bytes_per_object": filled.json_bytes / max(filled.created, 1),
        "pod_sync_seconds": synced,
    }


# -- the run ------------------------------------------------------------------------------------


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def _at_most(value: float | None, limit: float) -> bool | None:
    return None if value is None else value <= limit


def _at_least(value: float | None, limit: float) -> bool | None:
    return None if value is None else value >= limit


async def run(sizes: Sizes) -> dict[str, Any]:
    """All four parts, one after the other."""
    started = datetime.datetime.now(datetime.UTC)
    figures: dict[str, Any] = {}
    errors: dict[str, str] = {}

    async def part(name: str, measurement: Awaitable[dict[str, Any]], keys: Sequence[str]) -> None:
        # One failing part leaves its figures null (and says why) instead of losing the others.
        try:
            figures.update(await measurement)
        except Exception as exc:
            log.exception("%s: the measurement failed; its figures are null", name)
            figures.update(dict.fromkeys(keys))
            errors[name] = f"{type(exc).__name__}: {exc}"

    await part("work queue", queue_figures(sizes), QUEUE_KEYS)
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-runtime-") as tmp:
        workdir = Path(tmp)
        await part("cache memory", cache_memory_figures(sizes, workdir), CACHE_MEMORY_KEYS)
        try:
            async with local_cluster(workdir) as server:
                await part("latency", reconcile_latency(server, sizes), LATENCY_KEYS)
                if importlib.util.find_spec("kopf") is None:
                    log.warning("kopf is not installed: no Kopf peer (pip install kopf)")
                    figures.update(dict.fromkeys(KOPF_KEYS))
                else:
                    kubeconfig = workdir / "kubeconfig"
                    await part("kopf", kopf_latency(server, sizes, kubeconfig), KOPF_KEYS)
                await part("loop block", loop_block_during_sync(server, sizes), LOOP_BLOCK_KEYS)
                await part("freshness", _freshness(server, sizes, workdir), FRESHNESS_KEYS)
                await part("fan-out", _fanout(server, sizes), FANOUT_KEYS)
        except Exception as exc:
            log.exception("the local cluster failed; the figures that need it are null")
            for keys in (LATENCY_KEYS, KOPF_KEYS, LOOP_BLOCK_KEYS, FRESHNESS_KEYS, FANOUT_KEYS):
                for key in keys:
                    figures.setdefault(key, None)
            errors["local cluster"] = f"{type(exc).__name__}: {exc}"
    await part("start-up", startup(), STARTUP_KEYS)
    if errors:
        figures["errors"] = errors
    figures["cache_over_dict_10k"] = _ratio(
        figures["cache_rss_per_json_byte_10k"], figures["dict_rss_per_json_byte_10k"]
    )
    figures["latency_p99_over_kopf"] = _ratio(
        figures["latency_p99_ms"], figures["kopf_latency_p99_ms"]
    )
    figures["aims"] = {
        "cache_10k_le_1_5x_json": _at_most(
            figures["cache_rss_per_json_byte_10k"], AIM_CACHE_RSS_PER_JSON_BYTE
        ),
        "cache_100k_le_1_5x_json": _at_most(
            figures["cache_rss_per_json_byte_100k"], AIM_CACHE_RSS_PER_JSON_BYTE
        ),
        "latency_p99_le_50ms": _at_most(figures["latency_p99_ms"], AIM_LATENCY_P99_MS),
        "queue_1_ge_100k_ops": _at_least(figures["queue_ops_per_s_1"], AIM_QUEUE_OPS_PER_S),
        "queue_8_ge_100k_ops": _at_least(figures["queue_ops_per_s_8"], AIM_QUEUE_OPS_PER_S),
        "loop_block_le_100ms": _at_most(figures["max_loop_block_ms"], AIM_MAX_LOOP_BLOCK_MS),
        "freshness_p99_le_1s": _at_most(figures["freshness_p99_ms"], 1000.0),
        "fanout_2_writes_per_object": _at_most(figures["fanout_writes_per_object"], 2.0),
        "fanout_0_reads_per_object": _at_most(figures["fanout_reads_per_object"], 0.0),
        "fanout_0_idle_requests": _at_most(figures["fanout_idle_requests"], 0.0),
        "startup_le_0_3s": _at_most(figures["startup_to_first_request_s"], 0.3),
    }
    figures["run"] = {
        "date": started.isoformat(timespec="seconds"),
        "quick": sizes is QUICK,
        "sizes": dataclass_dict(sizes),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "seconds": (datetime.datetime.now(datetime.UTC) - started).total_seconds(),
    }
    return figures


def dataclass_dict(sizes: Sizes) -> dict[str, Any]:
    """The sizes as a JSON-ready dict."""
    return {name: getattr(sizes, name) for name in Sizes.__dataclass_fields__}


def render(figures: dict[str, Any]) -> str:
    """The human-readable report."""
    rows: list[list[object]] = [
        ["work queue ops/s, 1 worker", figures["queue_ops_per_s_1"]],
        ["work queue ops/s, 8 workers", figures["queue_ops_per_s_8"]],
        ["cache RSS / JSON bytes, 10k ConfigMaps", figures["cache_rss_per_json_byte_10k"]],
        ["cache RSS / JSON bytes, 100k ConfigMaps", figures["cache_rss_per_json_byte_100k"]],
        ["dict RSS / JSON bytes, 10k ConfigMaps", figures["dict_rss_per_json_byte_10k"]],
        ["dict RSS / JSON bytes, 100k ConfigMaps", figures["dict_rss_per_json_byte_100k"]],
        ["cache / dict memory, 10k", figures["cache_over_dict_10k"]],
        [
            "cache RSS / JSON bytes w/o managedFields, 10k",
            figures["cache_rss_per_json_byte_without_managed_fields_10k"],
        ],
        [
            "cache RSS / JSON bytes w/o managedFields, 100k",
            figures["cache_rss_per_json_byte_without_managed_fields_100k"],
        ],
        ["JSON bytes per ConfigMap", figures["json_bytes_per_object_10k"]],
        ["latency p50 (ms)", figures["latency_p50_ms"]],
        ["latency p99 (ms)", figures["latency_p99_ms"]],
        ["latency samples", figures["latency_samples"]],
        ["  of which the patch round trip p50 (ms)", figures["write_round_trip_p50_ms"]],
        ["  of which the patch round trip p99 (ms)", figures["write_round_trip_p99_ms"]],
        ["Kopf peer latency p50 (ms)", figures["kopf_latency_p50_ms"]],
        ["Kopf peer latency p99 (ms)", figures["kopf_latency_p99_ms"]],
        ["writer rate (patches/s)", figures["writer_rate_per_s"]],
        ["max loop block during Pod sync (ms)", figures["max_loop_block_ms"]],
        ["Pods synced", figures["pods_synced"]],
        ["Pod sync (s)", figures["pod_sync_seconds"]],
        ["freshness behind the backlog p50 (ms)", figures["freshness_p50_ms"]],
        ["freshness behind the backlog p99 (ms)", figures["freshness_p99_ms"]],
        [
            "  backlog keys / still queued after the samples",
            f"{figures['freshness_backlog']} / {figures['freshness_backlog_left']}",
        ],
        ["fan-out objects", figures["fanout_objects"]],
        ["fan-out writes per object", figures["fanout_writes_per_object"]],
        ["fan-out object reads per object", figures["fanout_reads_per_object"]],
        ["fan-out list/watch/discovery requests", figures["fanout_list_watch_discovery_requests"]],
        ["fan-out reconciles per object", figures["fanout_reconciles_per_object"]],
        ["fan-out requests while idle", figures["fanout_idle_requests"]],
        ["setpoint run to first request (s)", figures["startup_to_first_request_s"]],
        ["setpoint run: CPU until its first request (s)", figures["startup_cpu_s"]],
        ["floor (plain aiohttp client) to first request (s)", figures["floor_to_first_request_s"]],
        ["floor: CPU until its first request (s)", figures["floor_cpu_s"]],
        ["setpoint run / floor, to first request", figures["startup_over_floor"]],
    ]
    aim_rows = [[name, value] for name, value in figures["aims"].items()]
    return "\n\n".join(
        [
            f"bench.runtime  {figures['run']['date']}  ({figures['run']['cpus']} CPUs)"
            + ("\n--quick: tiny sizes; not comparable figures" if figures["run"]["quick"] else ""),
            render_table(["", "value"], rows),
            render_table(["aim", "met"], aim_rows),
        ]
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """The parts whose measurement failed, with the error."""
    return [f"{part}: {error}" for part, error in figures.get("errors", {}).items()]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    run_benchmark("python -m bench.runtime", __doc__, run, (FULL, QUICK), render, failures, argv)


if __name__ == "__main__":
    main()
