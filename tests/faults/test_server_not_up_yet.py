"""`setpoint run` before its API server is up: it waits with backoff, one log line per
attempt, up to --cache-sync-timeout, then either converges or exits 1 with one line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.faults.support import (
    connected,
    json_lines,
    parent,
    start_run,
    start_server,
    stop_process,
    wait_converged,
    write_operator,
)

pytestmark = pytest.mark.slow

DEAD_SERVER_KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "http://127.0.0.1:1"}
users:
- name: u
  user: {token: abc}
contexts:
- name: dead
  context: {cluster: dead, user: u}
current-context: dead
"""


async def test_the_operator_waits_for_a_server_started_later_and_converges(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "cluster"
    # A first run writes the cluster's identity (ports, token, CA) and the kubeconfig.
    await stop_process(await start_server(data_dir))
    kubeconfig = data_dir / "kubeconfig"
    log_file = tmp_path / "operator.log"
    operator = await start_run(
        write_operator(tmp_path), kubeconfig, "-n", "default", log_file=log_file
    )
    server = None
    try:
        async with asyncio.timeout(60):
            while "waiting for the API server" not in log_file.read_text():
                assert operator.returncode is None, log_file.read_text()
                await asyncio.sleep(0.2)
        await asyncio.sleep(3)  # a few more attempts against the dead port
        server = await start_server(data_dir)
        async with connected(kubeconfig) as client:
            await client.create(parent("w1", "3"), namespace="default")
            await wait_converged(client, "default", {"w1": "3"})
        assert operator.returncode is None
    finally:
        code = await stop_process(operator)
        if server is not None:
            await stop_process(server)
    assert code == 0
    entries = json_lines(log_file.read_text())
    waits = [e for e in entries if str(e.get("msg", "")).startswith("waiting for the API server")]
    assert len(waits) >= 2
    assert all("connection refused" in str(e["msg"]) for e in waits)
    assert all(e["level"].lower().startswith("warn") for e in waits)
    assert any(str(e.get("msg", "")).startswith("the API server at ") for e in entries)


async def test_no_server_within_the_timeout_exits_1_with_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "dead.yaml"
    kubeconfig.write_text(DEAD_SERVER_KUBECONFIG)
    operator = await start_run(write_operator(tmp_path), kubeconfig, "--cache-sync-timeout", "3")
    assert operator.stderr is not None
    async with asyncio.timeout(60):
        stderr = await operator.stderr.read()
        await operator.wait()
    assert operator.returncode == 1
    entries = json_lines(stderr.decode())
    assert "Traceback" not in stderr.decode()
    *attempts, last = entries
    assert attempts and all(
        str(e["msg"]).startswith("waiting for the API server at http://127.0.0.1:1 ")
        for e in attempts
    )
    assert last["level"].lower() == "error"
    assert str(last["msg"]).startswith(
        "cannot reach the API server at http://127.0.0.1:1 (connection refused) after waiting "
    )
    assert str(last["msg"]).endswith("is the cluster running? check --kubeconfig/--context")
