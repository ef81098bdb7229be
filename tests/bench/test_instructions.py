"""The instruction-count measurement's pieces (the measurement itself takes minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.peers.instructions import Counted, instructions_in
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
