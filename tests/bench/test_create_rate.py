"""``bench.create_rate``'s command line: targets, and the baseline each runs beside."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import create_rate


def test_each_target_but_the_ceiling_runs_beside_its_baseline() -> None:
    assert create_rate.with_baselines(["ceiling", "memory", "sqlite"]) == [
        "ceiling",
        "memory",
        "memory@baseline",
        "sqlite",
        "sqlite@baseline",
    ]


def test_a_baseline_must_hold_the_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        create_rate.main(["--baseline", str(tmp_path)])
    assert f"--baseline: {tmp_path} holds no setpoint package" in capsys.readouterr().err


def test_unknown_targets_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        create_rate.main(["--targets", "memory,kmock"])
    assert "--targets: unknown target kmock" in capsys.readouterr().err
