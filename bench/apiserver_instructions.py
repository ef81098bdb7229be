"""CPU per create without the noise: the API server's instructions per create, counted by callgrind.

    python -m bench.apiserver_instructions [--json] [--quick]

Creates per second depend on what else the machine runs; on a shared 2-core host they moved by 2x
between runs. The instructions a server executes per create do not: each target (the HTTP
ceiling of ``bench.apiserver``, ``setpoint cluster serve --in-memory`` with its controllers, the
same with ``--no-controllers``, and ``--data-dir`` on SQLite) runs under
``valgrind --tool=callgrind --instr-atstart=no``; after a warm-up of creates, counting is switched
on (``callgrind_control -i on``) for a fixed number of ConfigMap creates with 16 in flight (the
same load generator and bodies as ``bench.apiserver``), then off, and the counts are dumped.
Instructions per create = the dump's total / the creates. Only user-space instructions count
(the kernel's share of a socket write is left out for every target alike), and the targets run
about 50 times slower under callgrind, so the whole run takes a few minutes.

``ceiling_over_*`` is the ceiling's instructions per create divided by the target's: the share
of the ceiling's creates/s the target would reach if both were CPU-bound on the same core.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from bench import http_load
from bench.command_line import run_benchmark
from bench.results_table import render_table
from bench.server_process import ServerProcess, free_port, python_module_argv, setpoint_argv

log = logging.getLogger("bench.apiserver_instructions")

#: Under callgrind a server starts and answers about 50 times slower.
READY_TIMEOUT_SECONDS: Final = 900.0
WARM_UP_CREATES: Final = 200
CONCURRENCY: Final = 16
TARGETS: Final = ("ceiling", "memory", "memory-no-controllers", "sqlite")
NAMESPACE: Final = "bench-instructions"


def _argv(name: str, port: int, workdir: Path) -> list[str]:
    if name == "ceiling":
        return python_module_argv("bench.ceiling_server", "--port", str(port))
    data_dir = workdir / "sqlite-data" if name == "sqlite" else None
    flags = ["--no-controllers"] if name == "memory-no-controllers" else []
    return setpoint_argv(port, workdir / f"{name}.kubeconfig", data_dir, *flags)


def _callgrind_control(pid: int, *options: str) -> None:
    subprocess.run(["callgrind_control", *options, str(pid)], check=True, capture_output=True)


def _total_instructions(prefix: Path) -> int:
    """The sum of the ``totals:`` lines of the dumps callgrind wrote under ``prefix``."""
    total = 0
    for path in prefix.parent.glob(prefix.name + "*"):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
                break
    return total


async def measure_target(
    name: str, creates: int, workdir: Path, source: Path | None = None
) -> dict[str, Any]:
    """Instructions per create of one target (see the module docstring); ``source``: run the
    ``setpoint`` package of that directory instead (an export of another commit)."""
    port = free_port()
    out = workdir / f"{name}.callgrind"
    argv = [
        "env",
        "PYTHONHASHSEED=0",  # the same dict and set layouts in every run
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        *_argv(name, port, workdir),
    ]
    kubeconfig = None if name == "ceiling" else workdir / f"{name}.kubeconfig"
    server = ServerProcess(
        name,
        argv,
        port,
        workdir / f"{name}.log",
        ready_timeout=READY_TIMEOUT_SECONDS,
        source=source,
    )
    await server.start(kubeconfig)
    try:
        async with http_load.session(CONCURRENCY, server.headers) as http:
            if name != "ceiling":
                await http_load.ensure_namespace(http, server.url, NAMESPACE)
            await http_load.create_config_maps(
                http, server.url, NAMESPACE, WARM_UP_CREATES, CONCURRENCY, prefix="warm"
            )
            _callgrind_control(server.pid, "-i", "on")
            run = await http_load.create_config_maps(
                http, server.url, NAMESPACE, creates, CONCURRENCY, prefix="counted"
            )
            _callgrind_control(server.pid, "-i", "off")
            _callgrind_control(server.pid, "-d")
    finally:
        server.stop()
    instructions = _total_instructions(out)
    per_create = instructions / run.created if run.created else None
    log.info("%s: %s instructions per create", name, f"{per_create:,.0f}" if per_create else "-")
    return {"creates": run.created, "instructions": instructions, "per_create": per_create}


async def run(creates: int) -> dict[str, Any]:
    """Every target, one after the other."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: this measurement needs valgrind --tool=callgrind")
    figures: dict[str, Any] = {"creates": creates}
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as tmp:
        for name in TARGETS:
            try:
                figures[name] = await measure_target(name, creates, Path(tmp))
            except Exception as exc:  # one target failing must not hide the others
                log.exception("%s failed", name)
                figures[name] = {"error": str(exc)}
    ceiling = figures["ceiling"].get("per_create")
    for name in TARGETS[1:]:
        mine = figures[name].get("per_create")
        figures[f"ceiling_over_{name.replace('-', '_')}"] = (
            round(ceiling / mine, 3) if ceiling and mine else None
        )
    return figures


def render(figures: dict[str, Any]) -> str:
    """The human-readable table."""
    rows = [
        [
            name,
            figures[name].get("per_create"),
            figures.get(f"ceiling_over_{name.replace('-', '_')}"),
        ]
        for name in TARGETS
    ]
    return render_table(["target", "instructions per create", "ceiling / target"], rows)


def failures(figures: dict[str, Any]) -> list[str]:
    """The targets that could not be measured."""
    return [f"{name}: {figures[name]['error']}" for name in TARGETS if "error" in figures[name]]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    run_benchmark(
        "python -m bench.apiserver_instructions",
        __doc__,
        run,
        (1_000, 100),
        render,
        failures,
        argv,
    )


if __name__ == "__main__":
    main()
