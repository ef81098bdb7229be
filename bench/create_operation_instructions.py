"""Instructions per create of the object operation alone, counted by callgrind, in one process.

    python -m bench.create_operation_instructions [--count N] [--baseline DIR] [--json]

``bench.apiserver_instructions`` counts a whole server (HTTP, controllers, the event loop) under
load; between two runs of the same code its count moves by a few thousand instructions per
create (how requests batch, when the collector runs). This counts only
``ObjectOperations.create`` of the ConfigMaps of ``bench.apiserver`` (in memory, no HTTP, no
controllers), with the cyclic collector off while counting, so two runs of the same code agree
within about 0.1 %: small steps in the registry, validation and managedFields can be measured.

A child process runs under ``valgrind --tool=callgrind --instr-atstart=no``: it starts the API
server's object layer on in-memory storage, creates a namespace and 200 ConfigMaps of warm-up,
switches counting on (``callgrind_control -i on``), creates ``--count`` ConfigMaps, and switches
it off. ``--baseline DIR`` counts an export of older code too (``git archive COMMIT setpoint |
tar -x -C DIR``, imported from there).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import msgspec

from bench.apiserver_instructions import _total_instructions
from bench.config_maps import config_map_body

WARM_UP_CREATES: Final = 200
NAMESPACE: Final = "bench-operation"
_ROOT: Final = Path(__file__).resolve().parent.parent


async def _child(count: int) -> None:
    """Under callgrind: warm up, then count ``count`` creates (see the module docstring)."""
    import setpoint
    from setpoint.cluster.apiserver.kinds.namespaces import new_namespace
    from setpoint.cluster.apiserver.registry.object_operations import WriteOptions
    from setpoint.cluster.apiserver.server import APIServer
    from setpoint.cluster.apiserver.storage.memory import MemoryStorage

    print(setpoint.__file__, file=sys.stderr, flush=True)  # which code was counted
    server = APIServer(MemoryStorage(), https_port=None)
    await server.start()
    try:
        namespaces = server.registry.get("", "v1", "namespaces")
        config_maps = server.registry.get("", "v1", "configmaps")
        assert namespaces is not None and config_maps is not None
        operations = server.operations
        await operations.create(namespaces, None, new_namespace(NAMESPACE), WriteOptions())

        def bodies(prefix: str, number: int) -> list[Any]:
            return [
                msgspec.json.decode(config_map_body(f"{prefix}-{i:06d}", NAMESPACE, i))
                for i in range(number)
            ]

        for body in bodies("warm", WARM_UP_CREATES):
            await operations.create(config_maps, NAMESPACE, body, WriteOptions())
        counted = bodies("counted", count)
        gc.collect()
        gc.disable()  # the collector's passes are the main source of run-to-run noise
        _callgrind_control("-i", "on")
        for body in counted:
            await operations.create(config_maps, NAMESPACE, body, WriteOptions(user_agent="b/1"))
        _callgrind_control("-i", "off")
        gc.enable()
    finally:
        await server.stop()


def _callgrind_control(*options: str) -> None:
    subprocess.run(
        ["callgrind_control", *options, str(os.getpid())], check=True, capture_output=True
    )


def measure(count: int, workdir: Path, source: Path | None = None) -> dict[str, Any]:
    """Instructions per create of the code in ``source`` (None: this checkout)."""
    out = workdir / ("baseline" if source else "current") / "operation.callgrind"
    out.parent.mkdir(parents=True)
    paths = [str(source), str(_ROOT)] if source is not None else [str(_ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONHASHSEED": "0"}
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        "-m",
        "bench.create_operation_instructions",
        "--child",
        str(count),
    ]
    run = subprocess.run(argv, env=env, cwd=source or _ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1:] or ["exit " + str(run.returncode)]}
    imported = [line for line in run.stderr.splitlines() if line.endswith("__init__.py")]
    instructions = _total_instructions(out)
    return {
        "setpoint": imported[-1] if imported else None,
        "creates": count,
        "instructions": instructions,
        "per_create": round(instructions / count),
    }


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.create_operation_instructions", description=__doc__
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--baseline", type=Path, help="an export of older code to count too")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child is not None:
        asyncio.run(_child(options.child))
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: this measurement needs valgrind --tool=callgrind")
    baseline = options.baseline.resolve() if options.baseline is not None else None
    if baseline is not None and not (baseline / "setpoint" / "__init__.py").is_file():
        parser.error(f"--baseline: {baseline} holds no setpoint package")
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-operation-") as tmp:
        figures["current"] = measure(options.count, Path(tmp))
        if baseline is not None:
            figures["baseline"] = measure(options.count, Path(tmp), baseline)
    if options.json:
        print(json.dumps(figures))
        return
    for name, row in figures.items():
        print(f"{name}: {row.get('per_create', row.get('error'))} instructions per create")


if __name__ == "__main__":
    main()
