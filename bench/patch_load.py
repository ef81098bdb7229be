"""Patch and apply throughput of the local API server (part of ``python -m bench.apiserver``).

With 16 requests in flight against one ``setpoint cluster serve --in-memory``:

- merge patch of a 50-field ConfigMap, each request changing one field (a real write), and a
  no-op merge patch (the same value again);
- server-side apply of 50-field ConfigMaps: the first apply (which creates each), the no-op
  re-apply of each (same configuration, same manager: nothing changes), and no-op re-applies
  repeated over 16 objects, as a controller re-applies on every reconcile (the server
  remembers applies that changed nothing, see ``setpoint.cluster.apiserver.patch.noop_applies``);
- strategic merge patch of a Deployment (a container's image, alternating: a real write).

Each figure is the best of three interleaved rounds. The aim: a no-op server-side
apply at ≥ 50 % of the merge patch's throughput.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any, Final

import aiohttp

from bench.http_load import BenchError

FIELDS: Final = 50
CONCURRENCY: Final = 16
NAMESPACE: Final = "bench-patch"
AIM_SSA_NOOP_OF_MERGE: Final = 0.5
#: Rounds per figure (the best is reported).
ROUNDS: Final = 3
APPLY_TYPE: Final = "application/apply-patch+yaml"
MERGE_TYPE: Final = "application/merge-patch+json"
SMP_TYPE: Final = "application/strategic-merge-patch+json"
_JSON: Final = {"Content-Type": "application/json"}
#: Every figure this phase reports (null when it failed).
PATCH_KEYS: Final = (
    "merge_patch_per_s",
    "merge_patch_noop_per_s",
    "ssa_first_apply_per_s",
    "ssa_noop_apply_per_s",
    "ssa_steady_apply_per_s",
    "smp_deployment_per_s",
    "ssa_noop_over_merge",
)

Request = tuple[str, str, bytes, str]


def _fifty_field_config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "patch"}},
        "data": {f"key-{i:02d}": f"value-{i:02d}" for i in range(FIELDS)},
    }


def _deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:0"},
                        {"name": "side", "image": "side:1"},
                    ]
                },
            },
        },
    }


async def _drive(
    http: aiohttp.ClientSession, count: int, request_for: Callable[[int], Request]
) -> float:
    """Send ``count`` requests, :data:`CONCURRENCY` at once; requests per second."""
    indexes = iter(range(count))

    async def worker() -> None:
        for index in indexes:
            method, url, body, content_type = request_for(index)
            async with http.request(
                method, url, data=body, headers={"Content-Type": content_type}
            ) as response:
                answer = await response.read()
                if response.status >= 300:
                    detail = answer[:300].decode(errors="replace")
                    raise BenchError(f"{method} {url}: HTTP {response.status}: {detail}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return count / (time.perf_counter() - started)


async def measure_patching(http: aiohttp.ClientSession, url: str, count: int) -> dict[str, Any]:
    """The figures of :data:`PATCH_KEYS` against the server at ``url`` (namespace exists).

    Every figure is the best of :data:`ROUNDS` rounds, the rounds of all kinds interleaved, so
    that load from other processes hits each kind alike (as for the create rates).
    """
    configmaps = f"{url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    deployments = f"{url}/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
    objects = CONCURRENCY  # objects patched over and over: one per request in flight
    per_round = max(count // ROUNDS, CONCURRENCY)

    for index in range(objects):
        for collection, body in (
            (configmaps, _fifty_field_config(f"mp-{index:02d}")),
            (deployments, _deployment(f"d-{index:02d}")),
        ):
            async with http.post(
                collection, data=json.dumps(body).encode(), headers=_JSON
            ) as response:
                await response.read()

    def apply_request(name: str) -> Request:
        body = json.dumps(_fifty_field_config(name)).encode()
        return ("PATCH", f"{configmaps}/{name}?fieldManager=bench", body, APPLY_TYPE)

    def merge_request(index: int) -> Request:
        body = json.dumps({"data": {"key-00": f"changed-{index}"}}).encode()
        return ("PATCH", f"{configmaps}/mp-{index % objects:02d}", body, MERGE_TYPE)

    def merge_noop(index: int) -> Request:
        body = b'{"data":{"key-01":"value-01"}}'
        return ("PATCH", f"{configmaps}/mp-{index % objects:02d}", body, MERGE_TYPE)

    def smp_request(index: int) -> Request:
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": f"app:{index}"}
        ]}}}}  # fmt: skip
        body = json.dumps(patch).encode()
        return ("PATCH", f"{deployments}/d-{index % objects:02d}", body, SMP_TYPE)

    best: dict[str, float] = {}
    for number in range(ROUNDS):
        rates = {
            "ssa_first_apply_per_s": await _drive(
                http, per_round, lambda i, n=number: apply_request(f"ssa-{n}-{i:06d}")
            ),
            # The same configurations again: nothing changes.
            "ssa_noop_apply_per_s": await _drive(
                http, per_round, lambda i, n=number: apply_request(f"ssa-{n}-{i:06d}")
            ),
            "merge_patch_per_s": await _drive(http, per_round, merge_request),
            "merge_patch_noop_per_s": await _drive(http, per_round, merge_noop),
            # A controller's steady state: the same few objects re-applied over and over.
            "ssa_steady_apply_per_s": await _drive(
                http, per_round, lambda i, n=number: apply_request(f"ssa-{n}-{i % objects:06d}")
            ),
            "smp_deployment_per_s": await _drive(http, per_round, smp_request),
        }
        for key, rate in rates.items():
            best[key] = max(best.get(key, 0.0), rate)
    merge = best["merge_patch_per_s"]
    return {**best, "ssa_noop_over_merge": best["ssa_noop_apply_per_s"] / merge if merge else None}


def patch_rows(figures: dict[str, Any]) -> list[list[object]]:
    """Rows of the report table (requests/s, 16 in flight)."""
    return [
        ["merge patch, 50-field ConfigMap (write)", figures.get("merge_patch_per_s")],
        ["merge patch, no-op", figures.get("merge_patch_noop_per_s")],
        ["server-side apply, first (create)", figures.get("ssa_first_apply_per_s")],
        ["server-side apply, no-op re-apply", figures.get("ssa_noop_apply_per_s")],
        ["  the same, repeated (steady state)", figures.get("ssa_steady_apply_per_s")],
        ["strategic merge patch, Deployment", figures.get("smp_deployment_per_s")],
        ["SSA no-op / merge patch", figures.get("ssa_noop_over_merge")],
    ]


def meets_aim(figures: dict[str, Any]) -> bool | None:
    """Whether a no-op apply reaches :data:`AIM_SSA_NOOP_OF_MERGE` of the merge patch."""
    ratio = figures.get("ssa_noop_over_merge")
    return None if ratio is None else ratio >= AIM_SSA_NOOP_OF_MERGE


async def run_alone(count: int) -> dict[str, Any]:
    """Only this phase, against a fresh in-memory server (``python -m bench.patch_load``)."""
    import tempfile
    from pathlib import Path

    from bench import http_load
    from bench.server_process import start_target

    with tempfile.TemporaryDirectory(prefix="setpoint-bench-") as tmp:
        server = await start_target("memory", Path(tmp))
        try:
            async with http_load.session(CONCURRENCY, server.headers) as http:
                await http_load.ensure_namespace(http, server.url, NAMESPACE)
                return await measure_patching(http, server.url, count)
        finally:
            server.stop()


def _render(figures: dict[str, Any]) -> str:
    from bench.results_table import render_table

    return render_table(["patch and apply (16 in flight)", "requests/s"], patch_rows(figures))


def _failures(figures: dict[str, Any]) -> list[str]:
    return [key for key in PATCH_KEYS if figures.get(key) is None]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: this phase alone."""
    from bench.command_line import run_benchmark

    run_benchmark(
        "python -m bench.patch_load", __doc__, run_alone, (3_000, 50), _render, _failures, argv
    )


if __name__ == "__main__":
    main()
