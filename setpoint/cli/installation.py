"""How this setpoint was installed, and so how a project made by ``setpoint init`` depends on it.

A new project must install wherever its author's setpoint did. Pip records the origin of every
installation (PEP 610's ``direct_url.json``): none for a package index, the file for a wheel, the
directory for a checkout (editable or not). From an index the project asks for a version range;
from a wheel, the wheel is copied into the project's ``wheels/`` directory, which its Makefile
and Dockerfile give pip with ``--find-links``; from a checkout, a wheel is built from it first.
``setpoint init --setpoint-spec SPEC`` overrides all of this (a requirement, or a wheel's path).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from setpoint import __version__

__all__ = [
    "INDEX_ORIGIN",
    "WHEELS_DIRECTORY",
    "InstallationError",
    "SetpointDependency",
    "build_wheel",
    "dependency_from_spec",
    "installed_dependency",
    "version_range",
]

#: The origin of an installation pip recorded no URL for: an index, or a wheel found by name
#: (--find-links), which cannot be told apart.
INDEX_ORIGIN = "a package index"
#: Where a project keeps the setpoint wheel it installs from (given to pip as --find-links).
WHEELS_DIRECTORY = "wheels"


# "setpoint", then nothing or what may follow a name in a requirement (extras, a version
# specifier, a URL, markers); "setpoint-0.1.0-py3-none-any.whl" is a file name instead.
_REQUIREMENT = re.compile(r"^setpoint\s*($|[\[@=<>!~;(])", re.IGNORECASE)


class InstallationError(Exception):
    """The running setpoint cannot be turned into a dependency a project can install."""


@dataclass(frozen=True)
class SetpointDependency:
    """What a project's pyproject names (``requirement``, without extras) and, when setpoint
    is on no index, the wheel to copy into the project (``wheel``). ``origin`` says where the
    choice came from, for the user."""

    requirement: str
    wheel: Path | None
    origin: str

    def with_extra(self, extra: str) -> str:
        """The requirement with ``[extra]`` after the distribution name."""
        name, rest = _split_name(self.requirement)
        return f"{name}[{extra}]{rest}"


def _split_name(requirement: str) -> tuple[str, str]:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    end = match.end() if match else 0
    return requirement[:end], requirement[end:]


def version_range(version: str = __version__) -> str:
    """``setpoint>=X.Y.Z,<X.(Y+1)``: any compatible release from an index (0.x releases may
    change the API at each minor, so the range stops before the next one)."""
    parts = version.split(".")
    major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f"setpoint>={version},<{upper}"


def _pinned(wheel: Path, origin: str) -> SetpointDependency:
    # The wheel's own version, exactly: the project installs this build, not a newer one found
    # on an index under the same name.
    version = wheel.name.split("-")[1]
    return SetpointDependency(f"setpoint=={version}", wheel, origin)


def dependency_from_spec(spec: str) -> SetpointDependency:
    """``--setpoint-spec``: a wheel file (copied into the project) or a requirement, as is."""
    path = Path(spec).expanduser()
    if _REQUIREMENT.match(spec.strip()):
        return SetpointDependency(spec.strip(), None, "--setpoint-spec")
    if spec.endswith(".whl"):
        if not path.is_file():
            raise InstallationError(f"--setpoint-spec {spec!r}: no such wheel file")
        return _pinned(path.resolve(), f"the wheel {path.name}")
    raise InstallationError(
        f"--setpoint-spec {spec!r} must be a requirement of setpoint (e.g. 'setpoint==0.1.0', "
        "'setpoint @ https://...') or a path to a setpoint wheel"
    )


def _direct_url() -> dict[str, object] | None:
    try:
        text = metadata.distribution("setpoint").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    return json.loads(text) if text else None


def _checkout() -> Path | None:
    """The checkout this setpoint is imported from, if it is one."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "setpoint" / "__init__.py").is_file():
        return root
    return None


def build_wheel(source: Path, destination: Path) -> Path:
    """Build setpoint's wheel from the checkout ``source`` into ``destination`` (pip wheel)."""
    destination.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="setpoint-wheel-") as scratch:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
             "--disable-pip-version-check", "-w", scratch, str(source)],
            capture_output=True,
            text=True,
        )  # fmt: skip
        built = sorted(Path(scratch).glob("setpoint-*.whl"))
        if done.returncode != 0 or not built:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise InstallationError(
                f"building setpoint's wheel from {source} failed ({last}): pass --setpoint-spec "
                "with a wheel (python -m build) or a requirement pip can resolve"
            )
        target = destination / built[0].name
        shutil.copy2(built[0], target)
    return target


def installed_dependency(scratch: Path) -> SetpointDependency:
    """The dependency that resolves the way the running setpoint was installed; a wheel built
    from a checkout is written to ``scratch``."""
    direct = _direct_url()
    url = str(direct.get("url", "")) if direct else ""
    if direct is None and _checkout() is None:
        return SetpointDependency(version_range(), None, INDEX_ORIGIN)
    if url.startswith("file://"):
        path = Path(unquote(urlsplit(url).path))
        if path.suffix == ".whl" and path.is_file():
            return _pinned(path, f"the wheel {path}")
        if path.is_dir():
            wheel = build_wheel(path, scratch)
            return _pinned(wheel, f"a wheel built from the checkout {path}")
    if direct is not None and url and not url.startswith("file://"):
        # Installed from a URL (a VCS, an archive on a server): the same URL works again.
        vcs = direct.get("vcs_info")
        if isinstance(vcs, dict) and vcs.get("vcs"):
            url = f"{vcs['vcs']}+{url}@{vcs.get('commit_id') or vcs.get('requested_revision')}"
        return SetpointDependency(f"setpoint @ {url}", None, url)
    checkout = _checkout()
    if checkout is not None:
        wheel = build_wheel(checkout, scratch)
        return _pinned(wheel, f"a wheel built from the checkout {checkout}")
    raise InstallationError(
        f"setpoint was installed from {url or 'an unknown place'}, which a new project cannot "
        "install from: pass --setpoint-spec (a wheel's path or a requirement)"
    )
