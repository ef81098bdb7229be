"""Smoke test of ``bench.cluster``: it runs in ``--quick`` mode and prints the promised JSON.

It asserts nothing about speed, only that the script still runs against the current code and
keeps its output contract (one JSON object on stdout with the documented keys).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 170

KEYS = {
    "cold_start_s_controllers",
    "cold_start_s_no_controllers",
    "idle_rss_mib_controllers",
    "idle_rss_mib_no_controllers",
    "idle_cpu_percent_controllers",
    "deployment_pods_to_running_per_s",
    "deployment_server_cpu_us_per_pod",
    "bare_server_cpu_us_per_pod_one_node",
    "bare_pods_to_running_per_s_one_node",
    "bare_pods_to_running_per_s_many_nodes",
    "rest_rss_mib_one_node",
    "rest_cpu_percent_many_nodes",
}


def test_cluster_bench_prints_the_promised_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.cluster", "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    figures = json.loads(done.stdout)
    assert figures.keys() >= KEYS
    for key in KEYS:
        value = figures[key]
        assert isinstance(value, int | float) and value >= 0, (key, value)
    assert figures["deployment_pods_to_running_per_s"] > 0
