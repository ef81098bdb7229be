"""Composite controllers beside the same logic as a reconciler:
``python -m bench.composite [N]`` (default N = 1,000 parents).

In one local cluster (``setpoint cluster serve --in-memory``, its own process), three operators
run the same logic over N Widgets (a CRD), one after the other, each in its own namespace: every
Widget gets 2 children (a ConfigMap and a Secret holding its ``spec.size``) and
``status.size``:

- ``reconciler``: an ``Operator`` reconciler writing the children with ``ctx.apply_owned`` and
  the status with ``ctx.patch_status`` (the runtime's recommended way);
- ``python_hook``: ``setpoint.composite.composite`` with the logic as a Python sync hook;
- ``http_hook``: a ``CompositeController`` run by ``setpoint.composite.Metacontroller``, the
  hook an aiohttp server in this process, called over HTTP as Metacontroller calls it.

Each starts once the Widgets exist (16 workers). Figures per run: seconds from the operator's
start until every Widget has its status and both children (``seconds``), and until no hook
call (or reconcile) and no request happened for a second (``settled_seconds``); requests its
client sent until settled, per Widget (writes; lists, watches and discovery for the whole run);
hook calls (or reconciles) per Widget; the CPU seconds of this process (the operator, and for
``http_hook`` the hook server too; the cluster runs in its own process) until settled, which a
busy machine inflates less than the wall time; then every request and hook call during
``IDLE_SECONDS`` idle seconds. Ratios are
against the reconciler of the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from bench.operator_scenarios import WIDGET_GROUP, RequestCounter, _create_all, _widget_crd
from bench.runtime import ensure_namespace, local_cluster, open_client
from setpoint import kinds
from setpoint.client import Client
from setpoint.composite import Metacontroller, SyncRequest, SyncResponse, composite
from setpoint.composite.crds import metacontroller_crds
from setpoint.controller import Request
from setpoint.manager import Context, Operator

IDLE_SECONDS: Final = 3.0
WORKERS: Final = 16
TIMEOUT_SECONDS: Final = 900.0
WIDGET: Final = (f"{WIDGET_GROUP}/v1", "Widget")


def children_of(name: str, size: Any) -> list[dict[str, Any]]:
    """The two children of Widget ``name`` (the same for every contestant)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-cm"},
            "data": {"size": str(size)},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-secret"},
            "stringData": {"size": str(size)},
        },
    ]


def hook_answer(parent: dict[str, Any]) -> dict[str, Any]:
    size = parent["spec"]["size"]
    return {
        "status": {"size": str(size)},
        "children": children_of(parent["metadata"]["name"], size),
    }


async def _wait_converged(client: Client, namespace: str, objects: int) -> None:
    async with asyncio.timeout(TIMEOUT_SECONDS):
        while True:
            widgets = await client.list(*WIDGET, namespace=namespace)
            done = sum(1 for w in widgets if (w.get("status") or {}).get("size") is not None)
            if done == objects:
                secrets = await client.list("v1", "Secret", namespace=namespace)
                if len(secrets) >= objects:
                    return
            await asyncio.sleep(0.2)


async def _measure(
    client: Client,
    namespace: str,
    objects: int,
    op: Operator,
    operator_client: Client,
    calls: Callable[[], int],
) -> dict[str, Any]:
    counter = RequestCounter(operator_client)
    started, cpu_started = time.monotonic(), time.process_time()
    async with op:
        await _wait_converged(client, namespace, objects)
        seconds = time.monotonic() - started
        # Settled: no hook call (or reconcile) and no request for a second.
        last = (-1, counter.snapshot())
        while (calls(), counter.snapshot()) != last:
            last = (calls(), counter.snapshot())
            await asyncio.sleep(1.0)
        settled = time.monotonic() - started - 1.0
        cpu = time.process_time() - cpu_started
        converged, converged_calls = counter.snapshot(), calls()
        await asyncio.sleep(IDLE_SECONDS)
        idle, idle_calls = counter.snapshot() - converged, calls() - converged_calls
    return {
        "seconds": round(seconds, 2),
        "settled_seconds": round(settled, 2),
        "cpu_seconds": round(cpu, 2),
        "writes_per_parent": converged["write"] / objects,
        "reads_per_parent": converged["read"] / objects,
        "list_watch_discovery": converged["list_watch_discovery"],
        "calls_per_parent": converged_calls / objects,
        "idle_requests": sum(idle.values()),
        "idle_calls": idle_calls,
    }


async def _widgets(client: Client, namespace: str, objects: int) -> None:
    await ensure_namespace(client, namespace)
    await _create_all(
        client,
        [
            {
                "apiVersion": WIDGET[0],
                "kind": WIDGET[1],
                "metadata": {"name": f"w{i}", "namespace": namespace},
                "spec": {"size": i},
            }
            for i in range(objects)
        ],
    )


async def reconciler(client: Client, objects: int) -> dict[str, Any]:
    namespace = "bench-composite-reconciler"
    await _widgets(client, namespace, objects)
    operator_client = await Client.from_config(client.config)
    op = Operator("bench-reconciler", operator_client, namespaces=[namespace])
    reconciles = 0

    @op.reconciler(for_=WIDGET, owns=[kinds.ConfigMap, kinds.Secret], max_concurrent=WORKERS)
    async def reconcile(ctx: Context, request: Request) -> None:
        nonlocal reconciles
        reconciles += 1
        widget = await ctx.get()
        if widget is None:
            return
        for child in children_of(request.name, widget["spec"]["size"]):
            await ctx.apply_owned(child)
        await ctx.patch_status({"size": str(widget["spec"]["size"])})

    try:
        return await _measure(client, namespace, objects, op, operator_client, lambda: reconciles)
    finally:
        await operator_client.close()


async def python_hook(client: Client, objects: int) -> dict[str, Any]:
    namespace = "bench-composite-python"
    await _widgets(client, namespace, objects)
    operator_client = await Client.from_config(client.config)
    op = Operator("bench-python-hook", operator_client, namespaces=[namespace])
    calls = 0

    @composite(op, parent=WIDGET, children={kinds.ConfigMap: "InPlace", kinds.Secret: "InPlace"},
               generate_selector=True, max_concurrent=WORKERS)  # fmt: skip
    def sync(request: SyncRequest) -> SyncResponse:
        nonlocal calls
        calls += 1
        answer = hook_answer(request.parent)
        return SyncResponse(answer["children"], status=answer["status"])

    try:
        return await _measure(client, namespace, objects, op, operator_client, lambda: calls)
    finally:
        await operator_client.close()


async def http_hook(client: Client, objects: int) -> dict[str, Any]:
    namespace = "bench-composite-http"
    for crd in metacontroller_crds():
        with contextlib.suppress(Exception):
            await client.create(crd)
    await asyncio.sleep(1.0)  # the CRDs established
    await _widgets(client, namespace, objects)
    calls = 0

    async def handle(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        body = await request.json()
        return web.json_response(hook_answer(body["parent"]))

    app = web.Application()
    app.router.add_post("/sync", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/sync"
    await client.create(
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "CompositeController",
            "metadata": {"name": "bench-widgets"},
            "spec": {
                "generateSelector": True,
                "parentResource": {"apiVersion": WIDGET[0], "resource": "widgets"},
                "childResources": [
                    {"apiVersion": "v1", "resource": r, "updateStrategy": {"method": "InPlace"}}
                    for r in ("configmaps", "secrets")
                ],
                "hooks": {"sync": {"webhook": {"url": url}}},
            },
        }
    )
    operator_client = await Client.from_config(client.config)
    op = Operator("bench-http-hook", operator_client, namespaces=[namespace])
    op.add(Metacontroller(op, workers_per_controller=WORKERS))
    try:
        return await _measure(client, namespace, objects, op, operator_client, lambda: calls)
    finally:
        await operator_client.close()
        await runner.cleanup()


async def run(objects: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"parents": objects, "children_per_parent": 2}
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-composite-") as tmp:
        async with local_cluster(Path(tmp)) as server:
            client = await open_client(server)
            try:
                with contextlib.suppress(Exception):
                    await client.create(_widget_crd())
                await asyncio.sleep(1.0)
                contestants: dict[str, Callable[[Client, int], Awaitable[dict[str, Any]]]] = {
                    "reconciler": reconciler,
                    "python_hook": python_hook,
                    "http_hook": http_hook,
                }
                for name, measure in contestants.items():
                    figures[name] = await measure(client, objects)
            finally:
                await client.close()
    base = figures["reconciler"]
    for name in ("python_hook", "http_hook"):
        for key in ("seconds", "settled_seconds", "cpu_seconds"):
            figures[name][f"{key}_over_reconciler"] = round(figures[name][key] / base[key], 2)
    return figures


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    objects = int(args[0]) if args else 1000
    print(json.dumps(asyncio.run(run(objects)), indent=2))


if __name__ == "__main__":
    main()
