"""Instructions per unit of work on setpoint's hot paths, in one process, without a cluster.

    python -m bench.peers.hot_paths                        # all three paths, 2,000 units each
    python -m bench.peers.hot_paths --paths reconcile --count 1000
    python -m bench.peers.hot_paths --direct               # wall clock, no valgrind (noisy)

``bench.peers.instructions`` says what one more Widget costs the whole operator; this says where
it goes, one path at a time, without the network, the API server or the other paths:

- ``event``: one watch event of a child ConfigMap the controller wrote itself, through the
  reflector's line handling, the store and its owner index, and the controller's event
  dispatcher, which drops it as an own write (the ``ignore_own_writes=True`` opt-in; by default
  the event enqueues the owner's key, and the extra reconcile it causes is in the whole
  operator's figures of ``bench.peers.instructions``);
- ``listed``: one Widget of an informer's initial list: decoded, diffed, stored and queued;
- ``reconcile``: one run of the Widget operator's reconcile function
  (``bench/peers/contestants/setpoint_widgets.py``) through ``Context``, the recording client
  and the client, over a filled cache, with a transport that answers from memory.

Each path runs under ``valgrind --tool=callgrind`` twice: once only setting up, once setting up
and then doing ``count`` units of work. The difference divided by ``count`` is the cost of one
unit; it is deterministic to within a few hundred instructions, so a change of 1 K is visible,
where the whole-operator figure moves by ~10 K between runs. The paths call a few private
methods (``Reflector._handle_line``, ``Reflector._list_and_sync``): this is a measuring tool
for the runtime's own developers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
from multidict import CIMultiDict, CIMultiDictProxy

from bench.peers.bytecode import compile_sources
from bench.peers.instructions import instructions_in
from setpoint.api.gvk import ResourceInfo
from setpoint.cache import Cache, CacheOptions
from setpoint.cache.handlers import HandlerRegistry
from setpoint.cache.reflector import Reflector
from setpoint.cache.store import MutableStore
from setpoint.client.client import Client
from setpoint.client.config import ClientConfig
from setpoint.client.transport import RawResponse
from setpoint.controller.handlers import EnqueueRequestForObject, EnqueueRequestForOwner
from setpoint.controller.own_writes import OwnWrites
from setpoint.controller.reconcile import Request
from setpoint.controller.source import _Dispatcher
from setpoint.controller.workqueue import WorkQueue
from setpoint.manager.context import Context

PATHS = ("event", "listed", "reconcile")
NAMESPACE = "bench"
GROUP_VERSION = "bench.setpoint.dev/v1"
WIDGETS = ResourceInfo(
    group="bench.setpoint.dev", version="v1", kind="Widget", resource="widgets",
    namespaced=True, list_kind="WidgetList",
)  # fmt: skip
CONFIG_MAPS = ResourceInfo(
    group="", version="v1", kind="ConfigMap", resource="configmaps", namespaced=True,
    list_kind="ConfigMapList",
)  # fmt: skip


def widget(i: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """Widget ``w<i>`` as the API server sends it (managedFields included)."""
    obj: dict[str, Any] = {
        "apiVersion": GROUP_VERSION,
        "kind": "Widget",
        "metadata": {
            "name": f"w{i}", "namespace": NAMESPACE, "uid": f"6f1c2a0e-3b7d-4f7e-9a51-{i:012d}",
            "resourceVersion": str(10_000 + i), "generation": 1,
            "creationTimestamp": "2026-11-26T21:00:00Z",
            "managedFields": [{
                "manager": "bench", "operation": "Update", "apiVersion": GROUP_VERSION,
                "time": "2026-11-26T21:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {".": {}, "f:color": {}, "f:size": {}}},
            }],
        },
        "spec": {"color": "blue", "size": 3},
    }  # fmt: skip
    if status is not None:
        obj["status"] = status
        obj["metadata"]["resourceVersion"] = str(500_000 + i)
    return obj


def child(i: int) -> dict[str, Any]:
    """The child ConfigMap of Widget ``w<i>``, as the server answers its apply."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"w{i}-data", "namespace": NAMESPACE,
            "uid": f"0c1d2e3f-4a5b-6c7d-8e9f-{i:012d}", "resourceVersion": str(400_000 + i),
            "creationTimestamp": "2026-11-26T21:00:00Z",
            "ownerReferences": [{
                "apiVersion": GROUP_VERSION, "kind": "Widget", "name": f"w{i}",
                "uid": f"6f1c2a0e-3b7d-4f7e-9a51-{i:012d}", "controller": True,
                "blockOwnerDeletion": True,
            }],
            "managedFields": [{
                "manager": "bench-widgets", "operation": "Apply", "apiVersion": "v1",
                "time": "2026-11-26T21:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:color": {}, "f:size": {}}},
            }],
        },
        "data": {"color": "blue", "size": "3"},
    }  # fmt: skip


def list_body(kind: str, items: list[dict[str, Any]]) -> bytes:
    meta = {"resourceVersion": "1000"}
    return msgspec.json.encode({"kind": kind, "metadata": meta, "items": items})


class _Queue:
    """A queue that drops what it is given (the event path ends at the dispatcher)."""

    def add(self, key: Any, *args: Any) -> None:
        pass


class _Mapper:
    generation = 1

    def cached_resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        return WIDGETS if kind == "Widget" else CONFIG_MAPS

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        return self.cached_resource_for(api_version, kind)


class _ListWatch:
    """Lists from memory; watches stay open and silent."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        self.bodies = bodies
        self.mapper = _Mapper()

    async def list_raw(
        self, resource: ResourceInfo, namespace: str | None = None, **_: Any
    ) -> bytes:
        return self.bodies[resource.resource]

    async def watch_raw(
        self, resource: ResourceInfo, namespace: str | None = None, **_: Any
    ) -> AsyncIterator[bytes]:
        yield b""
        await asyncio.Event().wait()


class _Transport:
    """Answers every request with the body stored for its path."""

    def __init__(self, answers: dict[str, bytes]) -> None:
        self.answers = answers
        self.headers = CIMultiDictProxy(CIMultiDict({"Content-Type": "application/json"}))

    async def request(self, method: str, path: str, **_: Any) -> RawResponse:
        return RawResponse(200, self.headers, self.answers[path])


Work = Callable[[], Awaitable[int]]


async def event_path(count: int) -> Work:
    """Own-write events of ``count`` child ConfigMaps; the work returns the stored count."""
    store = MutableStore()
    handlers = HandlerRegistry("configmaps")
    own_writes = OwnWrites()
    handler = EnqueueRequestForOwner(GROUP_VERSION, "Widget")
    handlers.add(_Dispatcher("configmaps", handler, None, _Queue(), own_writes))
    reflector = Reflector(_ListWatch({}), CONFIG_MAPS, store, handlers, namespace=NAMESPACE)
    lines = []
    for i in range(count):
        obj = child(i)
        lines.append(msgspec.json.encode({"type": "ADDED", "object": obj}))
        own_writes.record(obj["metadata"]["uid"], obj["metadata"]["resourceVersion"])

    async def work() -> int:
        for line in lines:
            reflector._handle_line(line)
        return store.count(NAMESPACE)

    return work


async def listed_path(count: int) -> Work:
    """An initial list of ``count`` Widgets into a store and a work queue; returns the queued
    count."""
    store = MutableStore()
    handlers = HandlerRegistry("widgets")
    queue: WorkQueue[Request] = WorkQueue()
    handlers.add(_Dispatcher("widgets", EnqueueRequestForObject(), None, queue, OwnWrites()))
    client = _ListWatch({"widgets": list_body("WidgetList", [widget(i) for i in range(count)])})
    reflector = Reflector(client, WIDGETS, store, handlers, namespace=NAMESPACE)

    async def work() -> int:
        await reflector._list_and_sync()
        return len(queue)

    return work


async def reconcile_path(count: int) -> Work:
    """``count`` reconciles of the Widget operator over a filled cache; returns how many
    wrote both the child and the status (0 when the cache does not show the last one Ready)."""
    from bench.peers.contestants.setpoint_widgets import reconcile

    widgets = [widget(i) for i in range(count)]
    bodies = {
        "widgets": list_body("WidgetList", widgets),
        "configmaps": list_body("ConfigMapList", []),
    }
    cache = Cache(_ListWatch(bodies), CacheOptions(namespaces={NAMESPACE}))  # type: ignore[arg-type]
    await cache.start()
    await cache.list(GROUP_VERSION, "Widget", NAMESPACE)
    await cache.list("v1", "ConfigMap", NAMESPACE)
    ready = {"phase": "Ready", "observedGeneration": 1}
    answers: dict[str, bytes] = {}
    for i in range(count):
        status_path = f"/apis/{GROUP_VERSION}/namespaces/{NAMESPACE}/widgets/w{i}/status"
        answers[status_path] = msgspec.json.encode(widget(i, ready))
        answers[f"/api/v1/namespaces/{NAMESPACE}/configmaps/w{i}-data"] = msgspec.json.encode(
            child(i)
        )
    client = Client(ClientConfig(server="http://127.0.0.1:1"), _Transport(answers))  # type: ignore[arg-type]
    client.mapper = _Mapper()  # type: ignore[assignment]
    manager = _Manager(client, cache)
    own_writes = OwnWrites()
    log = logging.getLogger("bench.hot_paths")
    requests = [Request(NAMESPACE, f"w{i}") for i in range(count)]

    async def work() -> int:
        for request in requests:
            ctx = Context(
                manager,  # type: ignore[arg-type]
                "widgets",
                request,
                api_version=GROUP_VERSION,
                kind="Widget",
                log=log,
                field_manager="bench-widgets",
                own_writes=own_writes,
            )
            await reconcile(ctx, request)
        last = await cache.get(GROUP_VERSION, "Widget", f"w{count - 1}", NAMESPACE)
        await cache.stop()
        if last is None or last.get("status") != ready:
            return 0
        return len(own_writes) // 2  # each reconcile wrote the child and the status

    return work


class _Manager:
    """What a Context reads from its manager."""

    def __init__(self, client: Client, cache: Cache) -> None:
        self.client = client
        self.cache = cache
        self.clock = None


SETUPS: dict[str, Callable[[int], Awaitable[Work]]] = {
    "event": event_path,
    "listed": listed_path,
    "reconcile": reconcile_path,
}


async def run_path(path: str, count: int, *, work: bool = True) -> int | None:
    """Set ``path`` up for ``count`` units, then (with ``work``) do them; returns what the work
    returned (every path returns ``count`` when all went as expected)."""
    do = await SETUPS[path](count)
    return await do() if work else None


def count_instructions(path: str, count: int, workdir: Path) -> int:
    """Instructions of one unit of ``path`` (two runs under callgrind; see the module docs)."""
    # Both runs must load the same bytecode: a module compiled by only one of them (no .pyc
    # yet, as in a fresh checkout, or written meanwhile by another process) would count its
    # compilation in that run and make the difference meaningless, even negative.
    compile_sources()
    totals = []
    for work in (False, True):
        out = workdir / f"{path}-{int(work)}.callgrind"
        argv = [sys.executable, "-m", "bench.peers.hot_paths", "--run", path, "--count", str(count)]
        if not work:
            argv.append("--setup-only")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            check=True,
            capture_output=True,
            # A fixed hash seed: with a random one, dict layouts (and so the instruction count of
            # the same work) change from run to run.
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        totals.append(instructions_in(out))
    return round((totals[1] - totals[0]) / count)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.hot_paths")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"Of {', '.join(PATHS)}.")
    parser.add_argument("--count", type=int, default=2000, help="Units of work per path.")
    parser.add_argument("--direct", action="store_true", help="Wall clock, no valgrind.")
    parser.add_argument("--run", choices=PATHS, help=argparse.SUPPRESS)  # one measured process
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        done = asyncio.run(run_path(args.run, args.count, work=not args.setup_only))
        if done is not None and done != args.count:
            sys.exit(f"{args.run}: {done} of {args.count} units done")
        return
    paths = args.paths.split(",")
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        sys.exit(f"--paths: unknown {', '.join(unknown)}; choose from {', '.join(PATHS)}")
    if args.count < 1:
        sys.exit("--count: give at least 1")
    results: dict[str, int] = {}
    if args.direct:
        for path in paths:
            do = asyncio.run(_timed(path, args.count))
            results[f"{path}_ns"] = do
    else:
        if shutil.which("valgrind") is None:
            sys.exit("valgrind is not installed: use --direct for a wall-clock measurement")
        with tempfile.TemporaryDirectory(prefix="setpoint-hot-paths-") as tmp:
            for path in paths:
                results[path] = count_instructions(path, args.count, Path(tmp))
    print(json.dumps(results, indent=2))


async def _timed(path: str, count: int) -> int:
    do = await SETUPS[path](count)
    started = time.perf_counter_ns()
    await do()
    return round((time.perf_counter_ns() - started) / count)


if __name__ == "__main__":
    main()
