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
    from setpoint.client import Client
    from setpoint.controller import Builder, Request, Result, TerminalError
    from setpoint.manager import (
        Context,
        LeaderElectionLost,
        Manager,
        Operator,
        configure_logging,
        run_managers,
    )

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Client": "setpoint.client",
    "Builder": "setpoint.controller",
    "Request": "setpoint.controller",
    "Result": "setpoint.controller",
    "TerminalError": "setpoint.controller",
    "Context": "setpoint.manager",
    "LeaderElectionLost": "setpoint.manager",
    "Manager": "setpoint.manager",
    "Operator": "setpoint.manager",
    "configure_logging": "setpoint.manager",
    "run_managers": "setpoint.manager",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'setpoint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
