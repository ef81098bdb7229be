"""Unpacking collections from the ansible wheel (a small stand-in wheel: no download)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from setpoint.ansible.install_collections import install_collections, installed_version


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        manifest = {
            "collection_info": {"namespace": "kubernetes", "name": "core", "version": "6.2.0"}
        }
        archive.writestr("ansible_collections/kubernetes/core/MANIFEST.json", json.dumps(manifest))
        archive.writestr("ansible_collections/kubernetes/core/plugins/modules/k8s.py", "# k8s\n")
        archive.writestr("ansible_collections/community/general/MANIFEST.json", "{}")
    return path


def test_only_the_collections_asked_for_are_unpacked(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "ansible-12.3.0-py3-none-any.whl")
    root = tmp_path / "site-packages"
    assert install_collections(("kubernetes.core",), root=root, wheel=wheel) == ["kubernetes.core"]
    assert installed_version("kubernetes.core", root) == "6.2.0"
    assert (root / "ansible_collections/kubernetes/core/plugins/modules/k8s.py").is_file()
    assert not (root / "ansible_collections/community").exists()


def test_a_collection_the_wheel_lacks(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "ansible-12.3.0-py3-none-any.whl")
    with pytest.raises(
        SystemExit, match=r"cloud\.common: not in ansible-12\.3\.0-py3-none-any\.whl"
    ):
        install_collections(("cloud.common",), root=tmp_path / "site", wheel=wheel)
