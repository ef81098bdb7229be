"""Smoke test of ``bench.webhooks``: a ``--quick`` run prints its figures as JSON.

Nothing about speed is asserted, only that the benchmark runs against the current code and
keeps its output keys.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_webhooks_bench_prints_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.webhooks", "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=170,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    figures = json.loads(done.stdout)
    for name in (
        "review_path_setpoint_validate_us",
        "review_path_setpoint_mutate_us",
        "review_path_echo_us",
        "review_path_mutate_ratio_to_echo",
        "reviews_per_second_setpoint",
        "reviews_per_second_echo",
        "reviews_per_second_ratio_to_echo",
        "create_setpoint_added_p50_ms",
        "create_echo_added_p50_ms",
    ):
        assert isinstance(figures[name], int | float), name
