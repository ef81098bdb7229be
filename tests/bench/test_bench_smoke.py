"""Smoke test of the benchmarks: each runs in ``--quick`` mode and prints the promised JSON.

This checks that the scripts still run against the current code and keep their output
contract (one JSON object on stdout with the documented keys); it asserts nothing about speed.
Both benchmarks run at once (each is mostly waiting on its own server processes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: Generous: a quick run takes ~15-25 s on 2 busy cores; this only stops a hang.
RUN_TIMEOUT_SECONDS = 110

SERVER_KEYS = {
    "creates_per_s_1",
    "creates_per_s_16",
    "list_10k_ms",
    "watch_fanout_events_per_s",
    "rss_100k_mib",
    "rss_per_json_byte",
}
RUNTIME_KEYS = {
    "queue_ops_per_s_1",
    "queue_ops_per_s_8",
    "cache_rss_per_json_byte_10k",
    "cache_rss_per_json_byte_100k",
    "dict_rss_per_json_byte_10k",
    "latency_p50_ms",
    "latency_p99_ms",
    "max_loop_block_ms",
    "startup_to_first_request_s",
    "startup_cpu_s",
    "floor_to_first_request_s",
    "floor_cpu_s",
    "startup_over_floor",
}


@pytest.fixture(scope="module")
def outputs() -> dict[str, dict[str, Any]]:
    """Run both benchmarks in --quick --json mode at once; their parsed stdout by module."""
    modules = ("bench.apiserver", "bench.runtime")
    processes = {
        module: subprocess.Popen(
            [sys.executable, "-m", module, "--quick", "--json"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for module in modules
    }
    results: dict[str, dict[str, Any]] = {}
    for module, process in processes.items():
        try:
            out, err = process.communicate(timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            for other in processes.values():
                other.kill()
            raise
        assert process.returncode == 0, f"{module} failed:\n{err.decode()[-3000:]}"
        # The whole of stdout must be one JSON object: other tools parse it as is.
        results[module] = json.loads(out)
    return results


def assert_number(value: object, where: str) -> None:
    assert isinstance(value, int | float) and not isinstance(value, bool), f"{where}: {value!r}"
    assert value >= 0, f"{where}: {value!r}"


def test_apiserver_prints_every_target_with_the_promised_figures(
    outputs: dict[str, dict[str, Any]],
) -> None:
    figures = outputs["bench.apiserver"]
    for target in ("memory", "sqlite", "kmock"):
        assert figures[target].keys() >= SERVER_KEYS, target
        for key in ("creates_per_s_1", "creates_per_s_16", "watch_fanout_events_per_s"):
            assert_number(figures[target][key], f"{target}.{key}")
    for target in ("memory", "sqlite"):
        # setpoint's servers must get through every phase even in the quick run.
        for key in SERVER_KEYS:
            assert_number(figures[target][key], f"{target}.{key}")
    assert "kmock_filled" in figures["kmock"]
    assert_number(figures["ceiling"]["creates_per_s_16"], "ceiling.creates_per_s_16")
    assert {"memory_over_ceiling", "memory_over_kmock", "sqlite_over_ceiling"} <= set(
        figures["ratios"]
    )
    assert figures["run"]["quick"] is True


def test_runtime_prints_the_promised_figures(outputs: dict[str, dict[str, Any]]) -> None:
    figures = outputs["bench.runtime"]
    for key in RUNTIME_KEYS:
        assert_number(figures[key], key)
    # Every patch the writer made was seen by at least one reconcile in the quick run too.
    assert figures["latency_samples"] > 0
    assert figures["pods_synced"] == figures["run"]["sizes"]["pods"]
