"""The `setpoint` command: its groups, its version."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from setpoint import __version__
from setpoint.cli.main import cli

CONTRACT_GROUPS = ("cluster", "run", "dev", "generate", "init", "create", "demo")
# Beyond DESIGN.md's contract: CRD installation (kubebuilder's install/uninstall), bundle checks,
# RBAC suggestions from an audit log, Metacontroller-compatible controllers, the web console.
EXTRA_COMMANDS = ("install", "uninstall", "check", "rbac", "metacontroller", "console")


def test_help_lists_every_command_group_of_the_cli_contract() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    commands = result.output.split("Commands:", 1)[1]
    listed = {line.split()[0] for line in commands.splitlines() if line.strip()}
    assert listed == {*CONTRACT_GROUPS, *EXTRA_COMMANDS}


def test_version_is_the_package_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"setpoint, version {__version__}"


def test_the_console_entry_point_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "cluster" in done.stdout


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


def test_every_command_has_an_example_in_its_help() -> None:
    commands = _commands(cli)
    assert ("create", "api") in commands and ("cluster", "serve") in commands
    for command in commands:
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0, result.output
        assert "Example:" in result.output, command
        assert f"setpoint {command[0]}" in result.output.split("Example:", 1)[1], command
