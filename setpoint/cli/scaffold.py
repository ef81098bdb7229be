"""``setpoint init`` and ``setpoint create api``: a ready project, then typed resources in it.

``init NAME`` writes a project whose ``make test`` passes at once (against the local cluster,
offline) and whose ``make generate`` writes valid manifests; ``create api`` adds a typed
resource, a reconciler that marks it Ready, a sample (through ``make generate``) and a test
that uses the testing kit. Existing files are never overwritten.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from string import Template

import click

from setpoint import __version__
from setpoint.api.resources.custom_resource import default_plural
from setpoint.cli import scaffold_templates as templates

__all__ = ["create_api_command", "init_command", "setpoint_requirement"]

_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_GROUP = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def setpoint_requirement(extra: str = "") -> str:
    """How the new project's pyproject names setpoint: this checkout when it is one (so the
    project installs offline), else the released version."""
    package_dir = Path(__file__).resolve().parents[1]
    checkout = package_dir.parent
    name = f"setpoint[{extra}]" if extra else "setpoint"
    if (checkout / "pyproject.toml").is_file() and (checkout / "setpoint").is_dir():
        return f"{name} @ {checkout.as_uri()}"
    return f"{name}>={__version__}"


def _write(root: Path, path: str, text: str, created: list[str]) -> None:
    destination = root / path
    if destination.exists():
        click.echo(f"  kept     {path} (exists)")
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text)
    created.append(path)
    click.echo(f"  created  {path}")


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
    "--plugin",
    type=click.Choice(["python", "ansible"]),
    default="python",
    show_default=True,
    help="python: a Python operator; ansible: Operator SDK's Ansible layout (watches.yaml, "
    "roles/, playbooks/).",
)
def init_command(
    name: str, domain: str, namespaced: bool, directory: str | None, plugin: str = "python"
) -> None:
    """Create a ready operator project called NAME.

    \b
    Example:
      setpoint init memcached-operator --domain example.com
      cd memcached-operator
      setpoint create api --group cache --version v1alpha1 --kind Memcached
      make test
    """
    if not _NAME.match(name):
        raise click.UsageError(
            f"NAME {name!r} must be a lower-case DNS label (letters, digits, '-'), e.g. my-operator"
        )
    if "." not in domain:
        raise click.UsageError(f"--domain {domain!r} must contain a dot, e.g. example.com")
    root = Path(directory or name)
    if root.exists() and any(root.iterdir()):
        raise click.UsageError(
            f"{root}/ exists and is not empty: choose another NAME or --directory"
        )
    if plugin == "ansible":
        from setpoint.cli.scaffold_ansible import init_ansible_project

        init_ansible_project(root, name, domain, namespaced)
        return
    package = name.replace("-", "_")
    values = {
        "name": name,
        "package": package,
        "domain": domain,
        "namespaced": "true" if namespaced else "false",
        "generate_flags": " --namespaced" if namespaced else "",
        "setpoint_requirement": setpoint_requirement(),
        "setpoint_testing_requirement": setpoint_requirement("testing"),
    }
    files = {
        "pyproject.toml": templates.PYPROJECT,
        "Makefile": templates.MAKEFILE,
        "README.md": templates.README,
        ".gitignore": templates.GITIGNORE,
        ".github/workflows/test.yaml": templates.CI_WORKFLOW,
        f"{package}/__init__.py": templates.PACKAGE_INIT,
        f"{package}/operator.py": templates.OPERATOR,
        f"{package}/api/__init__.py": templates.API_INIT,
        f"{package}/controllers/__init__.py": templates.CONTROLLERS_INIT,
        "tests/__init__.py": templates.TESTS_INIT,
        "tests/conftest.py": templates.CONFTEST,
    }
    click.echo(f"Creating {root}/")
    created: list[str] = []
    for path, text in files.items():
        _write(root, path, Template(text).substitute(values), created)
    click.echo(
        f"Next: cd {root} && setpoint create api --group GROUP --version v1 --kind KIND "
        "&& make test"
    )


def _project(root: Path) -> tuple[str, str, bool]:
    pyproject = root / "pyproject.toml"
    try:
        settings = tomllib.loads(pyproject.read_text())["tool"]["setpoint"]
        return str(settings["package"]), str(settings["domain"]), bool(settings["namespaced"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        raise click.UsageError(
            f"{pyproject} has no [tool.setpoint] section: run `setpoint create api` in a "
            "project made by `setpoint init`"
        ) from None


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
    problems = []
    if not _GROUP.match(group):
        problems.append(f"--group {group!r} must be a lower-case DNS label (e.g. cache)")
    if not _VERSION.match(api_version):
        problems.append(f"--version {api_version!r} must look like v1, v1beta1, v1alpha2")
    if not _KIND.match(kind):
        problems.append(f"--kind {kind!r} must be CamelCase starting with a capital (e.g. Site)")
    if problems:
        raise click.UsageError("; ".join(problems))
    root = Path(directory)
    from setpoint.cli.scaffold_ansible import create_ansible_api, is_ansible_project

    if is_ansible_project(root):
        create_ansible_api(root, group, api_version, kind, cluster_scoped)
        return
    package, domain, _ = _project(root)
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
    _write(root, f"{package}/api/{api_version}/__init__.py", "", created)
    _write(root, f"{package}/api/{api_version}/{kind_lower}.py",
           Template(templates.MODEL).substitute(values), created)  # fmt: skip
    _write(root, f"{package}/controllers/{kind_lower}.py",
           Template(templates.CONTROLLER).substitute(values), created)  # fmt: skip
    test_template = templates.TEST
    if cluster_scoped:
        test_template = test_template.replace(', "namespace": namespace}', "}").replace(
            ", namespace=namespace)", ")"
        )
    _write(root, f"tests/test_{kind_lower}.py", Template(test_template).substitute(values),
           created)  # fmt: skip
    registry = root / package / "controllers" / "__init__.py"
    line = f"from {package}.controllers import {kind_lower} as {kind_lower}  # noqa: F401\n"
    text = registry.read_text() if registry.exists() else ""
    if line not in text:
        registry.write_text(text + line)
        click.echo(f"  updated  {package}/controllers/__init__.py")
    click.echo(f"{kind} ({group}.{domain}/{api_version}) added. Next: make test; make generate")
