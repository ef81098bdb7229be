"""The ephemeral containers (``kubectl debug``) of a simulated pod.

Each starts when the kubelet first sees it in the pod's spec. Ephemeral containers are never
restarted, so one with a ``command`` (or ``args``) ends by itself, exiting 0 ``run_seconds``
after it started, as a simulated container of a ``restartPolicy: Never`` pod does; one without
keeps running until the pod stops. Their statuses go in ``ephemeralContainerStatuses`` and
never count for the pod's readiness or phase.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from setpoint.cluster.controllers.kubelet.simulated_pod import SimulatedContainer


class SimulatedEphemeralContainers:
    """The ephemeral containers of one simulated pod, as they were added."""

    def __init__(self, uid: str, run_seconds: float) -> None:
        self._uid = uid
        self._run_seconds = run_seconds
        self.containers: list[SimulatedContainer] = []

    def add(self, pod: Mapping[str, Any], now: datetime) -> list[str]:
        """Start the ephemeral containers of ``pod`` not seen yet; their names."""
        known = {c.name for c in self.containers}
        added = []
        for spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            name = str(spec.get("name", ""))
            if not name or name in known:
                continue
            digest = hashlib.sha256(f"{self._uid}/{name}".encode()).hexdigest()
            ends = self._run_seconds if spec.get("command") or spec.get("args") else None
            self.containers.append(
                SimulatedContainer(
                    name, str(spec.get("image", "")), now, "containerd://" + digest, ends, None
                )
            )
            known.add(name)
            added.append(name)
        return added

    def statuses(self, now: datetime) -> list[dict[str, Any]]:
        """``ephemeralContainerStatuses`` at ``now`` (never ready: they have no probes)."""
        statuses = []
        for container in self.containers:
            status = container.status(now)
            status["ready"] = False
            statuses.append(status)
        return statuses

    def kill(self, now: datetime) -> list[str]:
        """Stop every running one; the names of those stopped."""
        stopped = []
        for container in self.containers:
            if container.finished_at(now) is None:
                container.killed_at = now
                stopped.append(container.name)
        return stopped

    def next_change(self, now: datetime) -> float | None:
        """Seconds until one of them ends by itself."""
        ends = [
            c.started_at + timedelta(seconds=c.ends_after)
            for c in self.containers
            if c.ends_after is not None and c.finished_at(now) is None
        ]
        future = [end for end in ends if end > now]
        return (min(future) - now).total_seconds() if future else None
