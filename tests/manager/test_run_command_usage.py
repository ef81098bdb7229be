"""`setpoint run` explains what is wrong with TARGET or the options before touching a cluster."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint.cli.run import run_command


@pytest.fixture(autouse=True)
def keep_root_logging() -> Iterator[None]:
    """`setpoint run` configures the root logger; leave it as it was for the other tests."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(run_command, list(args))
    return result.exit_code, result.output


def test_a_file_without_operators_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "empty_operator.py"
    target.write_text("x = 1\n")
    code, output = invoke(str(target))
    assert code == 2
    assert "defines no setpoint.Operator or Manager" in output


def test_a_missing_file_or_module_is_named(tmp_path: Path) -> None:
    code, output = invoke(str(tmp_path / "nope.py"))
    assert code == 2 and "no such file" in output
    code, output = invoke("no_such_module_for_setpoint_tests")
    assert code == 2 and "no module named 'no_such_module_for_setpoint_tests'" in output


def test_an_import_error_in_target_is_reported(tmp_path: Path) -> None:
    target = tmp_path / "broken_operator.py"
    target.write_text("raise RuntimeError('missing setting WIDGET_IMAGE')\n")
    code, output = invoke(str(target))
    assert code == 2
    assert "RuntimeError: missing setting WIDGET_IMAGE" in output


def test_leader_election_on_a_manager_without_an_id_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "plain_manager.py"
    target.write_text("import setpoint.manager\nmanager = setpoint.manager.Manager()\n")
    code, output = invoke(str(target), "--leader-elect")
    assert code == 2
    assert "leader_election_id" in output


def test_a_named_attribute_must_be_an_operator(tmp_path: Path) -> None:
    target = tmp_path / "named_operator.py"
    target.write_text("value = 3\n")
    code, output = invoke(f"{target}:value")
    assert code == 2 and "is a int, not a setpoint.Operator" in output
    code, output = invoke(f"{target}:missing")
    assert code == 2 and "has no attribute 'missing'" in output


def test_bad_bind_address_is_named(tmp_path: Path) -> None:
    target = tmp_path / "op_for_address.py"
    target.write_text("import setpoint.manager\nop = setpoint.manager.Operator('widgets')\n")
    code, output = invoke(str(target), "--metrics-bind-address", "8080")
    assert code == 2
    assert "metrics_bind_address" in output


def test_bad_log_level_is_named(tmp_path: Path) -> None:
    target = tmp_path / "op_for_level.py"
    target.write_text("import setpoint.manager\nop = setpoint.manager.Operator('widgets')\n")
    code, output = invoke(str(target), "--log-level", "chatty")
    assert code == 2
    assert "'chatty' is not a level" in output
