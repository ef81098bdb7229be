"""kill -9 under concurrent reads and writes, repeated.

CI runs a few rounds; ``make test-crash`` runs the slow-marked 20 (skipped otherwise).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cluster.hardening.crash_rounds import Observed, crash_round, final_check

CI_ROUNDS = 2
LONG_ROUNDS = 20
#: The long runs take minutes: only ``make test-crash`` / ``make test-fuzz`` set this.
long_run = pytest.mark.skipif(
    not os.environ.get("SETPOINT_LONG_RUNS"), reason="long run: make test-crash or make test-fuzz"
)


async def run_rounds(tmp_path: Path, rounds: int) -> Observed:
    seen = Observed()
    data_dir = tmp_path / "data"
    for _ in range(rounds):
        await crash_round(tmp_path, data_dir, seen)
    await final_check(tmp_path, data_dir, seen)
    return seen


async def test_crashes_lose_no_acknowledged_write_and_reuse_no_revision(tmp_path: Path) -> None:
    seen = await run_rounds(tmp_path, CI_ROUNDS)
    assert seen.acknowledged, "the load wrote nothing before the kills"


@pytest.mark.slow
@long_run
@pytest.mark.timeout(900)
async def test_twenty_crash_rounds(tmp_path: Path) -> None:
    seen = await run_rounds(tmp_path, LONG_ROUNDS)
    assert len(seen.acknowledged) > LONG_ROUNDS
