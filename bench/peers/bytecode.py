"""Compiled bytecode for the contestants' own sources, as an installed package has it.

``pip install`` writes each module's ``.pyc``; this checkout's sources have none when
``PYTHONDONTWRITEBYTECODE`` is set (as on this project's machines), and then every contestant
process compiles setpoint's ~400 modules at start — about 0.7 s of CPU that an installed
setpoint never spends, and that Kopf (installed from PyPI, compiled by pip) does not pay either.
"""

from __future__ import annotations

import compileall
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[2]
#: The packages the contestants and the cluster import from this checkout.
SOURCE_PACKAGES: Final = ("setpoint", "bench")


def compile_sources(repo: Path = REPO) -> None:
    """Write (or refresh) ``__pycache__`` beside this checkout's sources, as pip would."""
    for package in SOURCE_PACKAGES:
        if not compileall.compile_dir(repo / package, quiet=1, workers=0):
            raise RuntimeError(f"compiling {repo / package} failed: see the errors above")
