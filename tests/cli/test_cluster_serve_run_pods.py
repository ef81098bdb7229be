"""``setpoint cluster serve --run-pods[=isolated|unsafe]`` and the container log options."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint.cli.cluster import serve
from setpoint.cluster.controllers.kubelet.sandbox import detect_isolation


def test_bad_values_are_one_line_errors_naming_the_option() -> None:
    runner = CliRunner()

    size = runner.invoke(serve, ["--run-pods", "--container-log-max-size", "ten"])
    mode = runner.invoke(serve, ["--run-pods=everyone"])
    files = runner.invoke(serve, ["--container-log-max-files", "1"])

    assert size.exit_code == 2
    assert "--container-log-max-size" in size.output and "'ten' is not a size" in size.output
    assert mode.exit_code == 2
    assert "--run-pods" in mode.output and "'everyone' is not one of" in mode.output
    assert files.exit_code == 2 and "--container-log-max-files" in files.output


def _first_lines(tmp_path: Path, *flags: str) -> str:
    kubeconfig = tmp_path / "kubeconfig"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "setpoint",
            "cluster",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            *flags,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "the server never became ready"
            time.sleep(0.05)
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=30)
    return stderr


@pytest.mark.slow  # two server processes
def test_serve_says_how_pods_run(tmp_path: Path) -> None:
    isolated = _first_lines(tmp_path / "a", "--run-pods")
    unsafe = _first_lines(tmp_path / "b", "--run-pods=unsafe")

    if detect_isolation().available:
        assert "setpoint: --run-pods: each pod runs in a sandbox (bubblewrap) as" in isolated
    else:
        assert "pods cannot be isolated on this machine" in isolated
    assert "--run-pods=unsafe: pods run as this server's user, unconfined" in unsafe
