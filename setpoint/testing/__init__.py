"""The testing kit: test operators against a local cluster with pytest.

Install it with ``pip install setpoint[testing]`` (it brings pytest-asyncio) and enable the
fixtures with ``pytest_plugins = ["setpoint.testing.plugin"]`` in ``conftest.py``:

- fixtures: ``local_cluster`` (one per session), ``kubeconfig`` (its path), ``client`` (an API
  client for the test), ``namespace`` (fresh per test), ``fake_clock``;
- :func:`run_operator` runs a fresh copy of an operator for an ``async with`` block (so one
  module-level ``Operator`` serves every test), optionally on a :class:`FakeClock`;
- :func:`install_crds` installs CRDs (manifests, YAML files, CRD models) and waits for them;
- :func:`wait_for` polls anything (an object, a list, a condition) and
  :func:`wait_for_event` waits for an Event about an object;
- :func:`install_rbac` binds a ServiceAccount of the test's namespace to generated Roles
  (``config/rbac``), ``run_operator(..., service_account=NAME)`` runs the operator as it, and
  :func:`observed_rbac` reads the session cluster's audit log into what ``setpoint rbac
  suggest`` prints (compare with ``missing_rules``/``unused_rules``);
- :class:`FakeClock` (``setpoint.api.clock.FakeClock``): time that moves only on ``advance()``,
  which fires the operator's due delayed reconciles.

See ``docs/testing.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from setpoint.api.clock import FakeClock

if TYPE_CHECKING:
    from setpoint.testing.background_cluster import BackgroundCluster as BackgroundCluster
    from setpoint.testing.least_privilege import install_rbac as install_rbac
    from setpoint.testing.least_privilege import observed_rbac as observed_rbac
    from setpoint.testing.operators import WaitTimeout as WaitTimeout
    from setpoint.testing.operators import install_crds as install_crds
    from setpoint.testing.operators import run_operator as run_operator
    from setpoint.testing.operators import wait_for as wait_for
    from setpoint.testing.operators import wait_for_event as wait_for_event

__all__ = [
    "BackgroundCluster",
    "FakeClock",
    "WaitTimeout",
    "install_crds",
    "install_rbac",
    "observed_rbac",
    "run_operator",
    "wait_for",
    "wait_for_event",
]

_EXPORTS = {
    "BackgroundCluster": "setpoint.testing.background_cluster",
    "WaitTimeout": "setpoint.testing.operators",
    "install_crds": "setpoint.testing.operators",
    "install_rbac": "setpoint.testing.least_privilege",
    "observed_rbac": "setpoint.testing.least_privilege",
    "run_operator": "setpoint.testing.operators",
    "wait_for": "setpoint.testing.operators",
    "wait_for_event": "setpoint.testing.operators",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'setpoint.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
