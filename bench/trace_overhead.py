"""The reconcile trace's cost (issue 25): the fan-out scenario with the trace on and off.

The fan-out of ``bench.runtime`` (``bench/operator_scenarios.py``, scenario f): N Widgets exist
when an operator starts whose reconcile makes a child ConfigMap and patches the Widget's status,
until every Widget converged. It runs in rounds against one local cluster (its own process),
alternating the trace off and on (``trace_capacity`` = the default 10,000) in fresh namespaces,
so both see the same machine load. The figure is the operator process's CPU seconds from the
operator's start to convergence (the cluster's are not counted), summed per arm; the aim is an
overhead of at most 5 %.

    python -m bench.trace_overhead [--quick] [--json]
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Final, NamedTuple

from bench.command_line import run_benchmark
from bench.operator_scenarios import fanout
from bench.runtime import ensure_namespace, local_cluster, open_client
from setpoint.controller.trace import DEFAULT_TRACE_CAPACITY

#: The aim: the trace adds at most this much CPU to the fan-out.
AIM_OVERHEAD: Final = 0.05


class Sizes(NamedTuple):
    objects: int
    rounds: int


FULL: Final = Sizes(objects=1_000, rounds=5)
QUICK: Final = Sizes(objects=20, rounds=1)


async def measure(sizes: Sizes) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    wall: dict[str, list[float]] = {"off": [], "on": []}
    records: list[int] = []
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-trace-") as tmp:
        async with local_cluster(Path(tmp)) as server:
            client = await open_client(server)
            try:
                for round_ in range(sizes.rounds):
                    # Alternate which arm goes first, so neither always runs on a warmer cache.
                    arms = ("off", "on") if round_ % 2 == 0 else ("on", "off")
                    for arm in arms:
                        namespace = f"bench-trace-{arm}-{round_}"
                        await ensure_namespace(client, namespace)
                        figures = await fanout(
                            client,
                            namespace,
                            sizes.objects,
                            trace_capacity=DEFAULT_TRACE_CAPACITY if arm == "on" else None,
                            idle_seconds=0.0,
                        )
                        cpu[arm].append(figures["fanout_cpu_seconds"])
                        wall[arm].append(figures["fanout_converge_seconds"])
                        if arm == "on":
                            records.append(figures["fanout_trace_records"])
            finally:
                await client.close()
    off, on = sum(cpu["off"]), sum(cpu["on"])
    return {
        "objects": sizes.objects,
        "rounds": sizes.rounds,
        "cpu_seconds_off": cpu["off"],
        "cpu_seconds_on": cpu["on"],
        "converge_seconds_off": wall["off"],
        "converge_seconds_on": wall["on"],
        "trace_records_on": records,
        "cpu_on_over_off": on / off if off else None,
        "load_average": os.getloadavg(),
    }


def render(figures: dict[str, Any]) -> str:
    ratio = figures["cpu_on_over_off"]
    lines = [
        f"fan-out of {figures['objects']} Widgets, {figures['rounds']} round(s) per arm",
        "operator CPU s, trace off: " + ", ".join(f"{v:.2f}" for v in figures["cpu_seconds_off"]),
        "operator CPU s, trace on:  " + ", ".join(f"{v:.2f}" for v in figures["cpu_seconds_on"]),
        "converged in s, off: " + ", ".join(f"{v:.1f}" for v in figures["converge_seconds_off"]),
        "converged in s, on:  " + ", ".join(f"{v:.1f}" for v in figures["converge_seconds_on"]),
        "trace records per round (on): " + ", ".join(map(str, figures["trace_records_on"])),
        f"CPU on/off: {ratio:.3f} (aim <= {1 + AIM_OVERHEAD:.2f})" if ratio else "CPU on/off: -",
        "load average: " + ", ".join(f"{v:.2f}" for v in figures["load_average"]),
    ]
    return "\n".join(lines)


def failures(figures: dict[str, Any]) -> list[str]:
    return [] if figures.get("cpu_on_over_off") else ["no CPU figures"]


def main(argv: list[str] | None = None) -> None:
    run_benchmark(
        "python -m bench.trace_overhead", __doc__, measure, (FULL, QUICK), render, failures, argv
    )


if __name__ == "__main__":
    main()
