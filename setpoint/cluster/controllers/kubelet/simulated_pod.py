"""A simulated pod's containers over time, and the status kubelet 1.32 would report for them.

No process runs: each container starts when the kubelet first sees its pod (init containers
complete at once, in order) and keeps running, except a container whose command ends by itself
(it has a ``command`` or ``args`` and the pod's restartPolicy is Never or OnFailure), which
exits 0 ``run_seconds`` after it started. A container with a readinessProbe becomes ready
``initialDelaySeconds`` after it started. Everything is a function of the clock's now, so the
status is recomputed, not stepped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

_TERMINAL = ("Succeeded", "Failed")


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def image_id(image: str) -> str:
    """A digest reference for an image, as containerd reports it (stable per image name)."""
    name = image.split("@")[0]
    repository = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    if "/" not in repository:
        repository = f"docker.io/library/{repository}"
    elif "." not in repository.split("/")[0] and ":" not in repository.split("/")[0]:
        repository = f"docker.io/{repository}"
    digest = hashlib.sha256(image.encode()).hexdigest()
    return f"{repository}@sha256:{digest}"


@dataclass(slots=True)
class SimulatedContainer:
    """One container of a simulated pod."""

    name: str
    image: str
    started_at: datetime
    container_id: str
    ends_after: float | None
    ready_after: float | None
    #: Set when the container was stopped (pod deletion).
    killed_at: datetime | None = None

    def finished_at(self, now: datetime) -> datetime | None:
        """When the container exited (None while running)."""
        if self.killed_at is not None:
            return self.killed_at
        if self.ends_after is not None:
            end = self.started_at + timedelta(seconds=self.ends_after)
            if end <= now:
                return end
        return None

    def status(self, now: datetime) -> dict[str, Any]:
        """Its ``containerStatuses`` entry at ``now``."""
        finished = self.finished_at(now)
        base: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "imageID": image_id(self.image),
            "containerID": self.container_id,
            "restartCount": 0,
            "lastState": {},
        }
        if finished is not None:
            # A stopped container exits as a process does on SIGTERM: 143, reason Error.
            killed = self.killed_at is not None and finished == self.killed_at
            base.update(
                ready=False,
                started=False,
                state={
                    "terminated": {
                        "exitCode": 143 if killed else 0,
                        "reason": "Error" if killed else "Completed",
                        "startedAt": _text(self.started_at),
                        "finishedAt": _text(finished),
                        "containerID": self.container_id,
                    }
                },
            )
            return base
        ready = self.ready_after is None or (
            now >= self.started_at + timedelta(seconds=self.ready_after)
        )
        base.update(
            ready=ready, started=True, state={"running": {"startedAt": _text(self.started_at)}}
        )
        return base


def _ends_by_itself(container: Mapping[str, Any], restart_policy: str) -> bool:
    return restart_policy in ("Never", "OnFailure") and bool(
        container.get("command") or container.get("args")
    )


def _readiness_delay(container: Mapping[str, Any]) -> float | None:
    probe = container.get("readinessProbe")
    if not isinstance(probe, dict):
        return None
    delay = probe.get("initialDelaySeconds") or 0
    return float(delay) if isinstance(delay, int | float) else 0.0


@dataclass(slots=True)
class SimulatedPod:
    """The containers of one pod as the simulated runtime runs them."""

    uid: str
    started_at: datetime
    pod_ip: str
    host_ip: str
    init: list[SimulatedContainer] = field(default_factory=list)
    containers: list[SimulatedContainer] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        pod: Mapping[str, Any],
        now: datetime,
        pod_ip: str,
        host_ip: str,
        run_seconds: float,
    ) -> SimulatedPod:
        """Start a pod's containers at ``now``."""
        spec = pod.get("spec") or {}
        uid = str(pod["metadata"]["uid"])
        restart = spec.get("restartPolicy") or "Always"

        def container_id(name: str) -> str:
            return "containerd://" + hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()

        init = [
            SimulatedContainer(
                c.get("name", ""),
                c.get("image", ""),
                now,
                container_id(c.get("name", "")),
                ends_after=0.0,
                ready_after=None,
            )
            for c in spec.get("initContainers") or []
        ]
        containers = [
            SimulatedContainer(
                c.get("name", ""),
                c.get("image", ""),
                now,
                container_id(c.get("name", "")),
                ends_after=run_seconds if _ends_by_itself(c, restart) else None,
                ready_after=_readiness_delay(c),
            )
            for c in spec.get("containers") or []
        ]
        return cls(uid, now, pod_ip, host_ip, init, containers)

    def kill(self, now: datetime) -> list[str]:
        """Stop every running container; the names of those stopped."""
        stopped = []
        for container in self.containers:
            if container.finished_at(now) is None:
                container.killed_at = now
                stopped.append(container.name)
        return stopped

    def next_change(self, now: datetime) -> float | None:
        """Seconds until the status changes by itself (a container ends or becomes ready)."""
        moments: list[datetime] = []
        for container in self.containers:
            if container.finished_at(now) is not None:
                continue
            if container.ends_after is not None:
                moments.append(container.started_at + timedelta(seconds=container.ends_after))
            if container.ready_after is not None:
                ready = container.started_at + timedelta(seconds=container.ready_after)
                if ready > now:
                    moments.append(ready)
        future = [m for m in moments if m > now]
        return (min(future) - now).total_seconds() if future else None

    def status(
        self, pod: Mapping[str, Any], now: datetime, scheduled: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """The pod status the kubelet writes at ``now`` (``scheduled``: the PodScheduled
        condition to keep)."""
        restart = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        statuses = [c.status(now) for c in self.containers]
        finished = [s for s in statuses if "terminated" in s["state"]]
        all_done = bool(statuses) and len(finished) == len(statuses)
        deleted = "deletionTimestamp" in (pod.get("metadata") or {})
        failed = any(s["state"]["terminated"]["exitCode"] != 0 for s in finished)
        if all_done and (restart != "Always" or deleted):
            phase = "Failed" if failed else "Succeeded"
        else:
            phase = "Running"
        start = _text(self.started_at)
        terminal = phase in _TERMINAL
        unready = [s["name"] for s in statuses if not s["ready"]]
        ready_condition: tuple[str, str | None, str | None]
        if terminal:
            ready_condition = ("False", "PodCompleted", None)
        elif unready:
            ready_condition = (
                "False",
                "ContainersNotReady",
                f"containers with unready status: [{' '.join(unready)}]",
            )
        else:
            ready_condition = ("True", None, None)

        def condition(
            type_: str, status: str, reason: str | None = None, message: str | None = None
        ) -> dict[str, Any]:
            entry: dict[str, Any] = {
                "type": type_,
                "status": status,
                "lastProbeTime": None,
                "lastTransitionTime": start,
            }
            if reason:
                entry["reason"] = reason
            if message:
                entry["message"] = message
            return entry

        conditions = [
            condition("PodReadyToStartContainers", "False" if terminal else "True"),
            condition("Initialized", "True", "PodCompleted" if terminal else None),
            condition("Ready", *ready_condition),
            condition("ContainersReady", *ready_condition),
        ]
        if scheduled is not None:
            conditions.append(dict(scheduled))
        status: dict[str, Any] = {
            "phase": phase,
            "conditions": conditions,
            "hostIP": self.host_ip,
            "hostIPs": [{"ip": self.host_ip}],
            "podIP": self.pod_ip,
            "podIPs": [{"ip": self.pod_ip}],
            "startTime": start,
            "containerStatuses": statuses,
        }
        if self.init:
            status["initContainerStatuses"] = [c.status(now) for c in self.init]
        qos = (pod.get("status") or {}).get("qosClass")
        if qos:
            status["qosClass"] = qos
        return status
