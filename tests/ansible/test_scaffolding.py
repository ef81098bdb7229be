"""`setpoint init --plugin ansible` and `create api`: Operator SDK's layout, ready to run."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from setpoint.ansible.watches import load_watches
from setpoint.cli.main import cli


def test_init_and_create_api(tmp_path: Path) -> None:
    root = tmp_path / "memcached-operator"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["init", "memcached-operator", "--plugin", "ansible", "--directory", str(root)]
    )
    assert result.exit_code == 0, result.output
    for path in ("watches.yaml", "requirements.yml", "roles", "playbooks", "config/rbac/role.yaml"):
        assert (root / path).exists(), path
    result = runner.invoke(
        cli,
        ["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
         "--directory", str(root)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [watch] = load_watches(root)
    assert (watch.gvk.group, watch.gvk.version, watch.gvk.kind) == (
        "cache.example.com",
        "v1alpha1",
        "Memcached",
    )
    assert watch.role == str(root / "roles" / "memcached")
    assert (root / "roles/memcached/tasks/main.yml").is_file()
    crd = yaml.safe_load((root / "config/crd/bases/cache.example.com_memcacheds.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert schema["spec"]["x-kubernetes-preserve-unknown-fields"] is True
    assert schema["status"]["x-kubernetes-preserve-unknown-fields"] is True
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}
    role = yaml.safe_load((root / "config/rbac/role.yaml").read_text())
    assert {
        "apiGroups": ["cache.example.com"],
        "resources": ["memcacheds", "memcacheds/status", "memcacheds/finalizers"],
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    } in role["rules"]
    sample = yaml.safe_load(
        (root / "config/samples/cache.example.com_v1alpha1_memcached.yaml").read_text()
    )
    assert sample["kind"] == "Memcached"
    again = runner.invoke(
        cli,
        ["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
         "--directory", str(root)],
    )  # fmt: skip
    assert again.exit_code == 2
    assert "watches.yaml already has Memcached (cache.example.com)" in again.output
