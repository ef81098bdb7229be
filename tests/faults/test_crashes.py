"""kill -9 of the API server (durable storage) or of the operator, in the middle of the work:
the operator resumes and converges, no child is created twice (uids unchanged) or missing."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.faults.support import (
    child_uids,
    connected,
    kill9,
    parent,
    start_run,
    start_server,
    stop_process,
    wait_converged,
    write_operator,
)

pytestmark = pytest.mark.slow


async def test_api_server_kill_9_and_restart_mid_run(tmp_path: Path) -> None:
    data_dir = tmp_path / "cluster"
    server = await start_server(data_dir)
    kubeconfig = data_dir / "kubeconfig"
    operator = await start_run(
        write_operator(tmp_path), kubeconfig, "-n", "default",
        log_file=tmp_path / "operator.log",
    )  # fmt: skip
    expected = {f"w{index}": "1" for index in range(20)}
    try:
        async with connected(kubeconfig) as client:
            for name, size in expected.items():
                await client.create(parent(name, size), namespace="default")
            await wait_converged(client, "default", expected)
            before = await child_uids(client, "default")
        await stop_process(server, signal.SIGKILL)
        await asyncio.sleep(2)
        server = await start_server(data_dir)
        loop = asyncio.get_running_loop()
        restarted = loop.time()
        async with connected(kubeconfig) as client:
            for index in range(20, 30):
                expected[f"w{index}"] = "1"
                await client.create(parent(f"w{index}", "1"), namespace="default")
            for index in range(5):
                expected[f"w{index}"] = "2"
                current = await client.get("v1", "ConfigMap", f"w{index}", namespace="default")
                current["data"]["size"] = "2"
                await client.update(current)
            await wait_converged(client, "default", expected)
            recovered = loop.time() - restarted
            after = await child_uids(client, "default")
        assert operator.returncode is None
    finally:
        await stop_process(operator)
        await stop_process(server)
    assert {name: after[name] for name in before} == before  # none deleted and made again
    assert len(after) == 30
    print(f"FIGURES server kill -9: converged {recovered:.1f}s after the restart (30 widgets)")


async def test_operator_kill_9_mid_reconcile_then_restarted(tmp_path: Path) -> None:
    data_dir = tmp_path / "cluster"
    server = await start_server(data_dir)
    kubeconfig = data_dir / "kubeconfig"
    target = write_operator(tmp_path)
    expected = {f"w{index}": "1" for index in range(40)}
    slow = {"WIDGET_DELAY": "0.3"}
    operator = None
    try:
        async with connected(kubeconfig) as client:
            for name, size in expected.items():
                await client.create(parent(name, size), namespace="default")
            operator = await start_run(
                target, kubeconfig, "-n", "default", log_file=tmp_path / "op1.log", env=slow
            )
            async with asyncio.timeout(120):
                while len(await child_uids(client, "default")) < 5:  # noqa: ASYNC110 - polls the server
                    await asyncio.sleep(0.1)
            kill9(operator)
            await operator.wait()
            before = await child_uids(client, "default")
            assert len(before) < len(expected)  # killed in the middle of the work
            loop = asyncio.get_running_loop()
            restarted = loop.time()
            operator = await start_run(
                target, kubeconfig, "-n", "default", log_file=tmp_path / "op2.log"
            )
            await wait_converged(client, "default", expected)
            recovered = loop.time() - restarted
            after = await child_uids(client, "default")
    finally:
        if operator is not None:
            await stop_process(operator)
        await stop_process(server)
    assert {name: after[name] for name in before} == before
    assert len(after) == len(expected)
    print(
        f"FIGURES operator kill -9 with {len(before)}/{len(expected)} children made: "
        f"converged {recovered:.1f}s after the restart"
    )
