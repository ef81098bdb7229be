"""Prometheus metrics of the manager, in the shared registry under client-go's names.

Leader election exports what client-go's `leaderelection` metrics provider exports, so alerts
written for Go operators (`leader_election_master_status == 0` on every replica) keep working.
The process, GC and platform collectors are added to the shared registry once, the first time a
metrics endpoint is served, like controller-runtime registers the process collector.
"""

from __future__ import annotations

import threading

from prometheus_client import Counter, Gauge, GCCollector, PlatformCollector, ProcessCollector

from setpoint.client.metrics import REGISTRY

__all__ = [
    "ASYNCIO_TASKS",
    "LEADER_MASTER_STATUS",
    "LEADER_SLOWPATH_TOTAL",
    "register_process_collectors",
]

LEADER_MASTER_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
    "1 indicates master. 'name' is the string used to identify the lease.",
    ["name"],
    registry=REGISTRY,
)

LEADER_SLOWPATH_TOTAL = Counter(
    "leader_election_slowpath_total",
    "Total number of slow path exercised in renewing leader leases. "
    "'name' is the string used to identify the lease.",
    ["name"],
    registry=REGISTRY,
)

#: Set by the `/metrics` handler on the event loop just before each scrape (counting from the
#: collector's thread would race the loop): a count that keeps rising means leaked tasks.
ASYNCIO_TASKS = Gauge(
    "setpoint_asyncio_tasks",
    "Number of asyncio tasks not yet done in the operator's event loop, at the last scrape.",
    registry=REGISTRY,
)

_collectors_lock = threading.Lock()
_collectors_registered = False


def register_process_collectors() -> None:
    """Add the process (CPU, memory, fds), Python GC and platform collectors to the shared
    registry once (Python's counterparts of the Go and process collectors of Go operators)."""
    global _collectors_registered
    with _collectors_lock:
        if _collectors_registered:
            return
        ProcessCollector(registry=REGISTRY)
        PlatformCollector(registry=REGISTRY)
        GCCollector(registry=REGISTRY)
        _collectors_registered = True
