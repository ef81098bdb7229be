"""``setpoint generate``, ``setpoint install`` and ``setpoint uninstall``.

``generate`` writes the manifests of an operator from its code (``setpoint.generate``);
``install``/``uninstall`` put its CRDs on, or take them off, the cluster of the current
kubeconfig. Errors a user can cause are one line with a hint (exit code 2 for usage, 1 for a
failure talking to the cluster); ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import yaml

from setpoint.api.resources.custom_resource import CustomResource
from setpoint.api.resources.definition import crd_manifests
from setpoint.api.resources.schema import SchemaError
from setpoint.manager.operator import Operator
from setpoint.manager.target import (
    TargetError,
    find_managers,
    load_target_modules,
    project_directories,
    project_operator_module,
)

__all__ = ["generate_command", "install_command", "load_models_and_operators", "uninstall_command"]


def load_models_and_operators(target: str) -> tuple[list[Operator], list[type[CustomResource]]]:
    """The operators TARGET defines and every CustomResource model it uses or defines."""
    from setpoint.generate.project import models_of

    location = target.rpartition(":")[0] if ":" in target and not target.endswith(":") else target
    modules = load_target_modules(location if location else target)
    defined = [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, CustomResource)
        and value.__resource__ is not None
    ]
    try:
        managers = find_managers(target)
    except TargetError:
        if not defined:
            raise
        managers = []  # a module of models only: enough for `install`, not for `generate`
    operators = [manager for manager in managers if isinstance(manager, Operator)]
    return operators, models_of(operators, defined)


def _target_in_image(target: str) -> str:
    """A file TARGET becomes its module name inside the image (``pkg/op.py`` -> ``pkg.op``),
    a project directory its operator module (``examples/cnat`` -> ``cnat_operator.operator``)."""
    if Path(target).is_dir():
        module = project_operator_module(Path(target))
        if module is not None:
            return module
    if not target.endswith(".py"):
        return target
    path = Path(target).resolve()
    try:
        relative = path.relative_to(Path.cwd())
    except ValueError:
        relative = Path(path.name)
    return ".".join(relative.with_suffix("").parts)


@click.command(name="generate")
@click.argument("target")
@click.argument("bundle_target", required=False, metavar="[TARGET]")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(file_okay=False),
    default="config",
    show_default=True,
    help="Directory to write into (created if missing).",
)
@click.option(
    "--image",
    default="controller:latest",
    show_default=True,
    help="The operator's container image.",
)
@click.option("--namespace", help="Namespace the operator runs in (default: NAME-system).")
@click.option(
    "--namespaced",
    is_flag=True,
    help="A namespaced Role instead of a ClusterRole (for a single-namespace operator).",
)
@click.option(
    "--run-target",
    help="TARGET as `setpoint run` sees it inside the image "
    "(default: TARGET, a .py path turned into a module name).",
)
@click.option(
    "--version",
    "bundle_version",
    default="0.1.0",
    show_default=True,
    help="bundle: the operator's version (the CSV's).",
)
@click.option(
    "--channel",
    "channels",
    multiple=True,
    help="bundle: a channel (repeatable; the first is the default) [default: alpha].",
)
@click.option(
    "--capabilities",
    default="Basic Install",
    show_default=True,
    help="bundle: the capability level (Basic Install ... Auto Pilot).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def generate_command(
    target: str,
    bundle_target: str | None,
    output: str,
    image: str,
    namespace: str | None,
    namespaced: bool,
    run_target: str | None,
    bundle_version: str,
    channels: tuple[str, ...],
    capabilities: str,
    debug: bool,
) -> None:  # fmt: skip
    """Write CRDs, RBAC, kustomize config, a Helm chart and a Dockerfile for TARGET;
    `generate bundle TARGET` writes an OLM bundle instead; `generate metacontroller [PATH]`
    the manifests of `setpoint metacontroller run` for the CompositeControllers and
    DecoratorControllers in PATH (a file or directory; default: ./config).

    \b
    Example:
      setpoint generate myop/operator.py -o config --image ghcr.io/me/myop:0.1.0
      kubectl apply -k config/default
      setpoint generate bundle myop/operator.py -o bundle --version 0.1.0
      setpoint check bundle bundle
    """
    from setpoint.generate.bundle import BundleOptions, bundle_files
    from setpoint.generate.project import GenerateOptions, project_files

    if target == "metacontroller":  # `setpoint metacontroller run`'s manifests
        from setpoint.cli.metacontroller import generate_metacontroller

        generate_metacontroller(bundle_target, output, image, namespace, namespaced, debug)
        return
    is_bundle = target == "bundle" and bundle_target is not None
    if is_bundle:
        assert bundle_target is not None
        target = bundle_target
    elif bundle_target is not None:
        raise click.UsageError(f"unexpected argument {bundle_target!r} (did you mean "
                               f"`setpoint generate bundle {bundle_target}`?)")  # fmt: skip
    from setpoint.cli.run import ansible_operators

    try:
        ansible = ansible_operators(target)
        if ansible:  # an Ansible operator's watches.yaml (setpoint.ansible)
            from setpoint.ansible.resources import resource_models

            operators = [op for op in ansible if isinstance(op, Operator)]
            models = resource_models([w for op in ansible for w in getattr(op, "watches", [])])
        else:
            operators, models = load_models_and_operators(target)
        if not operators:
            raise TargetError(f"TARGET {target!r} defines no setpoint.Operator")
        options = GenerateOptions(
            target=run_target or ("/opt/ansible" if ansible else _target_in_image(target)),
            image=image,
            namespace=namespace,
            namespaced=namespaced,
        )
        if is_bundle:
            bundle = BundleOptions(
                version=bundle_version,
                channels=channels or ("alpha",),
                capabilities=capabilities,
            )
            files = bundle_files(operators, models, options, bundle)
        else:
            files = project_files(operators, models, options)
            if ansible:
                from setpoint.generate.ansible_project import ansible_project_files

                project = Path(target)
                files = ansible_project_files(
                    files, project if project.is_dir() else project.parent, options
                )
    except (TargetError, SchemaError, TypeError, ValueError) as error:
        if debug:
            raise
        raise click.UsageError(f"{error}") from None
    root = Path(output)
    kept = []
    for path, text in files.items():
        destination = root / path
        if _user_owned(path) and destination.exists():
            kept.append(path)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text)
    if kept:
        click.echo(f"kept {len(kept)} existing sample(s) in {root}/samples/ (yours to edit)")
    if is_bundle:
        click.echo(f"wrote an OLM bundle ({len(files)} files) to {root}/; "
                   f"check it with: setpoint check bundle {root}")  # fmt: skip
        return
    # One CRD per kind, whatever the number of its versions' models.
    crds = len({model.declaration().crd_name for model in models})
    click.echo(
        f"wrote {len(files)} files to {root}/ ({crds} CRDs); "
        f"install with: kubectl apply -k {root}/default"
    )


def _user_owned(path: str) -> bool:
    """A sample object is written once, then the user's (as kubebuilder's samples): edits in
    ``samples/*.yaml`` survive `setpoint generate`; its kustomization follows the models."""
    return path.startswith("samples/") and path != "samples/kustomization.yaml"


@click.group(name="check")
def check_group() -> None:
    """Check generated artefacts.

    \b
    Example:
      setpoint check bundle bundle/
    """


@check_group.command(name="bundle")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
def check_bundle_command(directory: str) -> None:
    """Run the scorecard's basic and olm checks and the registry's rules on a bundle.

    \b
    Example:
      setpoint check bundle bundle/
    """
    from setpoint.generate.bundle_check import check_bundle

    try:
        results = check_bundle(Path(directory))
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    failed = 0
    for result in results:
        mark = click.style("pass", fg="green") if result.passed else click.style("fail", fg="red")
        click.echo(f"{mark}  {result.name}")
        for suggestion in result.suggestions:
            click.echo(f"      suggestion: {suggestion}")
        failed += not result.passed
    click.echo(f"{len(results) - failed} passed, {failed} failed")
    if failed:
        sys.exit(1)


def _crds_from(source: str) -> list[dict[str, Any]]:
    if source == "metacontroller" and not Path(source).exists():
        from setpoint.composite.crds import metacontroller_crds

        return metacontroller_crds()
    path = Path(source)
    from setpoint.cli.run import ansible_operators

    ansible = ansible_operators(source)
    if ansible:  # an Ansible operator's watches.yaml: its kinds (with config/crd/bases' CRDs)
        from setpoint.ansible.resources import resource_models
        from setpoint.generate.ansible_project import ansible_crds

        watched = resource_models([w for op in ansible for w in getattr(op, "watches", [])])
        if not watched:
            raise click.UsageError(f"TARGET {source!r} watches no custom resource kind")
        return ansible_crds(crd_manifests(watched), path if path.is_dir() else path.parent)
    # A project directory is a TARGET (its models), even with a generated config/ inside.
    if path.is_dir() and not project_directories(path):
        documents: list[dict[str, Any]] = []
        for file in sorted(path.rglob("*.yaml")) + sorted(path.rglob("*.yml")):
            try:
                loaded = list(yaml.safe_load_all(file.read_text()))
            except yaml.YAMLError:
                continue  # not plain YAML (a Helm template): it holds no CRD to apply as is
            documents.extend(
                doc
                for doc in loaded
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
            )
        if not documents:
            raise click.UsageError(f"{source}: no CustomResourceDefinition in its YAML files")
        return documents
    _, models = load_models_and_operators(source)
    if not models:
        raise click.UsageError(f"TARGET {source!r} declares no CustomResource model")
    return crd_manifests(models)


async def _apply_crds(crds: Sequence[dict[str, Any]], kubeconfig: str | None, delete: bool) -> None:
    from setpoint.client import Client
    from setpoint.client.crd_install import create_or_replace_crd
    from setpoint.client.errors import NotFound

    client = await Client.from_environment(**({"path": kubeconfig} if kubeconfig else {}))
    try:
        for crd in crds:
            name = crd["metadata"]["name"]
            if delete:
                try:
                    await client.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
                    click.echo(f"customresourcedefinition/{name} deleted")
                except NotFound:
                    click.echo(f"customresourcedefinition/{name} not found")
                continue
            outcome = await create_or_replace_crd(client, crd)
            click.echo(f"customresourcedefinition/{name} {outcome}")
    finally:
        await client.close()


def _run_install(source: str, kubeconfig: str | None, delete: bool, debug: bool) -> None:
    try:
        crds = _crds_from(source)
        asyncio.run(_apply_crds(crds, kubeconfig, delete))
    except (TargetError, SchemaError) as error:
        if debug:
            raise
        raise click.UsageError(str(error)) from None
    except click.ClickException:
        raise
    except Exception as error:
        if debug:
            raise
        from setpoint.cli.run_errors import describe_failure

        message = describe_failure(error)
        if message is None:
            raise  # a bug: its traceback is the useful report
        click.echo(f"Error: {message}", err=True)
        sys.exit(1)


_SOURCE_HELP = (
    "TARGET (a module or file defining CustomResource models), a directory of CRDs, or "
    "'metacontroller' (the metacontroller.k8s.io CRDs, for `setpoint metacontroller run`)."
)


@click.command(name="install")
@click.argument("source")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, exists=True))
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def install_command(source: str, kubeconfig: str | None, debug: bool) -> None:
    """Create or update the CRDs of SOURCE on the current cluster.

    \b
    Example:
      setpoint install myop/operator.py
      setpoint install config/crd
    """
    _run_install(source, kubeconfig, delete=False, debug=debug)


@click.command(name="uninstall")
@click.argument("source")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, exists=True))
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def uninstall_command(source: str, kubeconfig: str | None, debug: bool) -> None:
    """Delete the CRDs of SOURCE (and so every object of them) from the current cluster.

    \b
    Example:
      setpoint uninstall myop/operator.py
    """
    _run_install(source, kubeconfig, delete=True, debug=debug)


install_command.help = (install_command.help or "") + f"\n\nSOURCE: {_SOURCE_HELP}"
uninstall_command.help = (uninstall_command.help or "") + f"\n\nSOURCE: {_SOURCE_HELP}"
