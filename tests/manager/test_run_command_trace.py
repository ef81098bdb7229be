"""`setpoint run` keeps no reconcile trace unless `--trace` is given.

Off by default: `/debug/setpoint/trace` answers 404 while the controllers view works; with
`--trace=N` the trace is served with that capacity; `--trace` with `--no-trace` is a usage
error. (`setpoint dev` and `setpoint demo` pass `--trace`; see tests/cli/test_dev.py.)
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

import aiohttp

OPERATOR = """
import setpoint.manager

op = setpoint.manager.Operator("quiet-op")


@op.reconciler(for_=("v1", "ConfigMap"))
async def reconcile(ctx, request):
    return None
"""

RUN = "import sys; from setpoint.cli.run import run_command; run_command(sys.argv[1:])"


class Cluster(Protocol):
    kubeconfig_path: str


async def metrics_url(process: asyncio.subprocess.Process) -> str:
    """The metrics endpoint's URL, from the operator's log."""
    assert process.stderr is not None
    seen: list[str] = []
    async with asyncio.timeout(60):
        while line := await process.stderr.readline():
            seen.append(line.decode())
            try:
                entry: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            message = str(entry.get("msg", ""))
            if message.startswith("serving metrics on "):
                return message.removeprefix("serving metrics on ").split("/metrics")[0]
    raise AssertionError(f"no metrics endpoint logged: {''.join(seen)}")


async def served(tmp_path: Path, cluster: Cluster, namespace: str, *flags: str) -> dict[str, Any]:
    """Start `setpoint run` with ``flags``; what its debug endpoints answer."""
    target = tmp_path / "quiet_operator.py"
    target.write_text(OPERATOR)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", RUN, str(target),
        "--kubeconfig", cluster.kubeconfig_path, "-n", namespace,
        "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "0",
        "--log-format", "json", *flags,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        base = await metrics_url(process) + "/debug/setpoint"
        answers: dict[str, Any] = {}
        async with aiohttp.ClientSession() as session:
            for name in ("trace", "controllers"):
                async with session.get(f"{base}/{name}") as response:
                    answers[name] = (response.status, await response.json(content_type=None))
        return answers
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            await process.communicate()


async def test_off_by_default_then_on_with_the_flag(
    tmp_path: Path, local_cluster: Cluster, namespace: str
) -> None:
    default = await served(tmp_path, local_cluster, namespace)
    status, body = default["trace"]
    assert status == 404
    assert "reconcile tracing is off" in body["message"]
    status, view = default["controllers"]
    assert status == 200 and view["trace"]["enabled"] is False
    assert [c["name"] for c in view["controllers"]] == ["configmap"]

    traced = await served(tmp_path, local_cluster, namespace, "--trace=50")
    status, body = traced["trace"]
    assert status == 200 and body["capacity"] == 50
    assert traced["controllers"][1]["trace"]["enabled"] is True


def test_trace_and_no_trace_together_are_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "quiet_operator.py"
    target.write_text(OPERATOR)
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(target), "--trace", "--no-trace"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--trace and --no-trace: give one of them" in done.stderr
    before_target = subprocess.run(
        [sys.executable, "-c", RUN, "--trace", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert before_target.returncode == 2
    assert "put a bare --trace after TARGET" in before_target.stderr
