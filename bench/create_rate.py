"""Creates/s of the API server's configurations, interleaved, beside the bare HTTP ceiling.

    python -m bench.create_rate [--rounds N] [--count N] [--targets a,b,...] [--baseline DIR]
                                [--json]

``bench.apiserver`` measures each target once, one after the other, so on a shared machine a
neighbour's burst lands on one target and not on the next. Here every target is started at
once (idle while not measured) and measured in turn, ``--rounds`` times: round after round, each
target creates ``--count`` ConfigMaps (the bodies of ``bench.apiserver``) with 16 in flight in
a namespace of its own. Reported per target: the median creates/s, the median share of the
ceiling's creates/s **of the same round**, and the server's CPU per create (user + system time
of its process over the round, from psutil).

Targets: ``ceiling`` (``bench.ceiling_server``), ``memory`` (``setpoint cluster serve
--in-memory``, every built-in controller), ``memory-no-controllers`` (the same with
``--no-controllers``), ``sqlite`` (``--data-dir``, every controller).

``--baseline DIR`` adds, for each target but the ceiling, ``TARGET@baseline``: the same server
run from an export of older code in ``DIR`` (``git archive COMMIT setpoint | tar -x -C DIR``;
started there, with ``PYTHONPATH=DIR``, so ``python -m setpoint`` imports that code), measured
in the same rounds: before and after a change, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import psutil

from bench import http_load
from bench.server_process import ServerProcess, free_port, python_module_argv, setpoint_argv

log = logging.getLogger("bench.create_rate")

TARGETS: Final = ("ceiling", "memory", "memory-no-controllers", "sqlite")
CONCURRENCY: Final = 16


def _argv(target: str, port: int, workdir: Path) -> tuple[list[str], Path | None]:
    if target == "ceiling":
        return python_module_argv("bench.ceiling_server", "--port", str(port)), None
    kubeconfig = workdir / f"{target}.kubeconfig"
    data_dir = workdir / "data" if target == "sqlite" else None
    flags = ["--no-controllers"] if target == "memory-no-controllers" else []
    argv = setpoint_argv(port, kubeconfig, data_dir, *flags)
    return argv, kubeconfig


BASELINE_SUFFIX: Final = "@baseline"


def with_baselines(targets: list[str]) -> list[str]:
    """Each target followed by its run from the baseline (the ceiling has none)."""
    return [
        name
        for target in targets
        for name in ((target,) if target == "ceiling" else (target, target + BASELINE_SUFFIX))
    ]


async def _start(target: str, workdir: Path, baseline: Path | None = None) -> ServerProcess:
    port = free_port()
    configuration = target.removesuffix(BASELINE_SUFFIX)
    argv, kubeconfig = _argv(configuration, port, workdir / target)
    (workdir / target).mkdir()
    if target.endswith(BASELINE_SUFFIX):
        assert baseline is not None
        server = ServerProcess(target, argv, port, workdir / f"{target}.log", source=baseline)
    else:
        server = ServerProcess(target, argv, port, workdir / f"{target}.log")
    await server.start(kubeconfig)
    return server


async def _round(server: ServerProcess, number: int, count: int) -> tuple[float, float]:
    """One round against ``server``: (creates/s, server CPU µs per create)."""
    process = psutil.Process(server.pid)
    namespace = f"rate-{number}"
    async with http_load.session(CONCURRENCY, server.headers) as http:
        if server.name != "ceiling":  # the ceiling stores nothing, namespaces included
            await http_load.ensure_namespace(http, server.url, namespace)
        before = process.cpu_times()
        run = await http_load.create_config_maps(
            http, server.url, namespace, count, CONCURRENCY, prefix=f"r{number}"
        )
        after = process.cpu_times()
    cpu = (after.user - before.user) + (after.system - before.system)
    return run.per_second, cpu / max(run.created, 1) * 1e6


async def measure(
    targets: list[str], rounds: int, count: int, baseline: Path | None = None
) -> dict[str, Any]:
    """Start every target, then ``rounds`` rounds of each in turn; medians per target."""
    rates: dict[str, list[float]] = {target: [] for target in targets}
    shares: dict[str, list[float]] = {target: [] for target in targets}
    cpu: dict[str, list[float]] = {target: [] for target in targets}
    with tempfile.TemporaryDirectory(prefix="bench-create-rate-") as tmp:
        servers: dict[str, ServerProcess] = {}
        try:
            for target in targets:
                servers[target] = await _start(target, Path(tmp), baseline)
            await asyncio.sleep(2.0)  # let every server's start-up work settle
            for number in range(rounds):
                for target in targets:
                    rate, micros = await _round(servers[target], number, count)
                    rates[target].append(rate)
                    cpu[target].append(micros)
                    log.info("round %d %s: %.0f/s, %.0f µs CPU", number, target, rate, micros)
                if "ceiling" in targets:
                    ceiling = rates["ceiling"][-1]
                    for target in targets:
                        shares[target].append(rates[target][-1] / ceiling)
        finally:
            for server in servers.values():
                server.stop()
    figures: dict[str, Any] = {
        "rounds": rounds,
        "count": count,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "targets": {},
    }
    for target in targets:
        figures["targets"][target] = {
            "creates_per_s": round(statistics.median(rates[target]), 1),
            "of_ceiling": round(statistics.median(shares[target]), 3) if shares[target] else None,
            "server_cpu_us_per_create": round(statistics.median(cpu[target]), 1),
            "rates": [round(rate, 1) for rate in rates[target]],
        }
    return figures


def render(figures: dict[str, Any]) -> str:
    """A Markdown table of the medians."""
    lines = [
        f"{figures['rounds']} rounds of {figures['count']:,} creates, 16 in flight, "
        f"load average {figures['load_average_1m']}",
        "",
        "| target | creates/s | of the ceiling | server CPU per create |",
        "|:---|---:|---:|---:|",
    ]
    for target, row in figures["targets"].items():
        share = "-" if row["of_ceiling"] is None else f"{row['of_ceiling'] * 100:.0f} %"
        lines.append(
            f"| {target} | {row['creates_per_s']:,.0f} | {share} | "
            f"{row['server_cpu_us_per_create']:.0f} µs |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.create_rate", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument(
        "--baseline",
        type=Path,
        help="an export of older code: each target but the ceiling also runs from there",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    options = parser.parse_args(argv)
    targets = [target for target in options.targets.split(",") if target]
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        known = ", ".join(TARGETS)
        parser.error(f"--targets: unknown target {', '.join(unknown)} (known: {known})")
    baseline = options.baseline
    if baseline is not None:
        baseline = baseline.resolve()
        if not (baseline / "setpoint" / "__init__.py").is_file():
            parser.error(f"--baseline: {baseline} holds no setpoint package")
        targets = with_baselines(targets)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    figures = asyncio.run(measure(targets, options.rounds, options.count, baseline))
    print(json.dumps(figures) if options.json else render(figures))


if __name__ == "__main__":
    main()
