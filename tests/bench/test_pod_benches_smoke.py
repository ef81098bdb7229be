"""Smoke test of ``bench.pod_start``, ``pod_logs``, ``node_failure`` and ``port_forward``:
``--quick`` runs print the JSON.

Nothing about speed is asserted, only that the scripts run against the current code and keep
their output keys (``bench.pod_start`` reports an error where pods cannot be isolated).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from setpoint.cluster.controllers.kubelet.sandbox import detect_isolation

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 170


def _run(module: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", module, "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    figures: dict[str, object] = json.loads(done.stdout)
    return figures


def test_pod_start_bench_prints_its_figures() -> None:
    if not detect_isolation().available:
        pytest.skip("no pod isolation on this machine")
    figures = _run("bench.pod_start")
    assert set(figures) == {"spawn", "pod", "added_p50_ms"}


def test_pod_logs_bench_prints_its_figures() -> None:
    figures = _run("bench.pod_logs")
    assert set(figures) == {
        "log_mib",
        "tail",
        "peer_tail_n_1",
        "tail_vs_peer_p50",
        "healthz_during_4_tails",
        "rss_growth_mib",
    }


def test_node_failure_bench_prints_its_figures() -> None:
    figures = _run("bench.node_failure")
    assert set(figures) == {
        "default_tolerations",
        "toleration_10s",
        "step_seconds",
        "real_pause_seconds",
    }
    one = figures["toleration_10s"]
    assert isinstance(one, dict) and one["evicted_at"] is not None


def test_port_forward_bench_prints_its_figures() -> None:
    figures = _run("bench.port_forward")
    assert {"port_forward_mib_per_s", "direct_mib_per_s", "load_average"} <= set(figures)
