"""`setpoint dev` in a project made by `setpoint init`: it finds the project, applies the
samples once (and again only when a sample file changes), reloads the operator on a code
change without undoing the user's kubectl edits, says when it waits after a broken import,
and Ctrl-C to its process group ends it, everything it started and its temporary directory."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint.cli.main import cli
from tests.cli.stderr_lines import StderrLines

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


def _replicas(kubeconfig: str, cache: Path) -> str:
    return subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), "get", "website",
         "website-sample", "-n", "default", "-o", "jsonpath={.spec.replicas}"],
        capture_output=True, text=True, timeout=30,
    ).stdout  # fmt: skip


def _scaffold(tmp_path: Path) -> Path:
    project = tmp_path / "demo-op"
    result = CliRunner().invoke(cli, ["init", "demo-op", "--kind", "Website", "--directory",
                                      str(project), "--setpoint-spec", "setpoint"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return project


def test_dev_respects_the_users_edits_and_stops_with_its_group(tmp_path: Path) -> None:
    project = _scaffold(tmp_path)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(project)}
    process = subprocess.Popen(
        [sys.executable, "-m", "setpoint", "dev"],  # no TARGET: the project's operator
        cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
        # As a shell starts a background job (`setpoint dev &`): with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    output = StderrLines(process)
    cache = tmp_path / "kube-cache"
    try:
        export = output.until(r"export KUBECONFIG=")
        kubeconfig = export.rsplit("KUBECONFIG=", 1)[1].strip()
        output.until(r"samples applied from .*config/samples")
        running = output.until(r"operator running \(pid \d+\)")
        output.until(r"Website default/website-sample: Ready \(generation 1\)")

        # A live edit survives a code reload: the samples are not applied again.
        patched = subprocess.run(
            ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), "patch",
             "website", "website-sample", "-n", "default", "--type", "merge",
             "-p", '{"spec":{"replicas":3}}'],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert patched.returncode == 0, patched.stderr
        controller = project / "demo_op" / "controllers" / "website.py"
        source = controller.read_text()
        controller.write_text(source + "\n# edited\n")
        before_reload = len(output.lines)
        output.until(r"changed: website\.py; reloading")
        output.until(r"operator running")
        output.until(r"Website default/website-sample: Ready \(generation 2\)")
        assert not any("samples applied" in line for line in output.lines[before_reload:])
        assert _replicas(kubeconfig, cache) == "3"

        # An edited sample file is applied, as edited.
        sample = project / "config" / "samples" / "demo.example.com_v1alpha1_website.yaml"
        sample.write_text(sample.read_text().replace("replicas: 1", "replicas: 5"))
        output.until(r"samples applied")
        assert _replicas(kubeconfig, cache) == "5"

        # A broken import: one line saying what failed, then that it waits.
        controller.write_text(source + "\nimport no_such_module_here\n")
        output.until(r"CRDs not installed: .*no_such_module_here")
        output.until(r"waiting for a change under .*demo-op to try again")

        # Ctrl-C in a terminal: SIGINT to the whole process group.
        workdir = Path(kubeconfig).parent
        operator_pid = int(re.findall(r"pid (\d+)", running)[0])
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(10) == 0, "".join(output.lines)
        with pytest.raises(ProcessLookupError):
            os.kill(operator_pid, 0)
        assert not workdir.exists()
        leftovers = subprocess.run(["pgrep", "-f", str(workdir)], capture_output=True, text=True)
        assert leftovers.stdout == ""  # the local cluster is gone too
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_file_targets_work_in_a_scaffolded_project(tmp_path: Path) -> None:
    project = _scaffold(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "generate", "demo_op/operator.py", "-o", "out"],
        cwd=project, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project / "out" / "crd" / "demo.example.com_websites.yaml").is_file()
