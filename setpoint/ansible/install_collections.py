"""``python -m setpoint.ansible.install_collections``: the ``kubernetes.core`` collection from PyPI.

Ansible Galaxy is not always reachable, and no PyPI package ships ``kubernetes.core`` alone. The
``ansible`` package bundles it with about a hundred other collections (a 54 MB wheel that
installs 21,000 files, 211 MB). This command downloads that wheel with pip (the pinned version,
through whatever index pip is configured for) and unpacks only the collections asked for (1 MB
for ``kubernetes.core``) into ``site-packages/ansible_collections``, where ``ansible-core`` finds
collections installed by pip. It does nothing when the collection is already there at that
version.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

__all__ = ["ANSIBLE_PACKAGE", "install_collections", "installed_version", "main"]

#: The ``ansible`` release whose bundled collections are used (it goes with ansible-core 2.19).
ANSIBLE_PACKAGE = "ansible==12.3.0"
DEFAULT_COLLECTIONS = ("kubernetes.core",)


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def installed_version(collection: str, root: Path | None = None) -> str | None:
    """The version of ``namespace.name`` installed under ``root`` (site-packages), or None."""
    namespace, name = collection.split(".")
    manifest = (
        (root or _site_packages()) / "ansible_collections" / namespace / name / "MANIFEST.json"
    )
    try:
        info = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = info.get("collection_info", {}).get("version")
    return version if isinstance(version, str) else None


def install_collections(
    collections: tuple[str, ...] = DEFAULT_COLLECTIONS,
    *,
    package: str = ANSIBLE_PACKAGE,
    root: Path | None = None,
    wheel: Path | None = None,
) -> list[str]:
    """Unpack ``collections`` from the ``ansible`` wheel; returns what was installed."""
    target = root or _site_packages()
    with tempfile.TemporaryDirectory(prefix="setpoint-collections-") as scratch:
        if wheel is None:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--only-binary=:all:",
                    "--dest",
                    scratch,
                    package,
                ],
                check=True,
            )
            wheel = next(Path(scratch).glob("ansible-*.whl"))
        installed: list[str] = []
        with zipfile.ZipFile(wheel) as archive:
            for collection in collections:
                namespace, name = collection.split(".")
                prefix = f"ansible_collections/{namespace}/{name}/"
                members = [member for member in archive.namelist() if member.startswith(prefix)]
                if not members:
                    raise SystemExit(f"{collection}: not in {wheel.name}")
                for member in members:
                    archive.extract(member, target)
                installed.append(collection)
        return installed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m setpoint.ansible.install_collections",
        description="Install Ansible collections (default: kubernetes.core) from the ansible "
        "package on PyPI into this Python environment.",
    )
    parser.add_argument("collections", nargs="*", default=list(DEFAULT_COLLECTIONS))
    parser.add_argument(
        "--package", default=ANSIBLE_PACKAGE, help="the ansible release to take them from"
    )
    parser.add_argument("--wheel", type=Path, help="an ansible wheel already downloaded")
    arguments = parser.parse_args(argv)
    wanted = tuple(arguments.collections)
    expected = "6.2.0" if arguments.package == ANSIBLE_PACKAGE else None
    missing = tuple(
        collection
        for collection in wanted
        if installed_version(collection) is None
        or (
            expected is not None
            and collection == "kubernetes.core"
            and installed_version(collection) != expected
        )
    )
    if not missing:
        return 0
    for collection in install_collections(
        missing, package=arguments.package, wheel=arguments.wheel
    ):
        print(f"installed {collection} {installed_version(collection)} into {_site_packages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
