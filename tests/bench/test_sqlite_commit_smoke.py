"""Smoke test of ``bench.sqlite_commit``: it commits every batch size and reports the figures."""

from __future__ import annotations

from bench import sqlite_commit


async def test_reports_each_batch_size() -> None:
    figures = await sqlite_commit.measure(3)
    rows = figures["sizes"]
    assert [row["batch_size"] for row in rows] == list(sqlite_commit.BATCH_SIZES)
    for row in rows:
        assert row["batches"] == 3
        assert row["commit_wall_ms_median"] > 0
        assert row["value_bytes"] > 500  # about 1 KiB of JSON, like bench.apiserver's bodies
    assert "| 16 |" in sqlite_commit.render(figures)
