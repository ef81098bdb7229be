"""docs/operations.md documents every option of `setpoint run`, and only real ones."""

from __future__ import annotations

import re
from pathlib import Path

import click

from setpoint.cli.run import run_command

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def command_options(command: click.Command) -> set[str]:
    names: set[str] = set()
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            names.update(parameter.opts)
            names.update(parameter.secondary_opts)
    return names


def test_every_option_of_setpoint_run_is_documented() -> None:
    text = OPERATIONS.read_text()
    missing = sorted(
        name
        for name in command_options(run_command)
        if not re.search(rf"`{re.escape(name)}[` ]", text)
    )
    assert missing == []


def test_the_options_table_names_no_option_that_does_not_exist() -> None:
    documented = set(re.findall(r"^\| `(-{1,2}[a-z][a-z-]*)", OPERATIONS.read_text(), re.MULTILINE))
    assert documented, "the options table was not found"
    assert documented - command_options(run_command) - {"-h"} == set()
