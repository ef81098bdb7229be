"""The reconcile trace's cost: the fan-out scenario with the trace on and off.

The fan-out of ``bench.runtime`` (``bench/operator_scenarios.py``, scenario f): N Widgets exist
when an operator starts whose reconcile makes a child ConfigMap and patches the Widget's status,
until every Widget converged. It runs in rounds against one local cluster (its own process),
alternating the trace off and on (``trace_capacity`` = the default 10,000) in fresh namespaces,
so both see the same machine load. The figure is the operator process's CPU seconds from the
operator's start to convergence (the cluster's are not counted), summed per arm; the aim is an
overhead of at most 5 %.

    python -m bench.trace_overhead [--quick] [--json]

On a shared machine CPU seconds move with the neighbours' load; ``--instructions`` counts
instead the user-space instructions the operator's process executes from its start to
convergence, under ``valgrind --tool=callgrind`` (as ``bench.apiserver_instructions`` does for
the API server), one process per arm, the Widgets created before counting starts:

    python -m bench.trace_overhead --instructions [--quick] [--json]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

from bench.apiserver_instructions import _callgrind_control, _total_instructions
from bench.command_line import run_benchmark
from bench.operator_scenarios import fanout
from bench.runtime import ensure_namespace, local_cluster, open_client
from bench.server_process import python_module_argv
from setpoint.client import Client, ClientConfig, StaticToken
from setpoint.controller.trace import DEFAULT_TRACE_CAPACITY

#: The aim: the trace adds at most this much CPU to the fan-out.
AIM_OVERHEAD: Final = 0.05


class Sizes(NamedTuple):
    objects: int
    rounds: int


FULL: Final = Sizes(objects=1_000, rounds=5)
QUICK: Final = Sizes(objects=20, rounds=1)
#: Counted instructions do not move with the machine's load, but by a few % with how events
#: happen to batch (how many reconciles a burst coalesces into): three rounds per arm.
INSTRUCTION_SIZES: Final = Sizes(objects=1_000, rounds=3)


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


# -- instructions, under callgrind ---------------------------------------------------------------

#: Under callgrind the operator runs about 50 times slower.
CHILD_TIMEOUT_SECONDS: Final = 1800.0


async def _child(arm: str, namespace: str, objects: int, server_url: str, token: str) -> None:
    """One arm in a process of its own (under callgrind): create the Widgets, say READY, wait
    for GO (counting is on), run the fan-out, say DONE, wait for END (counting is off)."""
    config = ClientConfig(server=server_url, credentials=StaticToken(token))
    client = await Client.from_config(config, field_manager="setpoint-bench")
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await ensure_namespace(client, namespace)
        await fanout(
            client,
            namespace,
            objects,
            trace_capacity=DEFAULT_TRACE_CAPACITY if arm == "on" else None,
            idle_seconds=0.0,
            before_operator=_handshake(reader, "READY", "GO"),
            after_convergence=_handshake(reader, "DONE", "END"),
        )
    finally:
        await client.close()


def _handshake(
    reader: asyncio.StreamReader, say: str, wait_for: str
) -> Callable[[], Awaitable[None]]:
    async def handshake() -> None:
        sys.stdout.write(say + "\n")
        sys.stdout.flush()
        line = await reader.readline()
        if line.decode().strip() != wait_for:
            raise RuntimeError(f"expected {wait_for}, got {line!r}")

    return handshake


async def _count_arm(
    arm: str, namespace: str, objects: int, server_url: str, token: str, workdir: Path
) -> int:
    out = workdir / f"{arm}-{namespace}.callgrind"
    process = await asyncio.create_subprocess_exec(
        "env", "PYTHONHASHSEED=0", "valgrind", "--tool=callgrind", "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        *python_module_argv("bench.trace_overhead", "--child", arm, namespace, str(objects),
                            server_url, token),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None and stdout is not None

    async def expect(word: str) -> None:
        line = await stdout.readline()
        if line.decode().strip() != word:
            raise RuntimeError(f"{arm}: expected {word} from the operator, got {line!r}")

    async with asyncio.timeout(CHILD_TIMEOUT_SECONDS):
        await expect("READY")
        _callgrind_control(process.pid, "-i", "on")
        stdin.write(b"GO\n")
        await expect("DONE")
        _callgrind_control(process.pid, "-i", "off")
        _callgrind_control(process.pid, "-d")
        stdin.write(b"END\n")
        await process.wait()
    return _total_instructions(out)


async def measure_instructions(sizes: Sizes) -> dict[str, Any]:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: this measurement needs valgrind --tool=callgrind")
    counts: dict[str, list[int]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-trace-") as tmp:
        workdir = Path(tmp)
        async with local_cluster(workdir) as server:
            token = server.headers["Authorization"].removeprefix("Bearer ")
            for round_ in range(sizes.rounds):
                arms = ("off", "on") if round_ % 2 == 0 else ("on", "off")
                for arm in arms:
                    namespace = f"bench-instr-{arm}-{round_}"
                    counts[arm].append(
                        await _count_arm(arm, namespace, sizes.objects, server.url, token, workdir)
                    )
    off, on = sum(counts["off"]), sum(counts["on"])
    return {
        "objects": sizes.objects,
        "rounds": sizes.rounds,
        "instructions_off": counts["off"],
        "instructions_on": counts["on"],
        "instructions_on_over_off": on / off if off else None,
    }


def render_instructions(figures: dict[str, Any]) -> str:
    ratio = figures["instructions_on_over_off"]
    return "\n".join(
        [
            f"fan-out of {figures['objects']} Widgets, {figures['rounds']} round(s) per arm, "
            "user-space instructions of the operator's process (callgrind)",
            "trace off: " + ", ".join(f"{v:,}" for v in figures["instructions_off"]),
            "trace on:  " + ", ".join(f"{v:,}" for v in figures["instructions_on"]),
            f"on/off: {ratio:.4f} (aim <= {1 + AIM_OVERHEAD:.2f})" if ratio else "on/off: -",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--child"]:
        arm, namespace, objects, server_url, token = args[1:6]
        asyncio.run(_child(arm, namespace, int(objects), server_url, token))
        return
    if "--instructions" in args:
        rest = [arg for arg in args if arg != "--instructions"]
        run_benchmark(
            "python -m bench.trace_overhead --instructions", __doc__, measure_instructions,
            (INSTRUCTION_SIZES, QUICK), render_instructions,
            lambda figures: [] if figures.get("instructions_on_over_off") else ["no counts"],
            rest,
        )  # fmt: skip
        return
    run_benchmark(
        "python -m bench.trace_overhead", __doc__, measure, (FULL, QUICK), render, failures, args
    )


if __name__ == "__main__":
    main()
