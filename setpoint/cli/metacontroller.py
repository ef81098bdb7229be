"""`setpoint metacontroller run`: run every CompositeController and DecoratorController found.

The command is `setpoint run` of an operator named ``metacontroller`` that holds one
`setpoint.composite.Metacontroller`, so it takes the same options (kubeconfig, namespace scope,
leader election, metrics, probes, logging) and exits with the same codes, plus
``--target-label-selector``: run only the declarations whose labels match, to split them across
instances, as Metacontroller's flag of that name does.

`generate_metacontroller` is ``setpoint generate metacontroller [PATH]``: the manifests that run
this command in a cluster (``setpoint.generate.metacontroller``).
"""

from __future__ import annotations

from typing import Any

import click

from setpoint.cli.run import run_command
from setpoint.manager.operator import Operator

__all__ = ["generate_metacontroller", "metacontroller_group"]

#: The operator `run` hands to `setpoint run`, as TARGET ``setpoint.cli.metacontroller:OPERATOR``.
OPERATOR: Operator | None = None


@click.group(name="metacontroller")
def metacontroller_group() -> None:
    """Metacontroller-compatible composite and decorator controllers.

    \b
    Example:
      setpoint install metacontroller
      setpoint metacontroller run --kubeconfig ~/.kube/config
      setpoint generate metacontroller controllers/ -o deploy   # RBAC + Deployment
    """


def _run(target_label_selector: str | None, workers: int, **options: Any) -> None:
    global OPERATOR
    from setpoint.api.selector_error import SelectorError
    from setpoint.composite import Metacontroller

    operator = Operator("metacontroller")
    try:
        operator.add(
            Metacontroller(
                operator,
                target_label_selector=target_label_selector,
                workers_per_controller=workers,
            )
        )
    except SelectorError as error:
        raise click.BadParameter(str(error), param_hint="--target-label-selector") from None
    OPERATOR = operator
    assert run_command.callback is not None
    run_command.callback(target=f"{__name__}:OPERATOR", **options)


_PARAMS = [param for param in run_command.params if param.name != "target"]
run = click.Command(
    "run",
    callback=_run,
    params=[
        click.Option(
            ["--target-label-selector"],
            help="Run only the CompositeControllers/DecoratorControllers whose labels match "
            "this selector (e.g. 'shard=a'); default: all.",
        ),
        click.Option(
            ["--workers"],
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="Parallel syncs per controller (of different parents).",
        ),
        *_PARAMS,
    ],
    help="Run every CompositeController and DecoratorController of the cluster.\n\n"
    "Takes the options of `setpoint run` (without TARGET).\n\n"
    "\b\nExample:\n  setpoint install metacontroller\n"
    "  setpoint metacontroller run --kubeconfig ~/.kube/config",
)
metacontroller_group.add_command(run)


def generate_metacontroller(
    path: str | None, output: str, image: str, namespace: str | None, namespaced: bool, debug: bool
) -> None:
    """``setpoint generate metacontroller [PATH]``: write the CRDs, RBAC and Deployment of
    ``setpoint metacontroller run`` for the declarations in PATH (default ``config``)."""
    from pathlib import Path

    from setpoint.generate.metacontroller import declarations_in, metacontroller_files
    from setpoint.generate.project import GenerateOptions

    source = Path(path or "config")
    if not source.exists():
        raise click.UsageError(
            f"{source}: no such file or directory (give the CompositeController and "
            "DecoratorController manifests: `setpoint generate metacontroller PATH`)"
        )
    root = Path(output)
    try:
        declarations = declarations_in([source])  # (generated files hold none: harmless)
        manifests = metacontroller_files(
            declarations,
            GenerateOptions(
                target="metacontroller", image=image, namespace=namespace, namespaced=namespaced
            ),
        )
    except ValueError as error:
        if debug:
            raise
        raise click.UsageError(str(error)) from None
    for relative, text in manifests.files.items():
        destination = root / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text)
    for note in manifests.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(
        f"wrote {len(manifests.files)} files to {root}/ for {len(manifests.controllers)} "
        f"controller(s) in {source}; install with: kubectl apply -k {root}/default"
    )
