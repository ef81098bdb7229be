"""Runs caches and controllers together: leader election, probes, metrics, logging, shutdown.

- :class:`Operator` — the short way: a named manager with ``@op.reconciler(for_=..., owns=...)``;
  reconcile functions get a :class:`Context` (client, cache, shortcuts, logger) and the request.
- :class:`Manager` — one client, one shared cache and any number of controllers (built with the
  controller ``Builder``) or other runnables (``add``), with Lease leader election
  (15 s / 10 s / 2 s), ``/healthz`` + ``/readyz``, ``/metrics``, and graceful shutdown on
  SIGTERM. ``await manager.run()`` raises :class:`LeaderElectionLost` when leadership is lost
  (exit non-zero, like a Go operator).
- :func:`configure_logging` — JSON or human log lines carrying controller, namespace, name and
  reconcile id.
- :class:`LeaderElector` — the election on its own, for programs that want only that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from setpoint.api.lazy_exports import load_lazy_export
from setpoint.manager.context import Context, NotControlledError
from setpoint.manager.manager import (
    GRACEFUL_SHUTDOWN_TIMEOUT,
    Manager,
    ManagerError,
    RunnableFailed,
)
from setpoint.manager.operator import KindRef, Operator
from setpoint.manager.run_managers import run_managers
from setpoint.manager.runnable import Runnable
from setpoint.manager.structured_logging import configure_logging

if TYPE_CHECKING:
    from setpoint.manager.health import HealthCheck, HealthChecks
    from setpoint.manager.leader_election import (
        LEASE_DURATION,
        RENEW_DEADLINE,
        RETRY_PERIOD,
        LeaderElectionConfig,
        LeaderElectionLost,
        LeaderElector,
    )
    from setpoint.manager.lease_lock import ClientLeaseLock, LeaseLock

# Leader election and health checks (public name -> the module that defines it) are imported on
# first use: an operator without them does not pay for them (setpoint run's start-up).
_LAZY_EXPORTS: dict[str, str] = {
    "HealthCheck": "setpoint.manager.health",
    "HealthChecks": "setpoint.manager.health",
    "LEASE_DURATION": "setpoint.manager.leader_election",
    "RENEW_DEADLINE": "setpoint.manager.leader_election",
    "RETRY_PERIOD": "setpoint.manager.leader_election",
    "LeaderElectionConfig": "setpoint.manager.leader_election",
    "LeaderElectionLost": "setpoint.manager.leader_election",
    "LeaderElector": "setpoint.manager.leader_election",
    "ClientLeaseLock": "setpoint.manager.lease_lock",
    "LeaseLock": "setpoint.manager.lease_lock",
}

__all__ = [
    "GRACEFUL_SHUTDOWN_TIMEOUT",
    "LEASE_DURATION",
    "RENEW_DEADLINE",
    "RETRY_PERIOD",
    "ClientLeaseLock",
    "Context",
    "HealthCheck",
    "HealthChecks",
    "KindRef",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElector",
    "LeaseLock",
    "Manager",
    "ManagerError",
    "NotControlledError",
    "Operator",
    "Runnable",
    "RunnableFailed",
    "configure_logging",
    "run_managers",
]


def __getattr__(name: str) -> Any:
    return load_lazy_export(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_EXPORTS})
