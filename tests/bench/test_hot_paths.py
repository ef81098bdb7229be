"""The hot-path measurement's units of work do what they claim, on today's runtime (the
measurement itself runs them under valgrind and takes a minute)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.peers import hot_paths


@pytest.mark.parametrize("path", hot_paths.PATHS)
async def test_each_path_does_all_its_units(path: str) -> None:
    assert await hot_paths.run_path(path, 7) == 7
    assert await hot_paths.run_path(path, 7, work=False) is None


def test_the_process_entry_fails_when_units_go_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    async def nothing_done(count: int) -> hot_paths.Work:
        async def work() -> int:
            return 0

        return work

    monkeypatch.setitem(hot_paths.SETUPS, "event", nothing_done)
    with pytest.raises(SystemExit, match="event: 0 of 3 units done"):
        hot_paths.main(["--run", "event", "--count", "3"])


def test_arguments_are_checked() -> None:
    with pytest.raises(SystemExit, match="unknown nope"):
        hot_paths.main(["--paths", "event,nope"])
    with pytest.raises(SystemExit, match="at least 1"):
        hot_paths.main(["--count", "0"])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_one_unit_is_counted_from_two_callgrind_runs(tmp_path: Path) -> None:
    per_event = hot_paths.count_instructions("event", 200, tmp_path)
    # Decoding, storing and dispatching one event: tens of thousands of instructions.
    assert 10_000 < per_event < 500_000


def test_both_runs_load_compiled_bytecode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # In a fresh checkout the first run compiled (and wrote) the modules' bytecode, the second
    # loaded it: the difference came out negative (seen on CI under two workers).
    calls: list[str] = []
    monkeypatch.setattr(hot_paths, "compile_sources", lambda: calls.append("compile"))

    def run(argv: list[str], **_: object) -> None:
        calls.append("setup" if "--setup-only" in argv else "work")

    monkeypatch.setattr(hot_paths.subprocess, "run", run)
    monkeypatch.setattr(hot_paths, "instructions_in", lambda path: 0)
    hot_paths.count_instructions("event", 10, tmp_path)
    assert calls == ["compile", "setup", "work"]
