"""`setpoint init` and `setpoint create api`: a project whose own tests pass and whose
generated manifests are valid, offline, against the local cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.cluster.apiserver.crds.validation import validate_crd


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.slow
def test_init_create_api_test_generate(tmp_path: Path) -> None:
    project = tmp_path / "shop-operator"
    code, output = _invoke("init", "shop-operator", "--domain", "example.org",
                           "--directory", str(project))  # fmt: skip
    assert code == 0, output
    expected = (
        "pyproject.toml", "Makefile", "README.md", ".gitignore", ".github/workflows/test.yaml",
        "shop_operator/operator.py", "tests/conftest.py",
    )  # fmt: skip
    for path in expected:
        assert (project / path).is_file(), path
    makefile = (project / "Makefile").read_text()
    for target in ("test:", "run:", "dev:", "generate:", "install:", "uninstall:", "deploy:",
                   "docker-build:", "bundle:"):  # fmt: skip
        assert f"\n{target}" in makefile, target
    code, output = _invoke("create", "api", "--group", "web", "--version", "v1", "--kind", "Site",
                           "--directory", str(project))  # fmt: skip
    assert code == 0, output
    assert "Site (web.example.org/v1) added" in output

    # The project's own tests, with this environment's setpoint (no install, no network).
    env = {**os.environ, "PYTHONPATH": str(project)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider"],
        cwd=project, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout

    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "generate", "shop_operator.operator", "-o", "config"],
        cwd=project, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (crd,) = yaml.safe_load_all((project / "config/crd/web.example.org_sites.yaml").read_text())
    assert validate_crd({**crd, "status": {"storedVersions": ["v1"]}}) == []


def test_create_api_twice_keeps_the_users_edits(tmp_path: Path) -> None:
    project = tmp_path / "p"
    assert _invoke("init", "p-op", "--directory", str(project),
                   "--setpoint-spec", "setpoint")[0] == 0  # fmt: skip
    args = ("create", "api", "--group", "g", "--version", "v1", "--kind", "K",
            "--directory", str(project))  # fmt: skip
    assert _invoke(*args)[0] == 0
    model = project / "p_op/api/v1/k.py"
    model.write_text(model.read_text() + "# edited\n")
    code, output = _invoke(*args)
    assert code == 0 and "kept     p_op/api/v1/k.py (exists)" in output
    assert model.read_text().endswith("# edited\n")
    registry = (project / "p_op/controllers/__init__.py").read_text()
    assert registry.count("import k as k") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("init", "My_Op"), "NAME 'My_Op' must be a lower-case DNS label"),
        (("init", "op", "--domain", "local"), "--domain 'local' must contain a dot"),
        (("create", "api", "--group", "g", "--version", "1", "--kind", "site"),
         "--version '1' must look like v1"),
        (("create", "api", "--group", "g", "--version", "v1", "--kind", "K",
          "--directory", "/nonexistent-project"), "has no [tool.setpoint] section"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line(args: tuple[str, ...], message: str) -> None:
    code, output = _invoke(*args)
    assert code == 2
    assert message in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("Class", "--kind 'Class': its module 'class' is a Python keyword"),
        ("List", "its module 'list' would shadow the Python builtin 'list'"),
    ],
)
def test_kinds_that_break_imports_are_refused(tmp_path: Path, kind: str, message: str) -> None:
    project = tmp_path / "p"
    assert _invoke("init", "p-op", "--directory", str(project),
                   "--setpoint-spec", "setpoint")[0] == 0  # fmt: skip
    code, output = _invoke("create", "api", "--group", "g", "--version", "v1", "--kind", kind,
                           "--directory", str(project))  # fmt: skip
    assert code == 2, output
    assert message in output and "Traceback" not in output
    assert sum(line.startswith("Error:") for line in output.splitlines()) == 1
    assert not (project / "p_op" / "controllers" / f"{kind.lower()}.py").exists()
    assert (project / "p_op/controllers/__init__.py").read_text().count("import") == 0


def test_generated_texts_name_the_kind_correctly(tmp_path: Path) -> None:
    project = tmp_path / "p"
    assert _invoke("init", "p-op", "--directory", str(project),
                   "--setpoint-spec", "setpoint")[0] == 0  # fmt: skip
    code, output = _invoke("create", "api", "--group", "g", "--version", "v1", "--kind",
                           "Address", "--directory", str(project))  # fmt: skip
    assert code == 0, output
    controller = (project / "p_op/controllers/address.py").read_text()
    assert "Addresss" not in controller and "Reconciles each Address" in controller
    model = (project / "p_op/api/v1/address.py").read_text()
    assert "the addresses API" in model
    # A kind's module lives inside the package: a standard library name is fine there.
    code, output = _invoke("create", "api", "--group", "g", "--version", "v1", "--kind",
                           "Queue", "--directory", str(project))  # fmt: skip
    assert code == 0, output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("import", "NAME's package 'import' is a Python keyword"),
        ("json", "NAME's package 'json' would shadow the standard library module 'json'"),
        ("setpoint", "NAME's package 'setpoint' would shadow the module 'setpoint'"),
    ],
)
def test_package_names_that_break_imports_are_refused(
    tmp_path: Path, name: str, message: str
) -> None:
    code, output = _invoke("init", name, "--directory", str(tmp_path / "x"))
    assert code == 2
    assert message in output and "Traceback" not in output
    assert not (tmp_path / "x").exists()
