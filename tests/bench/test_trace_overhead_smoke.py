"""Smoke test of ``bench.trace_overhead``: a ``--quick`` run prints its JSON (not its speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_a_quick_run_prints_both_arms_and_their_ratio() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.trace_overhead", "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["objects"] == 20 and figures["rounds"] == 1
    assert len(figures["cpu_seconds_off"]) == len(figures["cpu_seconds_on"]) == 1
    assert figures["trace_records_on"][0] > 20 * 10  # watch, enqueue, reconcile, writes...
    assert figures["cpu_on_over_off"] > 0
