"""One benchmark run: a cluster, then every selected contestant through the scenarios, N times.

The contestants take turns (never two at once) on one in-memory cluster, each in namespaces of
its own; the fault scenario starts a SQLite cluster per contestant and run.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from bench.peers import widgets
from bench.peers.bytecode import compile_sources
from bench.peers.cluster import Cluster
from bench.peers.processes import CONTESTANTS
from bench.peers.report import machine, median_result, ratios
from bench.peers.scenarios import RAW_SCENARIOS, SCENARIOS, ContestantRun, Result, Settings, fault

log = logging.getLogger("bench.peers")


async def _one_run(
    cluster: Cluster, name: str, scenarios: list[str], settings: Settings, tag: str
) -> list[Result]:
    contestant = CONTESTANTS[name]
    if not contestant.watches:
        scenarios = [s for s in scenarios if s in RAW_SCENARIOS]
    results: list[Result] = []

    def keep(result: Result) -> None:
        results.append(result)
        log.info(
            "%s %s: %.2f s, %s, converged=%s",
            result.scenario, name, result.seconds, result.requests, result.converged,
        )  # fmt: skip

    run = ContestantRun(cluster, contestant, settings, tag)
    chained = [s for s in ("fanout", "storm", "idle", "restart") if s in scenarios]
    try:
        if chained:
            # storm, idle and restart start from a converged fan-out, measured or not.
            fanout = await run.fanout()
            if "fanout" in scenarios:
                keep(fanout)
            if "storm" in scenarios:
                keep(await run.storm())
            if "idle" in scenarios:
                keep(await run.idle())
            if "restart" in scenarios:
                keep(await run.restart())
    finally:
        await run.stop()
    if "freshness" in scenarios:
        keep(await run.freshness())
    if "fault" in scenarios:
        keep(await fault(contestant, settings, tag))
    return results


async def run_benchmark(
    settings: Settings, scenarios: list[str], contestants: list[str], runs: int
) -> dict[str, Any]:
    """Run everything; the document of ``latest.json``."""
    ordered = [s for s in SCENARIOS if s in scenarios]
    collected: dict[tuple[str, str], list[Result]] = defaultdict(list)
    compile_sources()  # every contestant starts as installed: from bytecode
    cluster = Cluster(settings.workdir)
    await cluster.start()
    try:
        await widgets.install(cluster)
        for index in range(runs):
            for name in contestants:
                log.info("run %d/%d: %s", index + 1, runs, name)
                for result in await _one_run(cluster, name, ordered, settings, f"r{index}"):
                    collected[(result.scenario, result.contestant)].append(result)
    finally:
        await cluster.close()
    results = [
        median_result(collected[(scenario, name)])
        for scenario in ordered
        for name in contestants
        if collected.get((scenario, name))
    ]
    return {"machine": machine(), "results": results, "ratios": ratios(results)}
