"""Cold start and idle memory of ``setpoint cluster serve``, beside the floor of any aiohttp
program, in the same run.

    python -m bench.cold_start [--runs N] [--baseline SRC]

Interleaved, ``--runs`` times each (median reported):

- ``import_aiohttp_s``: wall seconds of ``python -c "import aiohttp"`` (the peer: what any
  program built on aiohttp pays before doing anything);
- ``serve_to_readyz_s``: wall seconds from spawning ``python -m setpoint cluster serve
  --in-memory`` (every controller) to its first ``200`` from ``GET /readyz``;
- ``serve_cpu_s`` / ``import_aiohttp_cpu_s``: the CPU seconds (user + system) of the same
  processes, less sensitive to the machine's load than wall time;
- ``serve_cpu_to_kubeconfig_s``: the server's CPU seconds once its kubeconfig is written, the
  end of its start (``/readyz`` answers as soon as the listeners are up, before the controllers
  are imported and started);
- ``idle_rss_mib``: the server's RSS 3 s after that answer;
- with ``--baseline SRC`` (a directory holding another ``setpoint`` package, e.g. an export of
  an earlier commit), the same figures for that source, run alternately with this one. Its
  server runs with ``SRC`` as working directory and first on ``PYTHONPATH``: ``python -m``
  puts the working directory first on ``sys.path``, so from this checkout the baseline would
  run this checkout's package.

Each source is started once, unmeasured, before the runs: it writes the bytecode cache (the
child processes may write it even when ``PYTHONDONTWRITEBYTECODE`` is set here), so every
measured start reads compiled modules, as an installed package does.

The ratios ``serve_over_import`` (wall) and ``serve_cpu_over_import_cpu`` are the figures to
compare across machines and loads.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Final

import psutil

from bench.server_process import free_port

MIB: Final = 1024 * 1024
SETTLE_SECONDS: Final = 3.0
READY_TIMEOUT_SECONDS: Final = 30.0


def _env(source: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if source is not None:
        env["PYTHONPATH"] = f"{source}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def import_aiohttp_seconds() -> tuple[float, float]:
    """Wall and CPU seconds of ``python -c "import aiohttp"``."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import aiohttp"], check=True)
    return time.perf_counter() - started, _children_cpu() - cpu_before


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ConnectionError, OSError):
        return False


def serve_start(
    source: Path | None, workdir: Path, settle: float = SETTLE_SECONDS
) -> tuple[float, float, float, float]:
    """Seconds from spawn to a served ``/readyz``, the server's CPU seconds until then and
    until its kubeconfig is written, and its RSS (MiB) ``settle`` seconds later."""
    port = free_port()
    kubeconfig = workdir / f"kubeconfig-{port}"
    argv = [
        sys.executable,
        "-m",
        "setpoint",
        "cluster",
        "serve",
        "--in-memory",
        "--port",
        str(port),
        "--kubeconfig",
        str(kubeconfig),
        "--log-level",
        "warning",
    ]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        env=_env(source),
        cwd=source,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not _ready(port):
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}")
            if time.perf_counter() - started > READY_TIMEOUT_SECONDS:
                raise SystemExit("the server did not become ready")
            time.sleep(0.002)
        ready = time.perf_counter() - started
        server = psutil.Process(process.pid)
        times = server.cpu_times()
        cpu = times.user + times.system
        while not kubeconfig.exists():
            if time.perf_counter() - started > READY_TIMEOUT_SECONDS:
                raise SystemExit("the server did not write its kubeconfig")
            time.sleep(0.002)
        times = server.cpu_times()
        cpu_started = times.user + times.system
        time.sleep(settle)
        rss = psutil.Process(process.pid).memory_info().rss / MIB
    finally:
        process.terminate()
        process.wait(timeout=10)
    return ready, cpu, cpu_started, rss


def measure(runs: int, baseline: Path | None) -> dict[str, Any]:
    """The medians of ``runs`` interleaved runs."""
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-cold-") as tmp:
        workdir = Path(tmp)
        sources: list[tuple[str, Path | None]] = [("", None)]
        if baseline is not None:
            sources.append(("baseline_", baseline.resolve()))
        for _, source in sources:
            serve_start(source, workdir, settle=0.0)
        for _ in range(runs):
            wall, cpu = import_aiohttp_seconds()
            samples.setdefault("import_aiohttp_s", []).append(wall)
            samples.setdefault("import_aiohttp_cpu_s", []).append(cpu)
            for prefix, source in sources:
                ready, serve_cpu, started_cpu, rss = serve_start(source, workdir)
                samples.setdefault(f"{prefix}serve_to_readyz_s", []).append(ready)
                samples.setdefault(f"{prefix}serve_cpu_s", []).append(serve_cpu)
                samples.setdefault(f"{prefix}serve_cpu_to_kubeconfig_s", []).append(started_cpu)
                samples.setdefault(f"{prefix}idle_rss_mib", []).append(rss)
    figures: dict[str, Any] = {
        "runs": runs,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    for key, values in samples.items():
        figures[key] = round(statistics.median(values), 3)
    for prefix, _ in [("", None), ("baseline_", baseline)]:
        if f"{prefix}serve_to_readyz_s" in figures:
            figures[f"{prefix}serve_over_import"] = round(
                figures[f"{prefix}serve_to_readyz_s"] / figures["import_aiohttp_s"], 2
            )
            figures[f"{prefix}serve_cpu_over_import_cpu"] = round(
                figures[f"{prefix}serve_cpu_s"] / figures["import_aiohttp_cpu_s"], 2
            )
    return figures


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None)
    options = parser.parse_args(argv)
    print(json.dumps(measure(options.runs, options.baseline), indent=2))


if __name__ == "__main__":
    main()
