"""`setpoint cluster serve` refuses a data directory another server holds, with a clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _serve(data_dir: Path, kubeconfig: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "setpoint",
            "cluster",
            "serve",
            "--data-dir",
            str(data_dir),
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_server_on_the_same_data_dir_fails_with_one_clear_line(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first_kubeconfig = tmp_path / "first.kubeconfig"
    first = _serve(data_dir, first_kubeconfig)
    try:
        deadline = time.monotonic() + 30
        while not first_kubeconfig.exists():
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "the first server never became ready"
            time.sleep(0.05)

        second = _serve(data_dir, tmp_path / "second.kubeconfig")
        _, stderr = second.communicate(timeout=30)

        assert second.returncode == 1
        assert "Traceback" not in stderr
        assert str(data_dir) in stderr
        assert not (tmp_path / "second.kubeconfig").exists()
        assert first.poll() is None, "the first server must keep serving"
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    assert first.returncode == 0
    assert os.path.isdir(data_dir)
