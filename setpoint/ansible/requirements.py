"""The project's ``requirements.yml``: Ansible collections and roles, installed at start.

Operator SDK's image runs ``ansible-galaxy collection install -r requirements.yml`` (and ``role
install``) when it is built. ``setpoint run`` does it when the operator starts, and only for
what is missing, so that a machine without Galaxy (CI, an air-gapped cluster) runs a project
whose requirements are already installed:

- a collection counts as installed when Ansible would find it (setpoint's own
  ``operator_sdk.util``, ``ANSIBLE_COLLECTIONS_PATH`` or its defaults, or an
  ``ansible_collections`` directory on ``sys.path``, where pip-installed collections are) at a
  version the entry accepts (``version: "6.2.0"``, ``">=2.0,<7"``, ``"*"``);
  ``operator_sdk.util`` is always setpoint's (runs find it first);
- a role counts as installed when a directory of its name is in ``ANSIBLE_ROLES_PATH`` or its
  defaults, or in the project's ``roles/``;
- an entry that names a file, a URL or a git repository (``type:`` or ``source`` other than a
  Galaxy server) is always given to ``ansible-galaxy``.

The missing entries go to ``ansible-galaxy collection install -r`` / ``role install -r``; when
that fails (no network, an unknown version) :class:`RequirementsError` says which entries and
why, in one line.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from packaging.version import InvalidVersion, Version

__all__ = [
    "GALAXY_TIMEOUT_SECONDS",
    "Requirement",
    "RequirementsError",
    "ensure_requirements",
    "installed_collections",
    "missing_requirements",
    "read_requirements",
    "version_accepts",
]

log = logging.getLogger("setpoint.ansible.requirements")

#: An upper bound for one ``ansible-galaxy`` install (downloads included).
GALAXY_TIMEOUT_SECONDS = 600.0
_ALWAYS_SETPOINTS = {"operator_sdk.util"}
_OPERATORS = ("==", "!=", ">=", "<=", ">", "<", "=")


class RequirementsError(RuntimeError):
    """requirements.yml is invalid or what it lists cannot be installed (one line)."""


@dataclass(frozen=True)
class Requirement:
    """One entry: a collection or a role, as written (``raw`` goes to ansible-galaxy)."""

    kind: str  # "collection" or "role"
    name: str
    version: str | None
    raw: Any

    @property
    def from_galaxy(self) -> bool:
        """False for entries that name a file, a URL or a git repository."""
        if not isinstance(self.raw, Mapping):
            return "/" not in self.name and "://" not in self.name
        kind = self.raw.get("type")
        if kind not in (None, "galaxy"):
            return False
        source = str(self.raw.get("src") or self.raw.get("source") or "")
        if self.kind == "role" and source and ("/" in source or "://" in source):
            return False
        return "/" not in self.name and "://" not in self.name

    def __str__(self) -> str:
        return f"{self.name}:{self.version}" if self.version else self.name


def read_requirements(path: Path) -> list[Requirement]:
    """The entries of a requirements.yml (Galaxy's format: ``collections:`` and ``roles:``, or
    the older list of roles)."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RequirementsError(f"{path}: cannot read it: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise RequirementsError(f"{path}: not valid YAML: {problem}") from None
    if document is None:
        return []
    if isinstance(document, list):
        document = {"roles": document}
    if not isinstance(document, Mapping):
        raise RequirementsError(f"{path}: must be a mapping with collections: and roles:")
    requirements: list[Requirement] = []
    for key, kind in (("collections", "collection"), ("roles", "role")):
        entries = document.get(key) or []
        if not isinstance(entries, list):
            raise RequirementsError(f"{path}: {key}: must be a list")
        for index, entry in enumerate(entries):
            requirements.append(_entry(path, key, index, kind, entry))
    return requirements


def _entry(path: Path, key: str, index: int, kind: str, entry: Any) -> Requirement:
    where = f"{path}: {key}[{index}]"
    if isinstance(entry, str):
        text, _, pinned = entry.partition(":") if kind == "collection" else (entry, "", "")
        return Requirement(kind, text.strip(), pinned.strip() or None, entry)
    if not isinstance(entry, Mapping):
        raise RequirementsError(f"{where}: must be a name or a mapping with name:")
    given = entry.get("name") or entry.get("src")
    if not isinstance(given, str) or not given:
        raise RequirementsError(f"{where}: name: required")
    name = given if kind == "collection" or entry.get("name") else _role_name_from_source(given)
    version = entry.get("version")
    return Requirement(kind, name, None if version is None else str(version), dict(entry))


def _role_name_from_source(source: str) -> str:
    name = source.rstrip("/").rsplit("/", 1)[-1].rsplit(",", 1)[0]
    for suffix in (".tar.gz", ".tgz", ".git"):
        name = name.removesuffix(suffix)
    return name


def version_accepts(spec: str | None, version: str) -> bool:
    """Galaxy's version requirement (``1.2.3``, ``>=1.0,<2.0``, ``!=1.1``, ``*``)."""
    if spec is None or spec.strip() in ("", "*"):
        return True
    try:
        have = Version(version)
    except InvalidVersion:
        return spec.strip().lstrip("=") == version
    for part in spec.split(","):
        part = part.strip()
        operator = next((op for op in _OPERATORS if part.startswith(op)), "==")
        wanted_text = part[len(operator) :].strip() if part.startswith(operator) else part
        try:
            wanted = Version(wanted_text)
        except InvalidVersion:
            return False
        accepted = {
            "==": have == wanted,
            "=": have == wanted,
            "!=": have != wanted,
            ">=": have >= wanted,
            "<=": have <= wanted,
            ">": have > wanted,
            "<": have < wanted,
        }[operator]
        if not accepted:
            return False
    return True


def _collection_roots() -> list[Path]:
    configured = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or os.environ.get(
        "ANSIBLE_COLLECTIONS_PATHS"
    )
    paths = (
        configured.split(os.pathsep)
        if configured
        else [str(Path.home() / ".ansible" / "collections"), "/usr/share/ansible/collections"]
    )
    roots = [Path(path) for path in paths if path]
    roots.extend(Path(entry) for entry in sys.path if entry)
    return roots


def installed_collections(roots: Iterable[Path] | None = None) -> dict[str, str]:
    """``namespace.name`` -> version of the collections Ansible finds (the first one wins)."""
    found: dict[str, str] = {}
    for root in roots if roots is not None else _collection_roots():
        base = root / "ansible_collections"
        if not base.is_dir():
            continue
        for manifest in sorted(base.glob("*/*/MANIFEST.json")):
            name = f"{manifest.parent.parent.name}.{manifest.parent.name}"
            if name in found:
                continue
            try:
                info = json.loads(manifest.read_text(encoding="utf-8"))
                version = str(info["collection_info"]["version"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            found[name] = version
    return found


def _role_roots(project: Path) -> list[Path]:
    configured = os.environ.get("ANSIBLE_ROLES_PATH")
    paths = (
        configured.split(os.pathsep)
        if configured
        else [
            str(Path.home() / ".ansible" / "roles"),
            "/usr/share/ansible/roles",
            "/etc/ansible/roles",
        ]
    )
    return [Path(path) for path in paths if path] + [project / "roles"]


def missing_requirements(requirements: Sequence[Requirement], project: Path) -> list[Requirement]:
    """The entries Ansible would not find installed."""
    collections = installed_collections()
    roles = _role_roots(project)
    missing: list[Requirement] = []
    for requirement in requirements:
        if not requirement.from_galaxy:
            missing.append(requirement)
        elif requirement.kind == "collection":
            if requirement.name in _ALWAYS_SETPOINTS:
                continue
            version = collections.get(requirement.name)
            if version is None or not version_accepts(requirement.version, version):
                missing.append(requirement)
        elif not any((root / requirement.name).is_dir() for root in roles):
            missing.append(requirement)
    return missing


def _galaxy() -> str:
    beside = Path(sys.executable).parent / "ansible-galaxy"
    if beside.is_file():
        return str(beside)
    found = shutil.which("ansible-galaxy")
    if found is None:
        raise RequirementsError(
            "requirements.yml: ansible-galaxy was not found (it comes with ansible-core: "
            "pip install 'setpoint[ansible]')"
        )
    return found


def _last_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("ERROR!", "[ERROR]"))]
    line = (errors or lines or ["no output"])[-1]
    return line.removeprefix("ERROR! ").removeprefix("[ERROR]: ").strip()


def _install(kind: str, entries: Sequence[Requirement], source: Path) -> None:
    key = "collections" if kind == "collection" else "roles"
    with tempfile.TemporaryDirectory(prefix="setpoint-requirements-") as scratch:
        file = Path(scratch) / "requirements.yml"
        file.write_text(yaml.safe_dump({key: [entry.raw for entry in entries]}))
        command = [_galaxy(), kind, "install", "-r", str(file)]
        log.info("installing from %s: %s", source, " ".join(map(str, entries)))
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=GALAXY_TIMEOUT_SECONDS,
                cwd=source.parent,
                check=False,
            )
        except subprocess.TimeoutExpired:
            reason = f"ansible-galaxy did not finish in {GALAXY_TIMEOUT_SECONDS:g}s"
        else:
            if done.returncode == 0:
                return
            reason = _last_error(done.stderr + "\n" + done.stdout)
    names = ", ".join(map(str, entries))
    how = (
        "ansible-galaxy collection install, or python -m setpoint.ansible.install_collections "
        "NAME for those the ansible package bundles"
        if kind == "collection"
        else "ansible-galaxy role install"
    )
    raise RequirementsError(
        f"{source}: cannot install {names}: {reason} (install with {how}, or remove from the file)"
    )


def ensure_requirements(project: Path) -> list[Requirement]:
    """Install what ``project``/requirements.yml lists and Ansible would not find; returns
    what was installed. No file: nothing to do."""
    source = project / "requirements.yml"
    if not source.is_file():
        return []
    missing = missing_requirements(read_requirements(source), project)
    for kind in ("collection", "role"):
        entries = [entry for entry in missing if entry.kind == kind]
        if entries:
            _install(kind, entries, source)
    return missing
