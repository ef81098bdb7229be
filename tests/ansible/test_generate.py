"""`setpoint generate` of an Ansible operator: CRDs (open, or the project's own), the Role with
the project's rules, a Dockerfile that runs the watches.yaml."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from setpoint.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memcached-ansible"


def test_generate_the_tutorial(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["generate", str(EXAMPLE), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    crd = (tmp_path / "crd" / "cache.example.com_memcacheds.yaml").read_text()
    # the project's own CRD is kept as written
    assert crd == (EXAMPLE / "config/crd/bases/cache.example.com_memcacheds.yaml").read_text()
    role = yaml.safe_load((tmp_path / "rbac" / "role.yaml").read_text())
    assert {
        "apiGroups": ["apps"],
        "resources": ["deployments"],
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    } in role["rules"]
    assert any("memcacheds/status" in rule["resources"] for rule in role["rules"])
    dockerfile = (tmp_path / "Dockerfile").read_text()
    assert "pip install --no-cache-dir 'setpoint[ansible]'" in dockerfile
    assert 'CMD ["run", "/opt/ansible", "--leader-elect"' in dockerfile


def test_an_open_crd_when_the_project_has_none(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "roles" / "gadget" / "tasks").mkdir(parents=True)
    (project / "watches.yaml").write_text(
        "- {version: v1, group: test.setpoint.dev, kind: Gadget, role: gadget}\n"
        "- {version: v1, group: '', kind: Secret, role: gadget}\n"
    )
    result = CliRunner().invoke(cli, ["generate", str(project), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    [crd_file] = sorted((tmp_path / "out" / "crd").glob("*_*.yaml"))
    assert crd_file.name == "test.setpoint.dev_gadgets.yaml"  # no CRD for the built-in Secret
    crd = yaml.safe_load(crd_file.read_text())
    properties = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert properties["spec"]["x-kubernetes-preserve-unknown-fields"] is True
    assert properties["status"]["x-kubernetes-preserve-unknown-fields"] is True
