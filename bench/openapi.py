"""Benchmark of the OpenAPI documents: how long kubectl waits for them.

    python -m bench.openapi [--json] [--quick]

Against ``setpoint cluster serve --in-memory`` in its own process, from this process, one
request at a time (as kubectl sends them): the first ``/openapi/v3`` index (which builds every
group-version document), then the median and 99th percentile of a group-version document
fetched by its current hash (served from the cache: the aim is ≤ 5 ms), the rebuild after a CRD
is created (index and the new group's document), and ``/openapi/v2`` in protobuf (what kubectl
1.27 and 1.28 read), first and cached. Times are wall-clock milliseconds, body read included.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiohttp

from bench.apiserver import start_target
from bench.command_line import run_benchmark
from bench.results_table import render_table

V2_PROTOBUF: Final = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: The group-version documents timed from the cache: the largest (core) and a typical one.
TIMED_PATHS: Final = ("api/v1", "apis/apps/v1")
#: The aim for a cached group-version document.
AIM_MS: Final = 5.0


@dataclass(frozen=True)
class Sizes:
    """Requests per timed document."""

    cached_requests: int


FULL: Final = Sizes(cached_requests=500)
QUICK: Final = Sizes(cached_requests=20)


async def _timed_get(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> tuple[float, bytes, aiohttp.ClientResponse]:
    started = time.perf_counter()
    async with http.get(url, headers=headers or {}) as response:
        body = await response.read()
        elapsed = (time.perf_counter() - started) * 1000
        if response.status != 200:
            raise RuntimeError(f"GET {url}: {response.status} {body[:200]!r}")
        return elapsed, body, response


def _crd(group: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


async def measure(sizes: Sizes) -> dict[str, Any]:
    """Run every measurement; the figures by name."""
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-openapi-") as workdir:
        server = await start_target("memory", Path(workdir))
        try:
            async with aiohttp.ClientSession(headers=server.headers) as http:
                base = server.url
                first_index, body, _ = await _timed_get(http, f"{base}/openapi/v3")
                figures["index_first_ms"] = round(first_index, 2)
                index = json.loads(body)["paths"]
                for path in TIMED_PATHS:
                    url = base + index[path]["serverRelativeURL"]
                    times = [(await _timed_get(http, url))[0] for _ in range(sizes.cached_requests)]
                    times.sort()
                    key = path.replace("/", "_").replace(".", "_")
                    figures[f"{key}_cached_p50_ms"] = round(statistics.median(times), 3)
                    figures[f"{key}_cached_p99_ms"] = round(times[int(len(times) * 0.99) - 1], 3)
                async with http.post(
                    f"{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    json=_crd("bench.example.com"),
                ) as created:
                    if created.status != 201:
                        raise RuntimeError(f"CRD not created: {created.status}")
                rebuilt_index, body, _ = await _timed_get(http, f"{base}/openapi/v3")
                index = json.loads(body)["paths"]
                new_doc, _, _ = await _timed_get(
                    http, base + index["apis/bench.example.com/v1"]["serverRelativeURL"]
                )
                figures["index_after_crd_ms"] = round(rebuilt_index, 2)
                figures["crd_document_ms"] = round(new_doc, 3)
                accept = {"Accept": V2_PROTOBUF}
                v2_first, v2_body, _ = await _timed_get(http, f"{base}/openapi/v2", accept)
                v2_cached, _, _ = await _timed_get(http, f"{base}/openapi/v2", accept)
                figures["v2_protobuf_first_ms"] = round(v2_first, 2)
                figures["v2_protobuf_cached_ms"] = round(v2_cached, 2)
                figures["v2_protobuf_kib"] = round(len(v2_body) / 1024)
        finally:
            server.stop()
    return figures


def render(figures: dict[str, Any]) -> str:
    """The human-readable table."""
    rows = [[name, value] for name, value in figures.items()]
    return (
        render_table(["measurement", "value"], rows)
        + f"\n(aim: cached group-version document <= {AIM_MS:g} ms)"
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """Measurements that did not produce a figure."""
    expected = [
        "index_first_ms",
        "api_v1_cached_p50_ms",
        "apis_apps_v1_cached_p50_ms",
        "v2_protobuf_first_ms",
    ]
    return [name for name in expected if name not in figures]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    run_benchmark("bench.openapi", __doc__, measure, (FULL, QUICK), render, failures, argv)


if __name__ == "__main__":
    main()
