"""`setpoint install` / `uninstall`: the CRDs of a TARGET or a directory, on the current cluster."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.testing.background_cluster import BackgroundCluster

SAMPLE = Path(__file__).parent / "sample_project" / "foo_operator.py"
CRD = "customresourcedefinition/bars.install.example.com"
MODULE = """
from pydantic import BaseModel
from setpoint.api.resources import CustomResource
class Bar(CustomResource, group="install.example.com", version="v1", kind="Bar"):
    spec: dict[str, int] = {}
"""


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_install_twice_then_uninstall(local_cluster: BackgroundCluster, tmp_path: Path) -> None:
    kubeconfig = str(local_cluster.kubeconfig_path)
    target = tmp_path / "bar_models.py"
    target.write_text(MODULE)
    assert _run("install", str(target), "--kubeconfig", kubeconfig) == (0, f"{CRD} created\n")
    assert _run("install", str(target), "--kubeconfig", kubeconfig) == (0, f"{CRD} configured\n")
    assert _run("uninstall", str(target), "--kubeconfig", kubeconfig) == (0, f"{CRD} deleted\n")
    assert _run("uninstall", str(target), "--kubeconfig", kubeconfig) == (0, f"{CRD} not found\n")


def test_install_from_a_generated_directory(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    kubeconfig = str(local_cluster.kubeconfig_path)
    assert _run("generate", str(SAMPLE), "-o", str(tmp_path))[0] == 0
    assert _run("install", str(tmp_path / "crd"), "--kubeconfig", kubeconfig)[0] == 0


def test_install_a_project_directory_uses_its_models_not_its_config(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    """A project directory is a TARGET (as for run/generate/dev), even once `config/` (whose Helm
    templates are not YAML) has been generated inside it."""
    kubeconfig = str(local_cluster.kubeconfig_path)
    package = tmp_path / "bar_project" / "bar_operator"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(MODULE)
    (package / "operator.py").write_text(
        "import setpoint\nfrom bar_operator.models import Bar\n"
        "op = setpoint.Operator('bar-operator')\n"
        "@op.reconciler(for_=Bar)\nasync def reconcile(request): ...\n"
    )
    project = str(package.parent)
    assert _run("generate", project, "-o", str(package.parent / "config"))[0] == 0
    assert _run("install", project, "--kubeconfig", kubeconfig) == (0, f"{CRD} created\n")
    # A directory of projects too.
    assert _run("install", str(tmp_path), "--kubeconfig", kubeconfig) == (0, f"{CRD} configured\n")
    assert _run("uninstall", project, "--kubeconfig", kubeconfig) == (0, f"{CRD} deleted\n")


def test_no_cluster_reachable_is_one_line_exit_1(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    code, output = _run("install", str(SAMPLE), "--kubeconfig", str(kubeconfig))
    assert code == 1
    assert "cannot reach the API server at http://127.0.0.1:1" in output
    assert "Traceback" not in output
