"""Finding the operators TARGET defines: files, modules, attributes and factories."""

from __future__ import annotations

import operator as stdlib_operator
import sys
from pathlib import Path

import pytest

from setpoint.manager.operator import Operator
from setpoint.manager.target import find_managers

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
