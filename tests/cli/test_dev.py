"""`setpoint dev`: cluster, CRDs, samples, the operator, and a reload on a source change."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

SAMPLE = Path(__file__).parents[1] / "generate" / "sample_project" / "foo_operator.py"


def _read_until(process: subprocess.Popen[str], pattern: str, seen: list[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if re.search(pattern, line):
            return line
    raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(seen)}")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_dev_starts_everything_and_reloads_on_change(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    target = project / "foo_operator.py"
    shutil.copy(SAMPLE, target)
    process = subprocess.Popen(
        [sys.executable, "-m", "setpoint", "dev", str(target), "--samples", "--once"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    seen: list[str] = []
    try:
        export = _read_until(process, r"export KUBECONFIG=", seen)
        kubeconfig = export.rsplit("KUBECONFIG=", 1)[1].strip()
        _read_until(process, r"CRDs installed", seen)
        _read_until(process, r"samples applied", seen)
        _read_until(process, r"operator running", seen)
        metrics = _read_until(process, r"serving metrics on http://\S+/metrics", seen)
        # The reconcile trace is on under dev.
        url = re.search(r"(http://\S+)/metrics", metrics)
        assert url is not None
        with urllib.request.urlopen(f"{url.group(1)}/debug/setpoint/trace") as answer:
            assert json.load(answer)["capacity"] == 10_000
        deadline = time.monotonic() + 60
        status = ""
        while time.monotonic() < deadline and status != "1":
            status = subprocess.run(
                ["kubectl", "--kubeconfig", kubeconfig, "get", "foo", "foo-sample", "-n",
                 "default", "-o", "jsonpath={.status.availableReplicas}"],
                capture_output=True, text=True, timeout=30,
            ).stdout  # fmt: skip
            time.sleep(0.2)
        assert status == "1", "".join(seen)
        target.write_text(target.read_text() + "\n# edited\n")
        _read_until(process, r"changed: foo_operator\.py; reloading", seen)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_sigterm_stops_the_cluster_and_the_operator_it_started(tmp_path: Path) -> None:
    target = tmp_path / "foo_operator.py"
    shutil.copy(SAMPLE, target)
    process = subprocess.Popen(
        [sys.executable, "-m", "setpoint", "dev", str(target)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    seen: list[str] = []
    try:
        export = _read_until(process, r"export KUBECONFIG=", seen)
        kubeconfig = export.rsplit("KUBECONFIG=", 1)[1].strip()
        console = _read_until(process, r"console: http://127\.0\.0\.1:\d+/\?token=", seen)
        console_url = console.split("console: ", 1)[1].strip()
        running = _read_until(process, r"operator running \(pid \d+\)", seen)
        operator_pid = int(re.findall(r"pid (\d+)", running)[0])
        import urllib.request

        with urllib.request.urlopen(console_url, timeout=30) as page:  # the console is up
            assert page.status == 200
        process.terminate()
        assert process.wait(60) == 0, "".join(seen)
        with pytest.raises(ProcessLookupError):  # stopped and reaped, not left running
            os.kill(operator_pid, 0)
        with pytest.raises(OSError):  # the console too
            urllib.request.urlopen(console_url, timeout=5)
        answer = subprocess.run(
            ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(tmp_path / "cache"),
             "get", "namespaces", "--request-timeout", "5s"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert answer.returncode != 0  # the cluster is gone
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
