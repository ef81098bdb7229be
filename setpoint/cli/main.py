"""Entry point of the ``setpoint`` command: one group per part of the CLI contract (DESIGN.md)."""

from __future__ import annotations

import importlib

import click

from setpoint import __version__
from setpoint.cli.cluster import cluster

#: Commands imported only when used: ``setpoint run`` loads the whole runtime, which
#: ``setpoint cluster serve`` (and its cold start) does not need.
LAZY_COMMANDS = {"run": "setpoint.cli.run:run_command"}


class LazyGroup(click.Group):
    """A group whose :data:`LAZY_COMMANDS` are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, _, attribute = LAZY_COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


class NotBuiltYet(click.ClickException):
    """A command of the CLI contract whose implementation has not landed yet."""

    exit_code = 2

    def __init__(self, command: str) -> None:
        super().__init__(
            f"'setpoint {command}' is part of the CLI contract but is not built yet; "
            "see the open issues."
        )


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="setpoint")
def cli() -> None:
    """setpoint: write, run, test and ship Kubernetes operators in Python."""


cli.add_command(cluster)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("target", required=False)
def dev(target: str | None) -> None:
    """Local cluster + the operator's CRDs + the operator, in one command."""
    raise NotBuiltYet("dev")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("target", required=False)
def generate(target: str | None) -> None:
    """Generate CRDs, RBAC, kustomize config, a Helm chart and a Dockerfile from TARGET."""
    raise NotBuiltYet("generate")


@cli.command(name="init")
@click.argument("name", required=False)
def init_project(name: str | None) -> None:
    """Scaffold a new operator project called NAME."""
    raise NotBuiltYet("init")


@cli.group()
def create() -> None:
    """Scaffold parts of an existing project."""


@create.command(
    name="api", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
def create_api() -> None:
    """Scaffold a new API (CRD model + controller): --group G --version V --kind K."""
    raise NotBuiltYet("create api")


@cli.command()
def demo() -> None:
    """The README tour: local cluster + the seed operators + their samples."""
    raise NotBuiltYet("demo")


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="setpoint")


if __name__ == "__main__":
    main()
