"""Generated config on the local cluster: `kubectl apply -k` with default flags, then the
operator (typed, from the same module) reconciles the generated sample."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.client import Client
from setpoint.testing import run_operator, wait_for
from setpoint.testing.background_cluster import BackgroundCluster
from tests.generate.sample_project.foo_operator import Foo, op

SAMPLE = Path(__file__).parent / "sample_project" / "foo_operator.py"

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


def _kubectl(kubeconfig: Path, *args: str) -> str:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_apply_k_then_the_operator_reconciles_the_sample(
    local_cluster: BackgroundCluster, client: Client, namespace: str, tmp_path: Path
) -> None:
    out = tmp_path / "config"
    result = CliRunner().invoke(cli, ["generate", str(SAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    kubeconfig = local_cluster.kubeconfig_path
    applied = _kubectl(kubeconfig, "apply", "-k", str(out / "default"))
    assert "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io" in applied
    assert "clusterrole.rbac.authorization.k8s.io/foo-operator-manager-role created" in applied
    await wait_for(
        lambda: client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                           "foos.samplecontroller.k8s.io"),
        lambda crd: any(c["type"] == "Established" and c["status"] == "True"
                        for c in crd.get("status", {}).get("conditions", [])),
    )  # fmt: skip
    _kubectl(kubeconfig, "apply", "-n", namespace, "-k", str(out / "samples"))
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        foo = await wait_for(
            lambda: client.get(Foo, "foo-sample", namespace=namespace),
            lambda foo: foo.status is not None and foo.status.available_replicas == 1,
        )
    assert isinstance(foo, Foo)
