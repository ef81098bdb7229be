"""Entry point of the ``setpoint`` command: one group per part of the CLI contract (DESIGN.md)."""

from __future__ import annotations

import click

from setpoint import __version__
from setpoint.cli.cluster import cluster
from setpoint.cli.run import run_command


class NotBuiltYet(click.ClickException):
    """A command of the CLI contract whose implementation has not landed yet."""

    exit_code = 2

    def __init__(self, command: str) -> None:
        super().__init__(
            f"'setpoint {command}' is part of the CLI contract but is not built yet; "
            "see the open issues."
        )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="setpoint")
def cli() -> None:
    """setpoint: write, run, test and ship Kubernetes operators in Python."""


cli.add_command(cluster)
cli.add_command(run_command)


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
