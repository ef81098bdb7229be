"""A simulated pod's containers over time, and the status kubelet 1.32 would report for them.

No process runs: each container starts when the kubelet first sees its pod (init containers
complete at once, in order) and keeps running, except a container whose command ends by itself
(it has a ``command`` or ``args`` and the pod's restartPolicy is Never or OnFailure), which
exits 0 ``run_seconds`` after it started. A container with a readinessProbe becomes ready
``initialDelaySeconds`` after it started. The pod's simulation annotations
(:mod:`.simulation_annotations`) change that: an exit code, a run time, a readiness delay,
restarts with the kubelet's back-off (``CrashLoopBackOff``), an image that cannot be pulled.
Everything is a function of the clock's now, so the status is recomputed, not stepped: a clock
advanced by an hour shows the restarts of that hour at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from setpoint.cluster.controllers.kubelet.restart_backoff import (
    BACKOFF_MAX_SECONDS,
    backoff_seconds,
    pull_backoff_seconds,
)
from setpoint.cluster.controllers.kubelet.simulation_annotations import (
    pull_error_message,
    read_simulation_annotations,
)

_TERMINAL = ("Succeeded", "Failed")
#: How long a failed pull shows ``ErrImagePull`` before ``ImagePullBackOff`` (the kubelet's
#: next pod sync, which finds the image in back-off).
PULL_ERROR_SHOWN_SECONDS: Final = 1.0


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


@dataclass(frozen=True, slots=True)
class _Moment:
    """Where a container's timeline is at one instant."""

    #: ``restartCount``: container instances created after the first.
    restarts: int
    #: (started, finished) of the previous instance (``lastState``), if any.
    last: tuple[datetime, datetime] | None
    #: The current instance's start while it runs.
    running_since: datetime | None = None
    #: (started, finished) of the current instance once it exited for good.
    exited: tuple[datetime, datetime] | None = None
    #: The back-off shown while waiting to be restarted (``CrashLoopBackOff``).
    backoff: float | None = None
    #: When the timeline changes next by itself.
    next_change: datetime | None = None


@dataclass(slots=True)
class SimulatedContainer:
    """One container of a simulated pod: a timeline computed from the clock.

    It starts at ``started_at`` and, when ``ends_after`` is set, exits ``exit_code`` that long
    after each start; with ``restarts`` the kubelet starts it again with its back-off
    (:mod:`.restart_backoff`). With ``pull_error`` the image never arrives: it waits in
    ``ErrImagePull``/``ImagePullBackOff`` and never starts.
    """

    name: str
    image: str
    started_at: datetime
    container_id: str
    ends_after: float | None
    ready_after: float | None
    exit_code: int = 0
    restarts: bool = False
    pull_error: str | None = None
    #: ``<pod>_<namespace>(<uid>)``, as the kubelet names a pod in its messages.
    pod_ref: str = ""
    #: Set when the container was stopped (pod deletion).
    killed_at: datetime | None = None

    def _instance_id(self, restarts: int) -> str:
        if restarts == 0:
            return self.container_id
        return (
            "containerd://" + hashlib.sha256(f"{self.container_id}/{restarts}".encode()).hexdigest()
        )

    def _moment(self, now: datetime) -> _Moment:
        if self.ends_after is None:
            return _Moment(0, None, running_since=self.started_at)
        run = timedelta(seconds=self.ends_after)
        restarts, start = 0, self.started_at
        last: tuple[datetime, datetime] | None = None
        while True:
            finish = start + run
            if finish > now:
                return _Moment(restarts, last, running_since=start, next_change=finish)
            if not self.restarts:
                return _Moment(restarts, last, exited=(start, finish))
            wait = backoff_seconds(restarts)
            again = finish + timedelta(seconds=wait)
            if again > now:
                return _Moment(restarts, (start, finish), backoff=wait, next_change=again)
            last, start, restarts = (start, finish), again, restarts + 1
            cycle = self.ends_after + wait
            if wait >= BACKOFF_MAX_SECONDS and cycle > 0:
                # Capped: every cycle is alike, so skip whole ones (a clock advanced by days).
                skipped = int((now - start).total_seconds() // cycle) - 1
                if skipped > 0:
                    start += timedelta(seconds=skipped * cycle)
                    restarts += skipped
                    last = (start - timedelta(seconds=cycle), start - timedelta(seconds=wait))

    def finished_at(self, now: datetime) -> datetime | None:
        """When the container exited for good (None while it runs or will restart)."""
        if self.pull_error is not None:
            return self.killed_at
        if self.killed_at is not None:
            return self.killed_at
        moment = self._moment(now)
        return moment.exited[1] if moment.exited is not None else None

    def _terminated(
        self, started: datetime, finished: datetime, restarts: int, code: int
    ) -> dict[str, Any]:
        return {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": _text(started),
            "finishedAt": _text(finished),
            "containerID": self._instance_id(restarts),
        }

    def pull_state(self, now: datetime) -> tuple[dict[str, Any], datetime]:
        """The waiting state of a container whose image cannot be pulled, and when it
        changes next (the next attempt, or the end of an attempt's ``ErrImagePull``)."""
        attempt, attempts = self.started_at, 1
        while True:
            shown_until = attempt + timedelta(seconds=PULL_ERROR_SHOWN_SECONDS)
            following = attempt + timedelta(seconds=pull_backoff_seconds(attempts))
            if now < shown_until:
                message = self.pull_error or pull_error_message(self.image)
                return {"reason": "ErrImagePull", "message": message}, shown_until
            if now < following:
                return {
                    "reason": "ImagePullBackOff",
                    "message": f'Back-off pulling image "{self.image}"',
                }, following
            attempt, attempts = following, attempts + 1

    def status(self, now: datetime) -> dict[str, Any]:
        """Its ``containerStatuses`` entry at ``now``."""
        if self.pull_error is not None:
            waiting, _ = self.pull_state(self.killed_at or now)
            return {
                "name": self.name,
                "image": self.image,
                "imageID": "",
                "restartCount": 0,
                "lastState": {},
                "ready": False,
                "started": False,
                "state": {"waiting": waiting},
            }
        moment = self._moment(now if self.killed_at is None else min(now, self.killed_at))
        base: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "imageID": image_id(self.image),
            "containerID": self._instance_id(moment.restarts),
            "restartCount": moment.restarts,
            "lastState": {},
        }
        if moment.last is not None:
            started, finished = moment.last
            previous = moment.restarts - 1 if moment.backoff is None else moment.restarts
            base["lastState"] = {
                "terminated": self._terminated(started, finished, previous, self.exit_code)
            }
        if self.killed_at is not None and moment.running_since is not None:
            # A stopped container exits as a process does on SIGTERM: 143, reason Error.
            state = self._terminated(moment.running_since, self.killed_at, moment.restarts, 143)
            base.update(ready=False, started=False, state={"terminated": state})
            return base
        if moment.exited is not None:
            state = self._terminated(*moment.exited, moment.restarts, self.exit_code)
            base.update(ready=False, started=False, state={"terminated": state})
            return base
        if moment.backoff is not None:
            if self.killed_at is not None and moment.last is not None:
                base["lastState"] = {}
                state = self._terminated(*moment.last, moment.restarts, self.exit_code)
                base.update(ready=False, started=False, state={"terminated": state})
                return base
            waiting = {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {int(moment.backoff)}s restarting failed container="
                f"{self.name} pod={self.pod_ref}",
            }
            base.update(ready=False, started=False, state={"waiting": waiting})
            return base
        assert moment.running_since is not None
        ready = self.ready_after is None or (
            now >= moment.running_since + timedelta(seconds=self.ready_after)
        )
        base.update(
            ready=ready,
            started=True,
            state={"running": {"startedAt": _text(moment.running_since)}},
        )
        return base

    def next_change(self, now: datetime) -> datetime | None:
        """When its status changes next by itself (None: never)."""
        if self.killed_at is not None:
            return None
        if self.pull_error is not None:
            return self.pull_state(now)[1]
        moment = self._moment(now)
        moments = [moment.next_change] if moment.next_change is not None else []
        if moment.running_since is not None and self.ready_after is not None:
            ready = moment.running_since + timedelta(seconds=self.ready_after)
            if ready > now:
                moments.append(ready)
        return min(moments) if moments else None


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
    #: Simulation annotations that were ignored, one line each (reported as Events).
    annotation_errors: list[str] = field(default_factory=list)

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
        meta = pod["metadata"]
        uid = str(meta["uid"])
        restart = spec.get("restartPolicy") or "Always"
        pod_ref = f"{meta.get('name', '')}_{meta.get('namespace', '')}({uid})"
        simulation = read_simulation_annotations(pod)

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
        containers = []
        for c in spec.get("containers") or []:
            name = c.get("name", "")
            behaviour = simulation.for_container(name)
            ends_after: float | None = run_seconds if _ends_by_itself(c, restart) else None
            if behaviour.run_seconds is not None:
                ends_after = behaviour.run_seconds
            elif behaviour.exit_code is not None and ends_after is None:
                ends_after = run_seconds
            exit_code = behaviour.exit_code or 0
            containers.append(
                SimulatedContainer(
                    name,
                    c.get("image", ""),
                    now,
                    container_id(name),
                    ends_after=ends_after,
                    ready_after=(
                        behaviour.ready_after
                        if behaviour.ready_after is not None
                        else _readiness_delay(c)
                    ),
                    exit_code=exit_code,
                    restarts=restart == "Always" or (restart == "OnFailure" and exit_code != 0),
                    pull_error=behaviour.pull_error,
                    pod_ref=pod_ref,
                )
            )
        return cls(uid, now, pod_ip, host_ip, init, containers, simulation.errors)

    def kill(self, now: datetime) -> list[str]:
        """Stop every running container; the names of those stopped."""
        stopped = []
        for container in self.containers:
            if container.finished_at(now) is None:
                container.killed_at = now
                stopped.append(container.name)
        return stopped

    def next_change(self, now: datetime) -> float | None:
        """Seconds until the status changes by itself (a container ends, restarts, becomes
        ready, or retries its image pull)."""
        moments = [m for c in self.containers if (m := c.next_change(now)) is not None]
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
        never_ran = any(c.pull_error is not None for c in self.containers)
        if all_done and (restart != "Always" or deleted):
            phase = "Failed" if failed else "Succeeded"
        elif never_ran and not deleted:
            phase = "Pending"  # a container is waiting and has never run
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
