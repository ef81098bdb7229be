"""`setpoint run` of a watches.yaml or of a directory holding one."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from setpoint.ansible import AnsibleOperator
from setpoint.cli.main import cli
from setpoint.cli.run import ansible_operators

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memcached-ansible"


def test_a_watches_file_or_its_directory_is_an_ansible_operator() -> None:
    for target in (EXAMPLE, EXAMPLE / "watches.yaml"):
        [operator] = ansible_operators(str(target)) or []
        assert isinstance(operator, AnsibleOperator)
        assert operator.name == "memcached-ansible"
        assert [watch.gvk.kind for watch in operator.watches] == ["Memcached"]
    assert ansible_operators(str(EXAMPLE / "roles")) is None  # not an Ansible operator


def test_an_invalid_watches_file_is_a_usage_error_naming_the_field(tmp_path: Path) -> None:
    (tmp_path / "watches.yaml").write_text(
        "- {version: v1alpha1, group: cache.example.com, kind: Memcached, role: memcached}\n"
    )
    result = CliRunner().invoke(cli, ["run", str(tmp_path)])
    assert result.exit_code == 2
    assert (
        "entry 1 (cache.example.com/v1alpha1, Kind=Memcached): role: memcached was not found"
        in (result.output)
    )
