"""``python -m bench.operator_soak`` (``make soak``) in a few seconds: its lines and its verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.operator_soak import Sample, growth

ROOT = Path(__file__).resolve().parents[2]
SHORT_SOAK = [
    sys.executable, "-m", "bench.operator_soak", "--minutes", "0.15", "--objects", "20",
    "--warmup-minutes", "0", "--sample-seconds", "3", "--max-growth", "1000",
    "--converge-timeout", "120",
]  # fmt: skip


def _sample(minutes: float, rss: float, tasks: int) -> Sample:
    return Sample(minutes, 0, 0, rss, 20, 3, tasks, 100.0, 30)


def test_growth_is_measured_after_the_warm_up_between_medians_of_three() -> None:
    samples = [_sample(0.0, 50.0, 10)] + [
        _sample(1.0 + m, rss, tasks)
        for m, (rss, tasks) in enumerate(
            [(80.0, 40), (80.0, 44), (81.0, 40), (85.0, 40), (88.0, 40), (88.0, 47), (90.0, 40)]
        )
    ]
    figures = growth(samples, warmup_minutes=1.0)
    assert figures["first_minutes"] == 1.0 and figures["last_minutes"] == 7.0
    assert figures["operator_rss_mib_first"] == 80.0
    assert figures["operator_rss_mib_last"] == 88.0
    assert figures["operator_rss_mib_growth_percent"] == 10.0
    assert figures["operator_tasks_growth_percent"] == 0.0  # single bursts are not growth
    assert figures["server_rss_mib_growth_percent"] == 0.0


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_short_soak_converges_and_reports_every_figure() -> None:
    done = subprocess.run(SHORT_SOAK, cwd=ROOT, capture_output=True, text=True, timeout=170)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stdout + done.stderr
    samples = [line for line in lines if line.get("sample")]
    assert len(samples) >= 3
    assert all(s["operator_tasks"] > 0 and s["operator_fds"] > 0 for s in samples)
    summary = lines[-1]
    assert summary["summary"] and summary["ok"] and summary["converged"]
    assert summary["widgets"] == summary["children"] == summary["converged_widgets"] == 20
    assert summary["orphans"] == 0
    assert summary["patches"] > 0 and summary["recreates"] > 0
    assert "operator_rss_mib_growth_percent" in summary
    assert "server_fds_growth_percent" in summary
