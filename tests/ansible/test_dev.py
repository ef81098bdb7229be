"""`setpoint dev` in an Ansible operator's directory: a local cluster, the CRDs, the samples and
the operator; an edited role restarts it, and the sample is reconciled again with the role as
edited."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.stderr_lines import StderrLines

pytest.importorskip("ansible_runner")

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memcached-ansible"


def _deployment_label(kubeconfig: str, cache: Path) -> str:
    return subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), "get", "deployment",
         "memcached-sample-memcached", "-n", "default", "-o", "jsonpath={.metadata.labels.edited}"],
        capture_output=True, text=True, timeout=30,
    ).stdout  # fmt: skip


@pytest.mark.slow  # a cluster and an operator as processes, twice: about 25 s
@pytest.mark.timeout(300)
def test_dev_runs_an_ansible_project_and_reruns_it_when_a_role_changes(tmp_path: Path) -> None:
    project = tmp_path / "memcached-operator"
    shutil.copytree(EXAMPLE, project)
    role = project / "roles" / "memcached" / "tasks" / "main.yml"
    process = subprocess.Popen(
        [sys.executable, "-m", "setpoint", "dev"],  # no TARGET: the watches.yaml found here
        cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1",
             "SETPOINT_ANSIBLE_ARTIFACTS": str(tmp_path / "runs"),
             "ANSIBLE_GATHERING": "explicit"},  # the role's facts: a second per run
        start_new_session=True,
    )  # fmt: skip
    output = StderrLines(process, timeout=90)
    cache = tmp_path / "kube-cache"
    try:
        export = output.until(r"export KUBECONFIG=")
        kubeconfig = export.rsplit("KUBECONFIG=", 1)[1].strip()
        output.until(r"CRDs installed")
        output.until(r"samples applied from .*config/samples")
        output.until(r"operator running \(pid \d+\)")
        output.until(r"ansible run \w+ succeeded .*trigger: Memcached default/memcached-sample")
        assert _deployment_label(kubeconfig, cache) == ""

        # The role as edited runs for the sample once the operator is back.
        text = role.read_text()
        assert "      metadata:\n" in text
        role.write_text(text.replace("      metadata:\n", "      metadata:\n        labels:\n"
                                     "          edited: 'yes'\n", 1))  # fmt: skip
        output.until(r"changed: main\.yml; reloading")
        before = len(output.lines)
        output.until(r"operator running")
        output.until(r"ansible run \w+ succeeded .*trigger: Memcached default/memcached-sample")
        assert not any("samples applied" in line for line in output.lines[before:])
        assert _deployment_label(kubeconfig, cache) == "yes"

        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(30) == 0, "".join(output.lines)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
