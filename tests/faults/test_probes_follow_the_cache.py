"""/readyz, then /healthz, fail while the operator's informers cannot list or watch (the API
server is gone), with the reason in the check's body and in the log; both recover once the
server is back."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.faults.support import (
    connected,
    json_lines,
    parent,
    probe_url,
    start_run,
    start_server,
    stop_process,
    wait_converged,
    wait_status,
    write_operator,
)

pytestmark = pytest.mark.slow


async def test_probes_fail_while_the_server_is_gone_and_recover(tmp_path: Path) -> None:
    data_dir = tmp_path / "cluster"
    server = await start_server(data_dir)
    kubeconfig = data_dir / "kubeconfig"
    log_file = tmp_path / "operator.log"
    operator = await start_run(
        write_operator(tmp_path), kubeconfig, "-n", "default",
        "--cache-unready-after", "3", "--cache-unhealthy-after", "8",
        log_file=log_file,
    )  # fmt: skip
    try:
        probes = await probe_url(log_file)
        async with connected(kubeconfig) as client:
            await client.create(parent("w1", "1"), namespace="default")
            await wait_converged(client, "default", {"w1": "1"})
        await wait_status(f"{probes}/readyz", 200)
        await stop_process(server, signal.SIGKILL)

        unready_after, _ = await wait_status(f"{probes}/readyz", 500)
        code, body = await _get(f"{probes}/readyz/informers")
        assert code == 500
        assert "configmaps/v1 (ConfigMap)" in body and "cannot list/watch for " in body
        assert "last error: " in body
        assert (await _get(f"{probes}/healthz"))[0] == 200  # liveness waits longer
        unhealthy_after, _ = await wait_status(f"{probes}/healthz", 500)

        server = await start_server(data_dir)
        ready_again, _ = await wait_status(f"{probes}/readyz", 200)
        await wait_status(f"{probes}/healthz", 200)
        async with connected(kubeconfig) as client:
            await client.create(parent("w2", "2"), namespace="default")
            await wait_converged(client, "default", {"w1": "1", "w2": "2"})
        assert operator.returncode is None
    finally:
        await stop_process(operator)
        await stop_process(server)
    messages = [str(e.get("msg", "")) for e in json_lines(log_file.read_text())]
    assert any(m.startswith("/readyz fails: configmaps/v1 (ConfigMap)") for m in messages)
    assert any(m.startswith("/healthz fails: ") for m in messages)
    assert any(m.startswith("/readyz informers check passes again") for m in messages)
    print(
        f"FIGURES readyz failed {unready_after:.1f}s after kill, healthz {unhealthy_after:.1f}s "
        f"later; ready again {ready_again:.1f}s after restart"
    )


async def _get(url: str) -> tuple[int, str]:
    from tests.faults.support import http_get

    return await http_get(url)
