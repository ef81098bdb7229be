"""Finding the operator(s) a user's module or file defines, for `setpoint run TARGET`.

TARGET is one of:

- a Python file: `operator.py`, `path/to/operator.py` (its directory goes on `sys.path` so
  sibling modules import, as with `python path/to/operator.py`); a file inside a package is
  imported as the package's module (`proj/web_op/operator.py` is `web_op.operator`, with
  `proj` on `sys.path`), so that its absolute imports of its own package work;
- a module: `widgets.operator` (the current directory goes on `sys.path`, as with `python -m`);
- a project directory, as `setpoint init` lays it out: the `operator` module of the one package
  in it (`examples/cnat` runs `cnat_operator.operator`, with `examples/cnat` on `sys.path`), or
  an `operator.py` directly inside it;
- a directory of such projects (`examples`): all of them, in one process;
- a file or module followed by `:attribute` to pick one object: `widgets.operator:op`.

Without an attribute, every `Manager` (an `Operator` is one) at the module's top level is run.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setpoint.manager.manager import Manager

__all__ = [
    "TargetError",
    "find_managers",
    "load_target_module",
    "load_target_modules",
    "package_module",
    "project_operator_module",
]


class TargetError(Exception):
    """TARGET could not be loaded or defines no operator."""


def _split(target: str) -> tuple[str, str | None]:
    # A Windows drive letter ("C:\\x.py") is not an attribute separator.
    head, sep, attribute = target.rpartition(":")
    if sep and head and attribute and not ("\\" in attribute or "/" in attribute):
        return head, attribute
    return target, None


def _module_name_for(path: Path) -> str:
    """The file's stem, unless that would shadow another module (`operator.py` is a likely
    name for an operator, and `operator` is also a standard library module)."""
    stem = path.stem
    if stem.isidentifier() and stem not in sys.modules and stem not in sys.stdlib_module_names:
        return stem
    safe = "".join(char if char.isalnum() else "_" for char in stem)
    return f"setpoint_target_{safe}"


def package_module(path: Path) -> tuple[Path, str] | None:
    """(the directory to import from, the dotted name) of a file inside a package:
    ``proj/web_op/operator.py`` with ``proj/web_op/__init__.py`` is ``web_op.operator``
    imported from ``proj``, so that its absolute imports of ``web_op`` work."""
    if not (path.parent / "__init__.py").is_file() or not path.stem.isidentifier():
        return None
    parts = [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.name.isidentifier():
        parts.insert(0, directory.name)
        directory = directory.parent
    return directory, ".".join(parts)


def load_target_module(location: str) -> ModuleType:
    """Import a file path or a dotted module name; raises TargetError with the cause."""
    path = Path(location)
    if location.endswith(".py") or os.sep in location or path.is_file():
        if not path.is_file():
            raise TargetError(f"TARGET {location!r}: no such file")
        path = path.resolve()
        in_package = package_module(path)
        if in_package is not None:
            return _import_from(*in_package)
        for loaded in list(sys.modules.values()):
            # The same file imported twice would define every class twice (two `Foo`s).
            if getattr(loaded, "__file__", None) == str(path):
                return loaded
        directory = str(path.parent)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        module_name = _module_name_for(path)
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"TARGET {location!r}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            sys.modules.pop(module_name, None)
            raise TargetError(
                f"TARGET {location!r}: importing it failed: {type(error).__name__}: {error}"
            ) from error
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as error:
        if error.name and location.startswith(error.name):
            raise TargetError(
                f"TARGET {location!r}: no module named {error.name!r} (give a .py file path or "
                "a module importable from the current directory)"
            ) from error
        raise TargetError(f"TARGET {location!r}: importing it failed: {error}") from error
    except Exception as error:
        raise TargetError(
            f"TARGET {location!r}: importing it failed: {type(error).__name__}: {error}"
        ) from error


def _project_operator(directory: Path) -> tuple[Path, str] | None:
    """The operator module of a project directory: (directory for sys.path, module name)."""
    if (directory / "operator.py").is_file():
        return directory, ""
    packages = sorted(
        child
        for child in directory.iterdir()
        if (child / "__init__.py").is_file() and (child / "operator.py").is_file()
    )
    if len(packages) == 1:
        return directory, f"{packages[0].name}.operator"
    return None


def project_operator_module(directory: Path) -> str | None:
    """The dotted name of a project directory's operator module, once the project is installed
    (``cnat_operator.operator``; ``operator`` for an ``operator.py`` at its top), or None."""
    project = _project_operator(directory)
    if project is None:
        return None
    return project[1] or "operator"


def _import_from(directory: Path, module_name: str) -> ModuleType:
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    try:
        return importlib.import_module(module_name)
    except Exception as error:
        raise TargetError(
            f"TARGET {str(directory)!r}: importing {module_name} failed: "
            f"{type(error).__name__}: {error}"
        ) from error


def _projects(directory: Path) -> list[tuple[Path, str]]:
    """The (directory, operator module) of each project ``directory`` stands for."""
    project = _project_operator(directory)
    if project is not None:
        return [project]
    children = (child for child in sorted(directory.iterdir()) if child.is_dir())
    return [found for found in map(_project_operator, children) if found is not None]


def project_directories(directory: Path) -> list[Path]:
    """The projects a directory TARGET stands for: itself, or each project directly inside it."""
    return [project for project, _ in _projects(directory)]


def load_target_modules(location: str) -> list[ModuleType]:
    """Like :func:`load_target_module`, and a directory gives the module of each project in it."""
    path = Path(location)
    if not path.is_dir() or location.endswith(".py"):
        return [load_target_module(location)]
    found = _projects(path.resolve())
    if not found:
        raise TargetError(
            f"TARGET {location!r}: a directory without an operator (expected operator.py, a "
            "package holding operator.py, or directories of such projects)"
        )
    return [
        load_target_module(str(directory / "operator.py"))
        if not module_name
        else _import_from(directory, module_name)
        for directory, module_name in found
    ]


def find_managers(target: str) -> list[Manager]:
    """The managers (operators) TARGET defines, in definition order; at least one."""
    location, attribute = _split(target)
    modules = load_target_modules(location)
    if len(modules) > 1:
        if attribute is not None:
            raise TargetError(
                f"TARGET {target!r}: :attribute cannot pick from a directory of several projects"
            )
        return [manager for module in modules for manager in _managers_in(module, target)]
    module = modules[0]
    if attribute is not None:
        try:
            value = getattr(module, attribute)
        except AttributeError:
            raise TargetError(
                f"TARGET {target!r}: {location} has no attribute {attribute!r}"
            ) from None
        if callable(value) and not isinstance(value, Manager):
            value = value()  # a factory: `def make_operator() -> Operator`
        if not isinstance(value, Manager):
            raise TargetError(
                f"TARGET {target!r}: {attribute} is a {type(value).__name__}, "
                "not a setpoint.Operator or Manager"
            )
        return [value]
    return _managers_in(module, target)


def _managers_in(module: ModuleType, target: str) -> list[Manager]:
    found: list[Manager] = []
    for value in vars(module).values():
        if isinstance(value, Manager) and all(value is not seen for seen in found):
            found.append(value)
    if not found:
        raise TargetError(
            f"TARGET {target!r} defines no setpoint.Operator or Manager at its top level "
            '(create one, e.g. `op = setpoint.Operator("name")`, or name it: module:attribute)'
        )
    return found
