"""`setpoint run`: expected failures are one line with a hint (exit 1, usage errors exit 2),
and outside a pod metrics and probes listen on loopback at a free port, logged."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from setpoint.cli.run import run_operators
from setpoint.client.errors import ConnectionFailed
from setpoint.testing import BackgroundCluster

OPERATOR = """
import setpoint

op = setpoint.Operator("ports-op")

@op.reconciler(for_=("v1", "ConfigMap"))
async def reconcile(ctx, request):
    return None
"""

DEAD_SERVER_KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: abc}
contexts:
- name: dead
  context: {cluster: dead, user: u}
current-context: dead
"""


async def run(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint.cli.main", "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip


async def test_a_dead_api_server_is_one_line_with_a_hint(tmp_path: Path) -> None:
    target = tmp_path / "ports_operator.py"
    target.write_text(OPERATOR)
    kubeconfig = tmp_path / "dead.yaml"
    kubeconfig.write_text(DEAD_SERVER_KUBECONFIG)
    process = await run(str(target), "--kubeconfig", str(kubeconfig), "--cache-sync-timeout", "1")
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    text = stderr.decode()
    assert process.returncode == 1
    *waiting, last = text.strip().splitlines()
    # One line per attempt while it waits for the server (see tests/faults), then one line.
    assert all("waiting for the API server at https://127.0.0.1:1 " in line for line in waiting)
    assert "cannot reach the API server at https://127.0.0.1:1 (connection refused) after " in last
    assert last.endswith("is the cluster running? check --kubeconfig/--context")
    assert "Traceback" not in text


async def test_waiting_names_the_likely_cause_after_a_few_attempts(tmp_path: Path) -> None:
    target = tmp_path / "ports_operator.py"
    target.write_text(OPERATOR)
    kubeconfig = tmp_path / "dead.yaml"
    kubeconfig.write_text(DEAD_SERVER_KUBECONFIG)
    # Attempts at about 0, 0.6, 1.8, 4.3 s: the third and later say what is probably wrong.
    process = await run(str(target), "--kubeconfig", str(kubeconfig), "--cache-sync-timeout", "5")
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    *waiting, _ = stderr.decode().strip().splitlines()
    assert len(waiting) >= 3, waiting
    assert not any("is the cluster running?" in line for line in waiting[:2])
    hinted = [line for line in waiting[2:] if "attempt" in line]
    assert hinted and all(
        "is the cluster running? (`setpoint cluster serve` starts a local one;" in line
        for line in hinted
    ), waiting


class Unreachable:
    """A manager whose connection fails at once (the one-line/--debug rule, in process)."""

    started = False

    async def connect(self) -> None:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except OSError as error:
            raise ConnectionFailed(
                "connect failed", method="GET", url="https://10.0.0.1:6443/version"
            ) from error

    async def close_client(self) -> None:
        pass


async def test_debug_adds_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    managers: Any = [Unreachable()]
    assert await run_operators(managers) == 1
    assert await run_operators(managers, debug=True) == 1
    quiet, loud = (r for r in caplog.records if r.name == "setpoint.run")
    assert (
        quiet.getMessage()
        == loud.getMessage()
        == (
            "cannot reach the API server at https://10.0.0.1:6443 (connection refused): "
            "is the cluster running? check --kubeconfig/--context"
        )
    )
    assert quiet.exc_info is None and loud.exc_info is not None


async def test_a_missing_kubeconfig_file_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "ports_operator.py"
    target.write_text(OPERATOR)
    process = await run(str(target), "--kubeconfig", str(tmp_path / "nope.yaml"))
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "does not exist" in stderr.decode() and "Traceback" not in stderr.decode()


async def serving(process: asyncio.subprocess.Process) -> dict[str, str]:
    """The URLs of the `serving ...` log lines (metrics and probes)."""
    assert process.stderr is not None
    urls: dict[str, str] = {}
    async with asyncio.timeout(30):
        while len(urls) < 2:
            line = await process.stderr.readline()
            assert line, f"the operator exited: {urls}"
            entry: dict[str, Any] = json.loads(line)
            message = str(entry.get("msg", ""))
            if message.startswith("serving "):
                urls[message.split()[1]] = message.split(" on ")[1]
    return urls


async def test_two_operators_on_one_machine_get_loopback_ports_of_their_own(
    tmp_path: Path, local_cluster: BackgroundCluster, namespace: str
) -> None:
    target = tmp_path / "ports_operator.py"
    target.write_text(OPERATOR)
    args = (str(target), "--kubeconfig", str(local_cluster.kubeconfig_path), "-n", namespace)
    first = await run(*args, "--log-format", "json")
    second = await run(*args, "--log-format", "json")
    try:
        one, two = await serving(first), await serving(second)
    finally:
        for process in (first, second):
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.communicate(), 30)
    assert first.returncode == second.returncode == 0
    for urls in (one, two):
        assert urls["metrics"].startswith("http://127.0.0.1:")
        assert urls["health"].startswith("http://127.0.0.1:")
        assert not urls["metrics"].startswith("http://127.0.0.1:8080")
    assert one["metrics"] != two["metrics"]


def test_setpoint_run_imports_neither_the_local_cluster_nor_the_server_side_of_aiohttp() -> None:
    """`setpoint run` reaches its first request sooner when it imports only what it uses."""
    import subprocess

    code = (
        "import sys\n"
        "from setpoint.cli.main import cli\n"
        "cli.get_command(None, 'run')\n"
        "import setpoint, setpoint.manager\n"
        "print(sorted(m for m in sys.modules if m.startswith(('setpoint.cluster', 'aiohttp.web'))"
        " or m == 'setpoint.cli.cluster'))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert completed.stdout.strip() == "[]"
