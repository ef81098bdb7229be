"""Smoke test of ``bench.cold_start``: one run prints the promised JSON (nothing about speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 120
KEYS = {
    "import_aiohttp_s",
    "import_aiohttp_cpu_s",
    "serve_to_readyz_s",
    "serve_cpu_s",
    "serve_cpu_to_kubeconfig_s",
    "idle_rss_mib",
    "serve_over_import",
    "serve_cpu_over_import_cpu",
}


def test_cold_start_bench_prints_the_promised_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.cold_start", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=True,
    )
    figures = json.loads(done.stdout)
    assert set(figures) >= KEYS
    assert figures["idle_rss_mib"] > 0
