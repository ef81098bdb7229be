"""What a project made by `setpoint init` is to the commands that add to it: its settings in
``pyproject.toml``, the names it may use, and how its files are written (an existing one is
kept). `create api`, `create webhook` and `init` share these.
"""

from __future__ import annotations

import builtins
import keyword
import re
import sys
import tomllib
from pathlib import Path

import click

__all__ = [
    "check_api",
    "identifier_problem",
    "project_or_usage_error",
    "project_settings",
    "write_file",
]

_GROUP = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


# Top-level modules a project made by `setpoint init` imports besides its own package.
_TOP_LEVEL_NAMES = frozenset({"setpoint", "tests", "conftest", "pydantic"})


def identifier_problem(name: str, what: str, *, top_level: bool) -> str | None:
    """Why ``name`` cannot be a generated Python module name, or None. A keyword breaks
    ``import name``. A top-level module (the project's package, on ``sys.path`` whenever the
    project runs) must not shadow the standard library or what the project imports; a module
    inside the package (a kind's) is imported by its full name, so only a builtin is shadowed
    (by the ``controllers`` package's import of it)."""
    if not name.isidentifier():
        return f"{what} {name!r} is not a Python identifier"
    if keyword.iskeyword(name):
        return f"{what} {name!r} is a Python keyword (`import {name}` cannot work)"
    if top_level and name in _TOP_LEVEL_NAMES:
        return f"{what} {name!r} would shadow the module {name!r} the project imports"
    if top_level and name in sys.stdlib_module_names:
        return f"{what} {name!r} would shadow the standard library module {name!r}"
    if hasattr(builtins, name):
        return f"{what} {name!r} would shadow the Python builtin {name!r}"
    return None


def write_file(root: Path, path: str, text: str, created: list[str]) -> None:
    """Write ``root/path`` unless it exists (then it is kept, and said so)."""
    destination = root / path
    if destination.exists():
        click.echo(f"  kept     {path} (exists)")
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text)
    created.append(path)
    click.echo(f"  created  {path}")


def project_settings(root: Path) -> tuple[str, str, bool] | None:
    """(package, domain, namespaced) of the project made by `setpoint init` at ``root``,
    or None when ``root`` holds none."""
    try:
        settings = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setpoint"]
        return str(settings["package"]), str(settings["domain"]), bool(settings["namespaced"])
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return None


def project_or_usage_error(root: Path) -> tuple[str, str, bool]:
    """(package, domain, namespaced) of the project at ``root``; a usage error without one."""
    settings = project_settings(root)
    if settings is None:
        raise click.UsageError(
            f"{root / 'pyproject.toml'} has no [tool.setpoint] section: run `setpoint create "
            "api` in a project made by `setpoint init`"
        )
    return settings


def check_api(group: str, api_version: str, kind: str) -> None:
    problems = []
    if not _GROUP.match(group):
        problems.append(f"--group {group!r} must be a lower-case DNS label (e.g. cache)")
    if not _VERSION.match(api_version):
        problems.append(f"--version {api_version!r} must look like v1, v1beta1, v1alpha2")
    if not _KIND.match(kind):
        problems.append(f"--kind {kind!r} must be CamelCase starting with a capital (e.g. Site)")
    else:
        problem = identifier_problem(kind.lower(), f"--kind {kind!r}: its module", top_level=False)
        if problem is not None:
            problems.append(f"{problem}; choose another kind")
    if problems:
        raise click.UsageError("; ".join(problems))
