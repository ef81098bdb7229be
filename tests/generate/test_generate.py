"""`setpoint generate`: least-privilege RBAC, kustomize layout, chart, determinism, errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import setpoint
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.cli.main import cli
from setpoint.cluster.apiserver.crds.validation import validate_crd
from setpoint.generate.rbac import role_rules

SAMPLE = Path(__file__).parent / "sample_project" / "foo_operator.py"


def _generate(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "config"
    result = CliRunner().invoke(cli, ["generate", str(SAMPLE), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_layout_is_kubebuilders_config(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    for expected in (
        "Dockerfile",
        "chart/Chart.yaml",
        "chart/values.yaml",
        "chart/crds/samplecontroller.k8s.io_foos.yaml",
        "crd/samplecontroller.k8s.io_foos.yaml",
        "default/kustomization.yaml",
        "manager/manager.yaml",
        "prometheus/monitor.yaml",
        "rbac/role.yaml",
        "rbac/leader_election_role.yaml",
        "samples/samplecontroller.k8s.io_v1alpha1_foo.yaml",
    ):
        assert expected in files


def test_regenerating_produces_no_diff(tmp_path: Path) -> None:
    first = _generate(tmp_path / "a")
    second = _generate(tmp_path / "b")
    for path in first.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path


def test_an_edited_sample_survives_generating_again(tmp_path: Path) -> None:
    # Samples are the user's from the first generation on (kubebuilder's are scaffolded once):
    # `make generate` and `setpoint dev` must not undo an edit.
    out = _generate(tmp_path)
    sample = out / "samples" / "samplecontroller.k8s.io_v1alpha1_foo.yaml"
    edited = sample.read_text().replace("example-deploymentname", "edited")
    assert edited != sample.read_text()
    sample.write_text(edited)
    (out / "samples" / "kustomization.yaml").write_text("stale\n")
    result = CliRunner().invoke(cli, ["generate", str(SAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "kept 1 existing sample(s)" in result.output
    assert sample.read_text() == edited
    assert (
        "samplecontroller.k8s.io_v1alpha1_foo.yaml"
        in (out / "samples/kustomization.yaml").read_text()
    )


def test_the_role_is_least_privilege(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    (role,) = _load(out / "rbac" / "role.yaml")
    assert role["kind"] == "ClusterRole"
    rules = {(r["apiGroups"][0], tuple(r["resources"])): r["verbs"] for r in role["rules"]}
    assert rules == {
        ("", ("events",)): ["create", "patch"],
        ("events.k8s.io", ("events",)): ["create", "patch"],
        ("", ("configmaps",)): ["get"],
        ("apps", ("deployments",)): [
            "get", "list", "watch", "create", "update", "patch", "delete"
        ],
        ("samplecontroller.k8s.io", ("foos",)): ["get", "list", "watch", "update", "patch"],
        ("samplecontroller.k8s.io", ("foos/status",)): ["get", "update", "patch"],
        ("samplecontroller.k8s.io", ("foos/finalizers",)): ["update"],
    }  # fmt: skip
    text = yaml.safe_dump(role)
    assert "'*'" not in text and "secrets" not in text
    (election,) = _load(out / "rbac" / "leader_election_role.yaml")
    assert election["kind"] == "Role"
    assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
            "verbs": ["get", "create", "update"]} in election["rules"]  # fmt: skip


def test_sensitive_grants_are_called_out_and_wildcards_refused() -> None:
    op = setpoint.Operator("secretive")

    @op.reconciler(
        for_=kinds.ConfigMap,
        owns=[kinds.Secret],
        permissions=[Permission("rbac.authorization.k8s.io", "roles", ["create"], reason="x")],
    )
    async def reconcile(ctx: Any, request: Any) -> None:
        return None

    rules = role_rules(op.declarations)
    notes = [note for rule in rules for note in rule.notes]
    assert any("owns Secret" in note for note in notes)
    assert any("create on roles: x" in note for note in notes)
    with pytest.raises(ValueError, match="wildcards are not allowed"):
        Permission("", "*", ["get"])


def test_namespaced_operators_get_a_role(tmp_path: Path) -> None:
    out = _generate(tmp_path, "--namespaced", "--namespace", "team-a")
    (role,) = _load(out / "rbac" / "role.yaml")
    (binding,) = _load(out / "rbac" / "role_binding.yaml")
    assert role["kind"] == "Role" and binding["kind"] == "RoleBinding"
    assert binding["subjects"][0]["namespace"] == "team-a"


def test_the_manager_deployment_is_hardened_and_probed(tmp_path: Path) -> None:
    out = _generate(tmp_path, "--image", "ghcr.io/me/foo:1.2.3", "--run-target", "foo.operator")
    namespace, deployment = _load(out / "manager" / "manager.yaml")
    assert namespace["kind"] == "Namespace"
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "ghcr.io/me/foo:1.2.3"
    assert container["args"][:2] == ["run", "foo.operator"]
    assert "--leader-elect" in container["args"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    security = container["securityContext"]
    assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"]
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["resources"]["limits"] and container["resources"]["requests"]
    dockerfile = (out / "Dockerfile").read_text()
    assert "USER 65532" in dockerfile and 'ENTRYPOINT ["setpoint"]' in dockerfile
    values = yaml.safe_load((out / "chart" / "values.yaml").read_text())
    assert values["image"] == {"repository": "ghcr.io/me/foo", "tag": "1.2.3",
                               "pullPolicy": "IfNotPresent"}  # fmt: skip


def test_every_generated_crd_is_structural_and_the_sample_fits_it(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    (crd,) = _load(out / "crd" / "samplecontroller.k8s.io_foos.yaml")
    assert validate_crd({**crd, "status": {"storedVersions": ["v1alpha1"]}}) == []
    (sample,) = _load(out / "samples" / "samplecontroller.k8s.io_v1alpha1_foo.yaml")
    assert sample["kind"] == "Foo" and sample["spec"]["deploymentName"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_the_default_overlay(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(out / "default")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    documents = [doc for doc in yaml.safe_load_all(rendered) if doc]
    by_kind = {doc["kind"]: doc for doc in documents}
    assert by_kind["Deployment"]["metadata"] == {
        "labels": {"app.kubernetes.io/name": "foo-operator", "control-plane": "controller-manager"},
        "name": "foo-operator-controller-manager",
        "namespace": "foo-operator-system",
    }
    assert by_kind["ClusterRoleBinding"]["subjects"][0] == {
        "kind": "ServiceAccount",
        "name": "foo-operator-controller-manager",
        "namespace": "foo-operator-system",
    }
    assert by_kind["CustomResourceDefinition"]["metadata"]["name"] == "foos.samplecontroller.k8s.io"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz", "no module named 'no_such_module_xyz'"),
        ("missing_file.py", "no such file"),
    ],
)
def test_errors_are_one_line_usage_errors(tmp_path: Path, target: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["generate", target, "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_model_that_cannot_be_structural_is_a_one_line_error(tmp_path: Path) -> None:
    source = tmp_path / "bad_operator.py"
    source.write_text(
        "from pydantic import BaseModel\n"
        "import setpoint\n"
        "from setpoint.api.resources import CustomResource\n"
        "class Spec(BaseModel):\n"
        "    value: int | list[str]\n"
        "class Odd(CustomResource, group='o.example.com', version='v1', kind='Odd'):\n"
        "    spec: Spec\n"
        "op = setpoint.Operator('odd')\n"
        "@op.reconciler(for_=Odd)\n"
        "async def reconcile(ctx, request):\n"
        "    return None\n"
    )
    result = CliRunner().invoke(cli, ["generate", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "Odd: spec.value: a union of array | integer is not structural" in result.output


GOLDEN = Path(__file__).parent / "golden"


def test_generated_files_match_the_golden_copies(tmp_path: Path) -> None:
    """Every generated file (CRD, RBAC, kustomize, chart, Dockerfile, samples, bundle) equals
    its reviewed copy under tests/generate/golden/. After an intended change, regenerate them
    with `SETPOINT_UPDATE_GOLDEN=1 pytest tests/generate` and review the diff."""
    out = tmp_path / "out"
    for args in (
        ["generate", str(SAMPLE), "-o", str(out / "config"), "--run-target", "foo.operator"],
        ["generate", "bundle", str(SAMPLE), "-o", str(out / "bundle"),
         "--run-target", "foo.operator"],
    ):  # fmt: skip
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    produced = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}
    if os.environ.get("SETPOINT_UPDATE_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for path, text in produced.items():
            (GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / path).write_text(text)
    golden = {str(p.relative_to(GOLDEN)): p.read_text() for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(golden)
    for path, text in produced.items():
        assert text == golden[path], f"{path} differs from tests/generate/golden/{path}"


def test_a_model_without_a_group_is_a_one_line_error(tmp_path: Path) -> None:
    source = tmp_path / "nogroup_operator.py"
    source.write_text(
        "from setpoint.api.resources import CustomResource\n"
        "class Thing(CustomResource, version='v1', kind='Thing'):\n"
        "    spec: dict[str, int] = {}\n"
    )
    result = CliRunner().invoke(cli, ["generate", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "custom resource Thing: the class statement must give group=..." in result.output
    assert "Traceback" not in result.output


def test_generate_counts_one_crd_for_the_versions_of_a_kind(tmp_path: Path) -> None:
    project = Path(__file__).resolve().parents[2] / "examples" / "cronjob"
    result = CliRunner().invoke(cli, ["generate", str(project), "-o", str(tmp_path / "config")])
    assert result.exit_code == 0, result.output
    assert "(1 CRDs)" in result.output
    assert len(list((tmp_path / "config" / "crd").glob("batch.*.yaml"))) == 1
