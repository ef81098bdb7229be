"""Package attributes imported on first use (PEP 562 module ``__getattr__``).

``setpoint.api``, ``setpoint.controller`` and ``setpoint.manager`` export names that most
operators never touch (finalizers, conditions, leader election ...); each keeps a table of those
names and the module that defines them, and loads the module only when the name is first read,
so that ``setpoint run`` does not pay for them at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["load_lazy_export"]


def load_lazy_export(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any], name: str
) -> Any:
    """The value of ``package.name`` from the module ``exports[name]`` (or that module itself
    when it is the package's submodule ``name``), stored in ``namespace`` so later lookups skip
    the package's ``__getattr__``. Raises AttributeError for a name not in ``exports``."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if module == f"{package}.{name}" else getattr(imported, name)
    namespace[name] = value
    return value
