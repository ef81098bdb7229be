"""Leader election's defaults, apart from the election itself.

A `Manager` names them in its signature and gives itself an identity whether or not it ever
elects; `setpoint.manager.leader_election` (the algorithm, its Lease lock and its metrics) is
imported only when an election runs.
"""

from __future__ import annotations

import socket
import uuid

__all__ = ["LEASE_DURATION", "RENEW_DEADLINE", "RETRY_PERIOD", "default_identity"]

# controller-runtime's defaults (pkg/manager/internal.go), so failover behaves like Go operators:
LEASE_DURATION = 15.0  # a non-leader takes over after seeing the Lease unrenewed this long
RENEW_DEADLINE = 10.0  # a leader that could not renew this long gives up (< lease duration)
RETRY_PERIOD = 2.0  # how often the leader renews and candidates retry


def default_identity() -> str:
    """hostname + "_" + a random UUID, like controller-runtime: unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"
