"""``setpoint demo``: a local cluster, every example project's operator and samples, converging.

The examples here are scaffolded projects (``setpoint init`` + ``create api``, whose reconciler
sets ``Ready``), so these tests check the demo itself; ``make demo ARGS=--once`` on the real
examples is checked by ``tests/examples/test_demo_of_the_examples.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _setpoint(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "setpoint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "examples"
    root.mkdir()
    for name, kind in (("shop", "Site"), ("pets", "Pet")):
        assert _setpoint("init", name, "--domain", "example.org", cwd=root).returncode == 0
        project = root / name
        created = _setpoint("create", "api", "--group", "web", "--version", "v1", "--kind", kind,
                            cwd=project)  # fmt: skip
        assert created.returncode == 0, created.stderr
        generated = _setpoint("generate", ".", "-o", "config", cwd=project)
        assert generated.returncode == 0, generated.stderr
    return root


def test_once_exits_0_when_every_sample_converged(examples: Path) -> None:
    done = _setpoint("demo", str(examples), "--once", "--timeout", "150", cwd=examples.parent)
    assert done.returncode == 0, done.stderr
    assert "✓ Site/site-sample: Ready: Reconciled" in done.stdout
    assert "✓ Pet/pet-sample: Ready: Reconciled" in done.stdout
    assert "kubectl get pets,sites" in done.stdout or "kubectl get sites,pets" in done.stdout
    assert "everything converged" in done.stderr
    assert "stopping the operators and the cluster" in done.stderr


def test_once_names_what_did_not_converge(examples: Path, tmp_path: Path) -> None:
    broken = tmp_path / "examples"
    broken.mkdir()
    subprocess.run(["cp", "-r", str(examples / "shop"), str(broken)], check=True)
    controller = broken / "shop" / "shop" / "controllers" / "site.py"
    # A reconciler that never reports Ready.
    controller.write_text(controller.read_text().replace('"status": "True"', '"status": "False"'))
    done = _setpoint("demo", str(broken), "--once", "--timeout", "5", cwd=tmp_path)
    assert done.returncode == 1
    (reason,) = [line for line in done.stderr.splitlines() if "not converged" in line]
    # Still starting ("waiting") or reconciled without Ready: either way, named with its state.
    assert re.search(
        r"not converged within 5 s: Site/site-sample \((waiting|Ready: \w+)\)$", reason
    )


def test_a_directory_without_projects_is_a_one_line_error(tmp_path: Path) -> None:
    done = _setpoint("demo", str(tmp_path), "--once", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert "Traceback" not in done.stderr
