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
  which fires the operator's due delayed reconciles;
- simulation controls (:mod:`setpoint.testing.simulation`): :func:`simulate` makes a pod's
  simulated containers fail, crash-loop, start late or never pull their image;
  :func:`apply_stages` applies kwok Stages; :func:`advance_clock`/:func:`set_clock` move the
  clock of a cluster served on a manual clock (the ``manual_clock_cluster`` fixture), which
  ``run_operator(..., follow_cluster_clock=True)`` operators follow.

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
    from setpoint.testing.simulation import advance_clock as advance_clock
    from setpoint.testing.simulation import apply_stages as apply_stages
    from setpoint.testing.simulation import read_clock as read_clock
    from setpoint.testing.simulation import set_clock as set_clock
    from setpoint.testing.simulation import simulate as simulate

__all__ = [
    "BackgroundCluster",
    "FakeClock",
    "WaitTimeout",
    "advance_clock",
    "apply_stages",
    "install_crds",
    "install_rbac",
    "observed_rbac",
    "read_clock",
    "run_operator",
    "set_clock",
    "simulate",
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
    "advance_clock": "setpoint.testing.simulation",
    "apply_stages": "setpoint.testing.simulation",
    "read_clock": "setpoint.testing.simulation",
    "set_clock": "setpoint.testing.simulation",
    "simulate": "setpoint.testing.simulation",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'setpoint.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
