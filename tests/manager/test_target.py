"""Finding the operators TARGET defines: files, modules, attributes and factories."""

from __future__ import annotations

import operator as stdlib_operator
import sys
from pathlib import Path

import pytest

from setpoint.manager.operator import Operator
from setpoint.manager.target import TargetError, find_managers

OPERATORS = """
import setpoint.manager
first = setpoint.manager.Operator("first")
second = setpoint.manager.Operator("second")
alias = first

def make():
    return setpoint.manager.Operator("made")
"""


def test_a_file_called_operator_py_does_not_shadow_the_stdlib(tmp_path: Path) -> None:
    target = tmp_path / "operator.py"
    target.write_text(OPERATORS)
    managers = find_managers(str(target))
    assert [m.name for m in managers if isinstance(m, Operator)] == ["first", "second"]
    assert sys.modules["operator"] is stdlib_operator


def test_module_attribute_and_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "widgetpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(OPERATORS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (second,) = find_managers("widgetpkg.ops:second")
    assert isinstance(second, Operator) and second.name == "second"
    (made,) = find_managers("widgetpkg.ops:make")
    assert isinstance(made, Operator) and made.name == "made"


def test_sibling_modules_of_a_file_import(tmp_path: Path) -> None:
    (tmp_path / "widget_settings.py").write_text("NAME = 'from-sibling'\n")
    target = tmp_path / "sibling_operator.py"
    target.write_text(
        "import setpoint.manager\nimport widget_settings\n"
        "op = setpoint.manager.Operator(widget_settings.NAME)\n"
    )
    (op,) = find_managers(str(target))
    assert isinstance(op, Operator) and op.name == "from-sibling"


def _project(root: Path, package: str, operator_name: str) -> Path:
    """A project directory as `setpoint init` lays it out: ROOT/PACKAGE/operator.py."""
    code = root / package
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("")
    (code / "names.py").write_text(f"NAME = {operator_name!r}\n")
    (code / "operator.py").write_text(
        "import setpoint.manager\n"
        f"from {package}.names import NAME\n"
        "op = setpoint.manager.Operator(NAME)\n"
    )
    return root


def test_a_project_directory_runs_its_package_operator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    project = _project(tmp_path / "cnat", "cnat_project_op", "cnat")
    (manager,) = find_managers(str(project))
    assert isinstance(manager, Operator) and manager.name == "cnat"


def test_a_directory_of_projects_runs_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    _project(tmp_path / "examples" / "b", "b_project_op", "bee")
    _project(tmp_path / "examples" / "a", "a_project_op", "ay")
    (tmp_path / "examples" / "notes").mkdir()  # not a project: skipped
    managers = find_managers(str(tmp_path / "examples"))
    assert [m.name for m in managers if isinstance(m, Operator)] == ["ay", "bee"]
    with pytest.raises(TargetError, match="cannot pick"):
        find_managers(str(tmp_path / "examples") + ":op")


def test_a_directory_without_an_operator_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="a directory without an operator"):
        find_managers(str(tmp_path))


def test_a_file_inside_a_package_imports_as_its_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `setpoint run web_op/operator.py` in a scaffolded project: operator.py imports its own
    # package absolutely (`from web_op import controllers`), so it must be web_op.operator.
    package = tmp_path / "web_op_pkg"
    (package / "controllers").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "controllers" / "__init__.py").write_text("NAME = 'from-package'\n")
    (package / "operator.py").write_text(
        "import setpoint.manager\nfrom web_op_pkg import controllers\n"
        "op = setpoint.manager.Operator(controllers.NAME)\n"
    )
    monkeypatch.chdir(tmp_path.parent)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (op,) = find_managers(str(package / "operator.py"))
    assert isinstance(op, Operator) and op.name == "from-package"
    assert sys.modules["web_op_pkg.operator"].op is op
