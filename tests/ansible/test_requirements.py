"""requirements.yml: what it lists, what counts as installed, and installing the rest at start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("ansible_runner")

from setpoint.ansible.install_collections import installed_version
from setpoint.ansible.requirements import (
    Requirement,
    RequirementsError,
    ensure_requirements,
    missing_requirements,
    read_requirements,
    version_accepts,
)
from setpoint.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memcached-ansible"


def test_entries_are_read_in_galaxy_s_formats(tmp_path: Path) -> None:
    path = tmp_path / "requirements.yml"
    path.write_text(
        "collections:\n"
        "  - kubernetes.core:6.2.0\n"
        "  - name: community.general\n"
        "    version: '>=8.0.0,<9'\n"
        "  - name: https://example.com/ns-coll-1.0.0.tar.gz\n"
        "    type: url\n"
        "roles:\n"
        "  - name: geerlingguy.apache\n"
        "  - src: https://github.com/example/ansible-role-x.git\n"
    )
    entries = read_requirements(path)
    assert [(e.kind, e.name, e.version) for e in entries] == [
        ("collection", "kubernetes.core", "6.2.0"),
        ("collection", "community.general", ">=8.0.0,<9"),
        ("collection", "https://example.com/ns-coll-1.0.0.tar.gz", None),
        ("role", "geerlingguy.apache", None),
        ("role", "ansible-role-x", None),
    ]
    assert [e.from_galaxy for e in entries] == [True, True, False, True, False]
    (tmp_path / "old.yml").write_text("- src: geerlingguy.nginx\n")
    [role] = read_requirements(tmp_path / "old.yml")
    assert (role.kind, role.name) == ("role", "geerlingguy.nginx")


def test_a_bad_file_is_one_line_naming_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "requirements.yml"
    path.write_text("collections:\n  - version: 1.0.0\n")
    with pytest.raises(RequirementsError) as error:
        read_requirements(path)
    assert str(error.value) == f"{path}: collections[0]: name: required"


@pytest.mark.parametrize(
    ("spec", "version", "accepted"),
    [
        (None, "1.0.0", True),
        ("*", "1.0.0", True),
        ("6.2.0", "6.2.0", True),
        ("6.2.0", "6.2.1", False),
        ("==6.2.0", "6.2.0", True),
        (">=2.0.0,<7", "6.2.0", True),
        (">=2.0.0,<6", "6.2.0", False),
        ("!=6.2.0", "6.2.0", False),
    ],
)
def test_version_requirements(spec: str | None, version: str, accepted: bool) -> None:
    assert version_accepts(spec, version) is accepted


def test_what_ansible_finds_is_not_installed_again(tmp_path: Path) -> None:
    core = installed_version("kubernetes.core")
    assert core is not None  # make ansible-deps
    (tmp_path / "roles" / "local_role").mkdir(parents=True)
    entries = [
        Requirement("collection", "kubernetes.core", core, "kubernetes.core"),
        Requirement("collection", "kubernetes.core", f">{core}", "kubernetes.core"),
        Requirement("collection", "operator_sdk.util", "0.1.0", "operator_sdk.util"),
        Requirement("collection", "setpoint_test.absent", None, "setpoint_test.absent"),
        Requirement("role", "local_role", None, {"name": "local_role"}),
        Requirement("role", "setpoint_test.absent_role", None, "setpoint_test.absent_role"),
    ]
    assert missing_requirements(entries, tmp_path) == [entries[1], entries[3], entries[5]]


def test_the_example_s_requirements_are_met_without_galaxy() -> None:
    assert ensure_requirements(EXAMPLE) == []


def test_setpoint_run_stops_in_one_line_when_galaxy_cannot_install(tmp_path: Path) -> None:
    # Galaxy is out of reach here (no network, or no such collection): either way one line.
    project = tmp_path / "op"
    shutil.copytree(EXAMPLE, project)
    (project / "requirements.yml").write_text(
        "collections:\n  - name: kubernetes.core\n  - name: setpoint_test.absent\n"
        "    version: 1.0.0\n"
    )
    result = CliRunner().invoke(cli, ["run", str(project)])
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert line.startswith(
        f"Error: {project / 'requirements.yml'}: cannot install setpoint_test.absent:1.0.0: "
    )
    assert line.endswith(
        "(install with ansible-galaxy collection install, or python -m "
        "setpoint.ansible.install_collections NAME for those the ansible package bundles, or "
        "remove from the file)"
    )
