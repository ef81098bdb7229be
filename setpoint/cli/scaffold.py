"""``setpoint init`` and ``setpoint create api``: a ready project, then typed resources in it.

``init NAME`` writes a project whose ``make test`` passes at once (against the local cluster,
offline) and whose ``make generate`` writes valid manifests; ``create api`` adds a typed
resource, a reconciler that marks it Ready, a sample (through ``make generate``) and a test
that uses the testing kit. Existing files are never overwritten.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from string import Template

import click

from setpoint.api.resources.custom_resource import default_plural
from setpoint.cli import scaffold_templates as templates
from setpoint.cli.installation import (
    INDEX_ORIGIN,
    WHEELS_DIRECTORY,
    InstallationError,
    SetpointDependency,
    dependency_from_spec,
    installed_dependency,
)
from setpoint.cli.local_processes import setpoint_command
from setpoint.cli.scaffold_project import (
    check_api,
    identifier_problem,
    project_or_usage_error,
    project_settings,
    write_file,
)

__all__ = [
    "check_api",
    "create_api_command",
    "identifier_problem",
    "init_command",
    "project_or_usage_error",
    "project_settings",
    "write_file",
]

_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _dependency(spec: str | None, scratch: Path) -> SetpointDependency:
    try:
        if spec is not None:
            return dependency_from_spec(spec)
        return installed_dependency(scratch)
    except InstallationError as error:
        raise click.UsageError(str(error)) from None


def _copy_wheel(dependency: SetpointDependency, root: Path) -> None:
    if dependency.wheel is None:
        return
    destination = root / WHEELS_DIRECTORY / dependency.wheel.name
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(dependency.wheel, destination)
    click.echo(f"  created  {WHEELS_DIRECTORY}/{dependency.wheel.name}")


@click.command(name="init")
@click.argument("name")
@click.option(
    "--domain",
    default="example.com",
    show_default=True,
    help="Suffix of the API groups (`create api --group web` -> web.DOMAIN).",
)
@click.option(
    "--namespaced",
    is_flag=True,
    help="The operator watches one namespace: a Role instead of a ClusterRole.",
)
@click.option(
    "--directory",
    type=click.Path(file_okay=False),
    help="Where to create the project (default: ./NAME).",
)
@click.option(
    "--kind",
    help="Also add this resource (as `create api`), with its reconciler, sample and test.",
)
@click.option(
    "--group",
    help="With --kind: the API group, without the domain (default: NAME's first word).",
)
@click.option(
    "--version",
    "api_version",
    default="v1alpha1",
    show_default=True,
    help="With --kind: the API version.",
)
@click.option("--defaulting", is_flag=True, help="With --kind: a defaulter webhook for it.")
@click.option(
    "--validation",
    "--programmatic-validation",
    "validation",
    is_flag=True,
    help="With --kind: a validator webhook for it.",
)
@click.option(
    "--setpoint-spec",
    help="How the project's pyproject names setpoint: a requirement ('setpoint==0.1.0') or a "
    "wheel's path (copied into wheels/). Default: the way this setpoint was installed.",
)
@click.option(
    "--plugin",
    type=click.Choice(["python", "ansible"]),
    default="python",
    show_default=True,
    help="python: a Python operator; ansible: Operator SDK's Ansible layout (watches.yaml, "
    "roles/, playbooks/).",
)
def init_command(
    name: str,
    domain: str,
    namespaced: bool,
    directory: str | None,
    kind: str | None,
    group: str | None,
    api_version: str,
    setpoint_spec: str | None,
    plugin: str = "python",
    defaulting: bool = False,
    validation: bool = False,
) -> None:
    """Create a ready operator project called NAME (with --kind, a first resource too).

    The project depends on setpoint the way this setpoint was installed: a version range from
    a package index; otherwise a wheel copied into its wheels/ directory (built first when
    this setpoint runs from a checkout), which its Makefile and Dockerfile give pip.

    \b
    Example:
      setpoint init website-operator --kind Website
      setpoint init website-operator --kind Website --defaulting --validation
      cd website-operator
      setpoint dev
    """
    if not _NAME.match(name):
        raise click.UsageError(
            f"NAME {name!r} must be a lower-case DNS label (letters, digits, '-'), e.g. my-operator"
        )
    if "." not in domain:
        raise click.UsageError(f"--domain {domain!r} must contain a dot, e.g. example.com")
    package = name.replace("-", "_")
    problem = identifier_problem(package, "NAME's package", top_level=True)
    if problem is not None:
        raise click.UsageError(f"{problem}: choose another NAME")
    if kind is not None:
        group = group or name.split("-")[0]
        check_api(group, api_version, kind)
    elif group is not None:
        raise click.UsageError("--group needs --kind (the resource to add)")
    elif defaulting or validation:
        raise click.UsageError("--defaulting and --validation need --kind (the resource)")
    root = Path(directory or name)
    if root.exists() and any(root.iterdir()):
        raise click.UsageError(
            f"{root}/ exists and is not empty: choose another NAME or --directory"
        )
    if plugin == "ansible":
        if kind is not None:
            raise click.UsageError(
                "--kind is for Python projects; in an Ansible project run `setpoint create api`"
            )
        from setpoint.cli.scaffold_ansible import init_ansible_project

        init_ansible_project(root, name, domain, namespaced)
        return
    with tempfile.TemporaryDirectory(prefix="setpoint-init-") as scratch:
        dependency = _dependency(setpoint_spec, Path(scratch))
        click.echo(f"Creating {root}/")
        root.mkdir(parents=True, exist_ok=True)
        _copy_wheel(dependency, root)
    values = {
        "name": name,
        "package": package,
        "domain": domain,
        "namespaced": "true" if namespaced else "false",
        "generate_flags": " --namespaced" if namespaced else "",
        "setpoint_requirement": dependency.requirement,
        "setpoint_testing_requirement": dependency.with_extra("testing"),
        "wheels": WHEELS_DIRECTORY,
    }
    files = {
        "pyproject.toml": templates.PYPROJECT,
        "Makefile": templates.MAKEFILE,
        "README.md": templates.README,
        ".gitignore": templates.GITIGNORE,
        ".dockerignore": templates.DOCKERIGNORE,
        ".github/workflows/test.yaml": templates.CI_WORKFLOW,
        f"{package}/__init__.py": templates.PACKAGE_INIT,
        f"{package}/operator.py": templates.OPERATOR,
        f"{package}/api/__init__.py": templates.API_INIT,
        f"{package}/controllers/__init__.py": templates.CONTROLLERS_INIT,
        "tests/__init__.py": templates.TESTS_INIT,
        "tests/conftest.py": templates.CONFTEST,
    }
    created: list[str] = []
    for path, text in files.items():
        write_file(root, path, Template(text).substitute(values), created)
    click.echo(f"setpoint comes from {dependency.origin}: {dependency.requirement}")
    if dependency.origin == INDEX_ORIGIN:
        click.echo(
            "  (if no package index the project can reach has setpoint, run init again with "
            "--setpoint-spec PATH/TO/setpoint-VERSION-py3-none-any.whl)"
        )
    if kind is None:
        click.echo(
            f"Next: cd {root} && setpoint create api --group GROUP --version v1 --kind KIND "
            "&& make test"
        )
        return
    assert group is not None
    _add_api(root, group, api_version, kind, cluster_scoped=False)
    if defaulting or validation:
        from setpoint.cli.scaffold_webhook import add_webhooks

        add_webhooks(root, api_version, kind, defaulting=defaulting, validation=validation)
    _generate(root, package, name, namespaced)
    click.echo(f"Next: cd {root} && setpoint dev    (make test: the tests)")


def _generate(root: Path, package: str, name: str, namespaced: bool) -> None:
    """`make generate`'s command, so that config/ (and the sample) exist from the start."""
    command = setpoint_command("generate", f"{package}.operator", "-o", "config",
                               "--image", f"{name}:latest")  # fmt: skip
    if namespaced:
        command.append("--namespaced")
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise click.ClickException(f"generating config/ failed: {last}")
    click.echo("  created  config/ (CRDs, RBAC, samples ...: `make generate` writes it again)")


@click.group(name="create")
def create_group() -> None:
    """Add parts to a project made by `setpoint init`.

    \b
    Example:
      setpoint create api --group cache --version v1alpha1 --kind Memcached
    """


@create_group.command(name="api")
@click.option("--group", required=True, help="API group, without the domain (e.g. cache).")
@click.option("--version", "api_version", required=True, help="API version (e.g. v1alpha1).")
@click.option("--kind", required=True, help="Kind, CamelCase (e.g. Memcached).")
@click.option("--cluster-scoped", is_flag=True, help="A cluster-scoped resource.")
@click.option(
    "--directory",
    type=click.Path(file_okay=False),
    default=".",
    help="The project's directory.",
    show_default=True,
)
def create_api_command(
    group: str, api_version: str, kind: str, cluster_scoped: bool, directory: str
) -> None:  # fmt: skip
    """Add a typed resource, its reconciler and a test to the project.

    \b
    Example:
      setpoint create api --group cache --version v1alpha1 --kind Memcached
    """
    check_api(group, api_version, kind)
    from setpoint.cli.scaffold_ansible import create_ansible_api, is_ansible_project

    root = Path(directory)
    if is_ansible_project(root):
        create_ansible_api(root, group, api_version, kind, cluster_scoped)
        return
    _add_api(root, group, api_version, kind, cluster_scoped)
    click.echo("Next: make generate (the CRD and a sample in config/); make test")


def _add_api(root: Path, group: str, api_version: str, kind: str, cluster_scoped: bool) -> None:
    package, domain, _ = project_or_usage_error(root)
    kind_lower = kind.lower()
    values = {
        "package": package,
        "group": f"{group}.{domain}",
        "version": api_version,
        "kind": kind,
        "kind_lower": kind_lower,
        "plural": default_plural(kind),
        "scope": "Cluster" if cluster_scoped else "Namespaced",
    }
    created: list[str] = []
    write_file(root, f"{package}/api/{api_version}/__init__.py", "", created)
    write_file(root, f"{package}/api/{api_version}/{kind_lower}.py",
           Template(templates.MODEL).substitute(values), created)  # fmt: skip
    write_file(root, f"{package}/controllers/{kind_lower}.py",
           Template(templates.CONTROLLER).substitute(values), created)  # fmt: skip
    test_template = templates.TEST
    if cluster_scoped:
        test_template = test_template.replace(', "namespace": namespace}', "}").replace(
            ", namespace=namespace)", ")"
        )
    write_file(root, f"tests/test_{kind_lower}.py", Template(test_template).substitute(values),
           created)  # fmt: skip
    registry = root / package / "controllers" / "__init__.py"
    line = f"from {package}.controllers import {kind_lower} as {kind_lower}  # noqa: F401\n"
    text = registry.read_text() if registry.exists() else ""
    if line not in text:
        registry.write_text(text + line)
        click.echo(f"  updated  {package}/controllers/__init__.py")
    click.echo(f"{kind} ({group}.{domain}/{api_version}) added")


def _add_create_webhook() -> None:
    from setpoint.cli.scaffold_webhook import create_webhook_command

    create_group.add_command(create_webhook_command)


_add_create_webhook()
