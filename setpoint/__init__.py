"""setpoint: Kubernetes operators in Python.

The names most operators need are importable from here (``setpoint.Operator``,
``setpoint.Result`` ...). They are loaded on first use, so that ``import setpoint`` stays cheap
for the local cluster and the CLI, which do not need the runtime. See ``docs/runtime.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from setpoint.client import Client as Client
    from setpoint.controller import Builder as Builder
    from setpoint.controller import Request as Request
    from setpoint.controller import Result as Result
    from setpoint.controller import RetryLater as RetryLater
    from setpoint.controller import TerminalError as TerminalError
    from setpoint.controller.expectations import Expectations as Expectations
    from setpoint.manager import Context as Context
    from setpoint.manager import LeaderElectionLost as LeaderElectionLost
    from setpoint.manager import Manager as Manager
    from setpoint.manager import NotControlledError as NotControlledError
    from setpoint.manager import Operator as Operator
    from setpoint.manager import configure_logging as configure_logging
    from setpoint.manager.run_managers import run_managers as run_managers

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Client": "setpoint.client",
    "Builder": "setpoint.controller",
    "Request": "setpoint.controller",
    "Result": "setpoint.controller",
    "RetryLater": "setpoint.controller",
    "TerminalError": "setpoint.controller",
    "Expectations": "setpoint.controller.expectations",
    "NotControlledError": "setpoint.manager",
    "Context": "setpoint.manager",
    "LeaderElectionLost": "setpoint.manager",
    "Manager": "setpoint.manager",
    "Operator": "setpoint.manager",
    "configure_logging": "setpoint.manager",
    "run_managers": "setpoint.manager",
}

__all__ = [
    "Builder",
    "Client",
    "Context",
    "Expectations",
    "LeaderElectionLost",
    "Manager",
    "NotControlledError",
    "Operator",
    "Request",
    "Result",
    "RetryLater",
    "TerminalError",
    "__version__",
    "configure_logging",
    "run_managers",
]


def __getattr__(name: str) -> Any:
    if name in ("kinds", "models"):  # built-in kind constants, and their typed models
        return importlib.import_module(f"setpoint.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'setpoint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
