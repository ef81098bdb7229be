"""The instruction-count measurement's pieces (the measurement itself takes minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.peers.instructions import Counted, instructions_in, summarize
from bench.peers.processes import CONTESTANTS


def test_the_total_is_read_from_the_summary_line(tmp_path: Path) -> None:
    out = tmp_path / "run.callgrind"
    out.write_bytes(b"# callgrind format\nversion: 1\nevents: Ir\nsummary: 1234567\ntotals: 1\n")
    assert instructions_in(out) == 1234567
    out.write_bytes(b"events: Ir\n")
    with pytest.raises(RuntimeError, match="no 'summary:' line"):
        instructions_in(out)


def test_a_counted_contestant_runs_its_usual_command_under_callgrind(tmp_path: Path) -> None:
    raw = CONTESTANTS["raw"]
    counted = Counted(raw.name, raw.clients, raw.watches, out=tmp_path / "raw.out")
    argv = counted.argv("ns", tmp_path / "kubeconfig")
    assert argv[:5] == [
        "env", "PYTHONHASHSEED=0",
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp_path}/raw.out",
    ]  # fmt: skip
    assert argv[5:] == raw.argv("ns", tmp_path / "kubeconfig")


def test_several_runs_report_the_median_run() -> None:
    # Per object: (1,700 - 300) / 700 = 2.0 K, 2.5 K and 1.5 K; the median run is the first.
    counts = [(300_000, 1_700_000), (300_000, 2_050_000), (300_000, 1_350_000)]
    summary = summarize(counts, (300, 1000))
    assert summary["per_object"] == 2000
    assert summary["instructions"] == {"300": 300_000, "1000": 1_700_000}
    assert summary["startup"] == 300_000 - 300 * 2000
    assert summary["per_object_runs"] == [2000, 2500, 1500]
    # With an even number of runs, the lower middle one (a run that happened).
    assert summarize(counts[1:], (300, 1000))["per_object"] == 1500
    assert "per_object_runs" not in summarize(counts[:1], (300, 1000))
