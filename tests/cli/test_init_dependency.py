"""`setpoint init` writes a dependency on setpoint that resolves the way setpoint itself was
installed, and a project (Makefile, Dockerfile, build context) that installs from it."""

from __future__ import annotations

import json
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint import __version__
from setpoint.cli import installation
from setpoint.cli.main import cli


def _init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["init", *args])
    return result.exit_code, result.output


def _dependencies(project: Path) -> list[str]:
    settings = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    return [*settings["dependencies"], *settings["optional-dependencies"]["testing"]]


def _fake_wheel(directory: Path, version: str = "9.8.7") -> Path:
    wheel = directory / f"setpoint-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("setpoint/__init__.py", "")
    return wheel


def test_from_a_checkout_the_project_gets_a_built_wheel_not_a_path(tmp_path: Path) -> None:
    # This test runs from a checkout: the project must not name it (`setpoint @ file:///...`
    # works on this machine only, and in no Docker build or CI).
    project = tmp_path / "demo-op"
    code, output = _init("demo-op", "--directory", str(project))
    assert code == 0, output
    wheels = sorted((project / "wheels").glob("setpoint-*.whl"))
    assert [wheel.name for wheel in wheels] == [f"setpoint-{__version__}-py3-none-any.whl"]
    assert _dependencies(project) == [f"setpoint=={__version__}",
                                      f"setpoint[testing]=={__version__}"]  # fmt: skip
    assert "file://" not in (project / "pyproject.toml").read_text()
    with zipfile.ZipFile(wheels[0]) as archive:
        assert "setpoint/cli/main.py" in archive.namelist()


def test_a_wheel_spec_is_copied_and_pinned(tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path)
    project = tmp_path / "demo-op"
    code, output = _init("demo-op", "--directory", str(project), "--setpoint-spec", str(wheel))
    assert code == 0, output
    assert (project / "wheels" / wheel.name).read_bytes() == wheel.read_bytes()
    assert _dependencies(project) == ["setpoint==9.8.7", "setpoint[testing]==9.8.7"]
    makefile = (project / "Makefile").read_text()
    assert "FIND_LINKS := $(addprefix --find-links ,$(wildcard wheels))" in makefile
    assert "pip install --quiet $(FIND_LINKS) -e '.[testing]'" in makefile
    # The image is built from the project root: the wheel is in the context, the venv is not.
    ignored = (project / ".dockerignore").read_text().splitlines()
    assert ".venv/" in ignored and "wheels/" not in ignored
    assert "wheels" not in (project / ".gitignore").read_text()  # CI checks it out too


def test_a_requirement_spec_is_written_as_given(tmp_path: Path) -> None:
    project = tmp_path / "demo-op"
    spec = "setpoint @ https://example.com/setpoint-0.1.0-py3-none-any.whl"
    code, output = _init("demo-op", "--directory", str(project), "--setpoint-spec", spec)
    assert code == 0, output
    assert _dependencies(project) == [spec, spec.replace("setpoint @", "setpoint[testing] @")]
    assert not (project / "wheels").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("/nonexistent/setpoint-0.1.0-py3-none-any.whl", "no such wheel file"),
        ("requests>=2", "must be a requirement of setpoint"),
    ],
)
def test_a_bad_spec_is_one_line(tmp_path: Path, spec: str, message: str) -> None:
    code, output = _init("demo-op", "--directory", str(tmp_path / "p"), "--setpoint-spec", spec)
    assert code == 2 and message in output and "Traceback" not in output


def test_from_an_index_a_compatible_range(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(installation, "_direct_url", lambda: None)
    monkeypatch.setattr(installation, "_checkout", lambda: None)
    dependency = installation.installed_dependency(tmp_path)
    assert dependency.requirement == installation.version_range()
    assert installation.version_range("0.1.0") == "setpoint>=0.1.0,<0.2"
    assert installation.version_range("1.4.2") == "setpoint>=1.4.2,<2"
    assert dependency.wheel is None


def test_from_a_wheel_the_same_wheel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path, "0.3.1")
    direct = {"url": wheel.as_uri(), "archive_info": {}}
    monkeypatch.setattr(installation, "_direct_url", lambda: json.loads(json.dumps(direct)))
    dependency = installation.installed_dependency(tmp_path / "scratch")
    assert (dependency.requirement, dependency.wheel) == ("setpoint==0.3.1", wheel)


def test_the_generated_dockerfile_installs_from_the_wheels(tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path, __version__)
    project = tmp_path / "demo-op"
    code, output = _init("demo-op", "--directory", str(project), "--setpoint-spec", str(wheel),
                         "--kind", "Website")  # fmt: skip
    assert code == 0, output
    dockerfile = (project / "config" / "Dockerfile").read_text()
    assert "COPY . ." in dockerfile
    assert "pip install --no-cache-dir --find-links wheels ." in dockerfile
