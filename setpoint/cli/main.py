"""Entry point of the ``setpoint`` command: one group per part of the CLI contract (DESIGN.md)."""

from __future__ import annotations

import importlib
from typing import Any

import click

from setpoint import __version__
from setpoint.cli import garbage_collection

# Subcommands imported only when used: `setpoint run` must not pay for the local cluster's
# imports (a third of a second), nor `setpoint cluster serve` for the runtime's.
LAZY_COMMANDS = {
    "cluster": "setpoint.cli.cluster:cluster",
    "run": "setpoint.cli.run:run_command",
    "console": "setpoint.cli.console:console_command",
    "generate": "setpoint.cli.generate:generate_command",
    "install": "setpoint.cli.generate:install_command",
    "uninstall": "setpoint.cli.generate:uninstall_command",
    "init": "setpoint.cli.scaffold:init_command",
    "dev": "setpoint.cli.dev:dev_command",
    "check": "setpoint.cli.generate:check_group",
    "create": "setpoint.cli.scaffold:create_group",
    "demo": "setpoint.cli.demo.command:demo_command",
    "rbac": "setpoint.cli.rbac:rbac_group",
    "metacontroller": "setpoint.cli.metacontroller:metacontroller_group",
}


class LazyGroup(click.Group):
    """A click group that imports the modules of `LAZY_COMMANDS` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            garbage_collection.resume()
            return super().get_command(ctx, cmd_name)
        module, _, attribute = target.partition(":")
        command: Any = getattr(importlib.import_module(module), attribute)
        if cmd_name != "cluster":  # `cluster serve` resumes once the cluster has started
            garbage_collection.resume()
        return command  # type: ignore[no-any-return]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="setpoint")
def cli() -> None:
    """setpoint: write, run, test and ship Kubernetes operators in Python."""


def main() -> None:
    """Console-script entry point."""
    garbage_collection.pause()
    cli(prog_name="setpoint")


if __name__ == "__main__":
    main()
