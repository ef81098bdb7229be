"""The API server's instruction count per create: its pieces (the measurement takes minutes)."""

from __future__ import annotations

from pathlib import Path

from bench.apiserver_instructions import _argv, _total_instructions, render


def test_the_totals_of_every_dump_are_added(tmp_path: Path) -> None:
    prefix = tmp_path / "memory.callgrind"
    (tmp_path / "memory.callgrind").write_text("events: Ir\nsummary: 0\ntotals: 0\n")
    (tmp_path / "memory.callgrind.1").write_text("events: Ir\nsummary: 0\ntotals: 700\n")
    (tmp_path / "memory.callgrind.2").write_text("events: Ir\ntotals: 300\n")
    (tmp_path / "sqlite.callgrind.1").write_text("events: Ir\ntotals: 99\n")

    assert _total_instructions(prefix) == 1000


def test_each_target_is_the_server_bench_apiserver_measures(tmp_path: Path) -> None:
    memory = _argv("memory", 8080, tmp_path)
    quiet = _argv("memory-no-controllers", 8080, tmp_path)
    sqlite = _argv("sqlite", 8080, tmp_path)

    assert memory[1:6] == ["-m", "setpoint", "cluster", "serve", "--port"]
    assert "--in-memory" in memory and "--no-controllers" not in memory
    assert "--no-controllers" in quiet
    assert sqlite[sqlite.index("--data-dir") + 1] == str(tmp_path / "sqlite-data")
    assert _argv("ceiling", 8080, tmp_path)[1:3] == ["-m", "bench.ceiling_server"]


def test_the_table_names_each_target_and_its_ratio() -> None:
    figures = {
        "ceiling": {"per_create": 300_000.0},
        "memory": {"per_create": 600_000.0},
        "memory-no-controllers": {"per_create": 500_000.0},
        "sqlite": {"error": "boom"},
        "ceiling_over_memory": 0.5,
        "ceiling_over_memory_no_controllers": 0.6,
        "ceiling_over_sqlite": None,
    }

    table = render(figures)

    assert "memory-no-controllers" in table and "0.6" in table
