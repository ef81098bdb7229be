"""Every example's committed ``config/`` is what ``setpoint generate`` writes from its code."""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

import pytest

from tests.examples.projects import example_projects, generate_command


def _differences(left: Path, right: Path) -> list[str]:
    comparison = filecmp.dircmp(left, right)
    found = [f"only in {left}: {name}" for name in comparison.left_only]
    found += [f"only in {right}: {name}" for name in comparison.right_only]
    found += [f"differs: {name}" for name in comparison.diff_files]
    for name in comparison.common_dirs:
        found += _differences(left / name, right / name)
    return found


@pytest.mark.parametrize("project", example_projects(), ids=lambda path: path.name)
def test_committed_config_is_what_generate_writes(project: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        generate_command(project, tmp_path / "config"), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert (project / "config").is_dir(), "run `make examples-config` and commit config/"
    assert _differences(project / "config", tmp_path / "config") == [], (
        "config/ is stale: run `make examples-config`"
    )
