"""The example projects under ``examples/`` and the one command that generates their ``config/``.

``make examples-config`` regenerates every example's manifests with :func:`generate_command`;
``test_example_projects.py`` checks that doing so changes nothing that is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_projects() -> list[Path]:
    """Every example directory that holds a project (a package with ``operator.py``)."""
    return sorted(
        project
        for project in EXAMPLES.iterdir()
        if project.is_dir() and any(project.glob("*/operator.py"))
    )


def generate_command(project: Path, output: Path) -> list[str]:
    """``setpoint generate`` for one example, writing to ``output``."""
    return [
        sys.executable,
        "-m",
        "setpoint",
        "generate",
        str(project),
        "-o",
        str(output),
        "--image",
        f"setpoint-example-{project.name}:latest",
    ]


if __name__ == "__main__":
    import subprocess

    for example in example_projects():
        subprocess.run(generate_command(example, example / "config"), check=True)
