"""A pod whose containers run as local processes (``setpoint cluster serve --run-pods``).

Each container's ``command`` + ``args`` runs in the pod's working directory with the pod's
environment; the image is ignored, and a container without a ``command`` keeps "running"
without a process (its image's entrypoint would run, with ``args`` in place of the image's CMD,
and there is no image to run). Output goes to one log file per container
instance, each line prefixed with its time and stream as the CRI log format does. Exit codes
set the container states and the pod phase; with restartPolicy Always (any exit) or OnFailure
(non-zero) the container is started again, the second time at once and then after kubelet's
back-off (10 s doubling to 300 s, on the cluster clock) shown as ``CrashLoopBackOff``. Init
containers run first, one at a time. Deletion sends SIGTERM to each process group, waits for
the grace period, then SIGKILL. An ``exec`` liveness probe that keeps failing stops the
container the same way (:mod:`.liveness`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from setpoint.api.clock import Clock, TimerHandle
from setpoint.cluster.controllers.kubelet.container_env import ContainerConfigError
from setpoint.cluster.controllers.kubelet.liveness import exec_probe, watch_liveness
from setpoint.cluster.controllers.kubelet.simulated_pod import image_id

BACKOFF_BASE_SECONDS: Final = 10.0
BACKOFF_MAX_SECONDS: Final = 300.0
START_ERROR_EXIT_CODE: Final = 128


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_time(moment: datetime) -> str:
    """RFC 3339 with nanoseconds and trailing zeros dropped (Go's ``RFC3339Nano``)."""
    utc = moment.astimezone(UTC)
    fraction = f"{utc.microsecond:06d}000".rstrip("0")
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


@dataclass(slots=True)
class Instance:
    """One run of a container: its process (if it started) and how it ended."""

    started_at: datetime
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    finished_at: datetime | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    prober: asyncio.Task[None] | None = None

    def terminated(self, container_id: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "exitCode": self.exit_code,
            "reason": self.reason,
            "startedAt": _text(self.started_at),
            "finishedAt": _text(self.finished_at or self.started_at),
            "containerID": container_id,
        }
        if self.exit_code is not None and self.exit_code > 128 and self.reason == "Error":
            entry["signal"] = self.exit_code - 128
        if self.message:
            entry["message"] = self.message
        return entry


@dataclass(slots=True)
class ProcessContainer:
    """A container of a process pod across its restarts."""

    spec: Mapping[str, Any]
    directory: Path
    init: bool
    instances: list[Instance] = field(default_factory=list)
    config_error: str = ""
    restart_at: float | None = None  # clock monotonic time of the next start
    ready_after: float | None = None

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def argv(self) -> list[str]:
        """``command`` + ``args``; empty without a ``command``: then the image's entrypoint
        would run (``args`` replacing its CMD), and images are not run here."""
        if not self.spec.get("command"):
            return []
        return [str(a) for a in (self.spec.get("command") or [])] + [
            str(a) for a in (self.spec.get("args") or [])
        ]

    @property
    def current(self) -> Instance | None:
        return self.instances[-1] if self.instances else None

    @property
    def restart_count(self) -> int:
        return max(0, len(self.instances) - 1)

    def running(self) -> bool:
        current = self.current
        return current is not None and current.finished_at is None

    def container_id(self) -> str:
        digest = hashlib.sha256(f"{self.directory}/{self.name}/{len(self.instances)}".encode())
        return "containerd://" + digest.hexdigest()

    def log_path(self, instance: int | None = None) -> Path:
        number = self.restart_count if instance is None else instance
        return self.directory / "logs" / self.name / f"{number}.log"


class ProcessPod:
    """The processes of one pod; ``on_change`` is called whenever a container's state changes."""

    def __init__(
        self,
        pod: Mapping[str, Any],
        directory: Path,
        pod_ip: str,
        host_ip: str,
        clock: Clock,
        environment: Callable[[Mapping[str, Any]], dict[str, str]],
        on_change: Callable[[], None],
    ) -> None:
        spec = pod.get("spec") or {}
        meta = pod["metadata"]
        self.uid = str(meta["uid"])
        self.name = str(meta["name"])
        self.namespace = str(meta["namespace"])
        self.restart_policy = str(spec.get("restartPolicy") or "Always")
        grace = spec.get("terminationGracePeriodSeconds")
        #: How long a container killed for failing its liveness probe has to stop.
        self.grace_seconds = float(grace) if isinstance(grace, int) else 30.0
        self.directory = directory
        self.pod_ip = pod_ip
        self.host_ip = host_ip
        self._clock = clock
        self._environment = environment
        self._on_change = on_change
        self.started_at = clock.now()
        self.init = [ProcessContainer(c, directory, True) for c in spec.get("initContainers") or []]
        self.containers = [
            ProcessContainer(c, directory, False) for c in spec.get("containers") or []
        ]
        for container in self.containers:
            probe = container.spec.get("readinessProbe")
            if isinstance(probe, dict):
                container.ready_after = float(probe.get("initialDelaySeconds") or 0)
        self.stopping = False
        self.stopped = False
        self._timers: list[TimerHandle] = []
        self._waiters: set[asyncio.Task[None]] = set()
        self.events: list[tuple[str, str, str, str]] = []  # (type, reason, message, container)

    # -- driving ------------------------------------------------------------------------

    async def advance(self) -> None:
        """Start whatever should run now (init containers in order, then the containers)."""
        if self.stopping:
            return
        for container in self.init:
            current = container.current
            if current is not None and current.exit_code == 0:
                continue
            if not container.running():
                await self._maybe_start(container)
            return  # later containers wait for this init container
        for container in self.containers:
            if not container.running():
                await self._maybe_start(container)

    def _wants_restart(self, container: ProcessContainer) -> bool:
        current = container.current
        if current is None:
            return True
        if current.finished_at is None:
            return False
        if self.restart_policy == "Always" and not container.init:
            return True
        return self.restart_policy in ("Always", "OnFailure") and current.exit_code != 0

    async def _maybe_start(self, container: ProcessContainer) -> None:
        if not self._wants_restart(container):
            return
        now_mono = self._clock.monotonic()
        if container.current is not None:
            if container.restart_at is None:
                failures = container.restart_count
                delay = (
                    0.0
                    if failures == 0
                    else min(BACKOFF_BASE_SECONDS * 2 ** (failures - 1), BACKOFF_MAX_SECONDS)
                )
                container.restart_at = now_mono + delay
                if delay:
                    self.events.append(
                        (
                            "Warning",
                            "BackOff",
                            f"Back-off restarting failed container {container.name} in pod "
                            f"{self.name}_{self.namespace}({self.uid})",
                            container.name,
                        )
                    )
                    self._timers.append(self._clock.call_later(delay, self._on_change))
                    return
            elif container.restart_at > now_mono:
                return
        container.restart_at = None
        await self._start(container)

    async def _start(self, container: ProcessContainer) -> None:
        now = self._clock.now()
        try:
            env = self._environment(container.spec)
        except ContainerConfigError as exc:
            container.config_error = str(exc)
            self.events.append(("Warning", "Failed", f"Error: {exc}", container.name))
            return
        container.config_error = ""
        instance = Instance(now, container.log_path(len(container.instances)))
        container.instances.append(instance)
        instance.log_path.parent.mkdir(parents=True, exist_ok=True)
        instance.log_path.touch()
        argv = container.argv
        if not argv:
            return  # nothing to run: the container "runs" until stopped
        self.events.append(
            ("Normal", "Created", f"Created container: {container.name}", container.name)
        )
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.directory,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            instance.finished_at = now
            instance.exit_code = START_ERROR_EXIT_CODE
            instance.reason = "StartError"
            missing = isinstance(exc, FileNotFoundError)
            instance.message = (
                "failed to create containerd task: failed to create shim task: OCI runtime "
                "create failed: runc create failed: unable to start container process: exec: "
                f'"{argv[0]}": '
                + ("executable file not found in $PATH" if missing else str(exc.strerror))
                + ": unknown"
            )
            self.events.append(("Warning", "Failed", f"Error: {instance.message}", container.name))
            self._on_change()
            return
        instance.process = process
        self.events.append(
            ("Normal", "Started", f"Started container {container.name}", container.name)
        )
        log_file = instance.log_path.open("a", encoding="utf-8")
        lock = asyncio.Lock()
        assert process.stdout is not None and process.stderr is not None
        instance.readers = [
            asyncio.create_task(self._copy(process.stdout, "stdout", log_file, lock)),
            asyncio.create_task(self._copy(process.stderr, "stderr", log_file, lock)),
        ]
        self._waiters.add(asyncio.create_task(self._wait(container, instance, log_file)))
        probe = exec_probe(container.spec)
        if probe is not None:
            instance.prober = asyncio.create_task(
                watch_liveness(
                    probe,
                    self.directory,
                    {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
                    self._clock,
                    lambda type_, reason, message: self._report(container, type_, reason, message),
                    lambda: self._kill_unhealthy(container, process),
                )
            )

    def _report(self, container: ProcessContainer, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message, container.name))
        self._on_change()  # the kubelet flushes events as it reconciles

    async def _kill_unhealthy(
        self, container: ProcessContainer, process: asyncio.subprocess.Process
    ) -> None:
        """Stop a container that failed its liveness probe (its restart policy then applies)."""
        self._report(
            container,
            "Normal",
            "Killing",
            f"Container {container.name} failed liveness probe, will be restarted",
        )
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            async with asyncio.timeout(self.grace_seconds):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    async def _copy(
        self, stream: asyncio.StreamReader, name: str, log_file: Any, lock: asyncio.Lock
    ) -> None:
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode(errors="replace")
            tag = "F" if text.endswith("\n") else "P"
            async with lock:
                log_file.write(
                    f"{log_time(self._clock.now())} {name} {tag} {text.rstrip(chr(10))}\n"
                )
                log_file.flush()

    async def _wait(self, container: ProcessContainer, instance: Instance, log_file: Any) -> None:
        assert instance.process is not None
        code = await instance.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.gather(*instance.readers)
        log_file.close()
        instance.finished_at = self._clock.now()
        instance.exit_code = code if code >= 0 else 128 - code
        instance.reason = "Completed" if instance.exit_code == 0 else "Error"
        if instance.prober is not None:
            instance.prober.cancel()
        self._on_change()

    async def stop(self, grace_seconds: float) -> list[str]:
        """SIGTERM every running process, SIGKILL after ``grace_seconds``; the names stopped."""
        self.stopping = True
        for timer in self._timers:
            timer.cancel()
        self._cancel_probers()
        stopped: list[str] = []
        waits = []
        for container in self.init + self.containers:
            current = container.current
            if current is None or current.finished_at is not None:
                continue
            stopped.append(container.name)
            if current.process is None:
                current.finished_at = self._clock.now()
                current.exit_code = 0
                current.reason = "Completed"
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(current.process.pid, signal.SIGTERM)
            waits.append((current.process, asyncio.ensure_future(current.process.wait())))
        if waits:
            grace: asyncio.Future[None] = asyncio.ensure_future(self._clock.sleep(grace_seconds))
            everyone: asyncio.Future[list[int]] = asyncio.gather(*(w for _, w in waits))
            done_or_grace: list[asyncio.Future[Any]] = [grace, everyone]
            await asyncio.wait(done_or_grace, return_when=asyncio.FIRST_COMPLETED)
            for process, wait in waits:
                if not wait.done():
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    await wait
            grace.cancel()
        # give the waiters a turn to record the exits
        for _ in range(3):
            await asyncio.sleep(0)
        for container in self.init + self.containers:
            for instance in container.instances:
                if instance.readers:
                    with contextlib.suppress(Exception):
                        await asyncio.gather(*instance.readers)
        self.stopped = True
        return stopped

    def _cancel_probers(self) -> None:
        for container in self.containers:
            for instance in container.instances:
                if instance.prober is not None:
                    instance.prober.cancel()

    def kill_now(self) -> None:
        """SIGKILL every process (the server is stopping)."""
        for timer in self._timers:
            timer.cancel()
        self._cancel_probers()
        for container in self.init + self.containers:
            current = container.current
            if current is not None and current.process is not None and current.finished_at is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(current.process.pid, signal.SIGKILL)

    # -- reporting ----------------------------------------------------------------------

    def next_change(self, now: datetime) -> float | None:
        """Seconds until a readiness delay passes (restarts call ``on_change`` themselves)."""
        moments = []
        for container in self.containers:
            current = container.current
            if current is None or current.finished_at is not None or container.ready_after is None:
                continue
            ready = current.started_at + timedelta(seconds=container.ready_after)
            if ready > now:
                moments.append((ready - now).total_seconds())
        if any(c.config_error for c in self.init + self.containers):
            moments.append(2.0)
        return min(moments) if moments else None

    def _container_status(self, container: ProcessContainer, now: datetime) -> dict[str, Any]:
        image = str(container.spec.get("image", ""))
        status: dict[str, Any] = {
            "name": container.name,
            "image": image,
            "imageID": image_id(image),
            "restartCount": container.restart_count,
            "lastState": {},
            "ready": False,
            "started": False,
        }
        current = container.current
        if current is None:
            reason = (
                "CreateContainerConfigError"
                if container.config_error
                else (
                    "PodInitializing" if not container.init and self.init else "ContainerCreating"
                )
            )
            waiting: dict[str, Any] = {"reason": reason}
            if container.config_error:
                waiting["message"] = container.config_error
            status["state"] = {"waiting": waiting}
            return status
        container_id = container.container_id()
        status["containerID"] = container_id
        if len(container.instances) > 1:
            previous = container.instances[-2]
            status["lastState"] = {"terminated": previous.terminated(container_id)}
        if current.finished_at is None:
            ready = container.ready_after is None or now >= current.started_at + timedelta(
                seconds=container.ready_after
            )
            status.update(
                ready=ready and not container.init,
                started=True,
                state={"running": {"startedAt": _text(current.started_at)}},
            )
            return status
        if container.restart_at is not None and not self.stopping:
            wait = max(0, round(container.restart_at - self._clock.monotonic()))
            backoff = min(
                BACKOFF_BASE_SECONDS * 2 ** max(0, container.restart_count - 1),
                BACKOFF_MAX_SECONDS,
            )
            status["lastState"] = {"terminated": current.terminated(container_id)}
            status["state"] = {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off {int(backoff)}s restarting failed container="
                    f"{container.name} pod={self.name}_{self.namespace}({self.uid})",
                }
            }
            del wait
            return status
        status["state"] = {"terminated": current.terminated(container_id)}
        return status

    def phase(self) -> str:
        """Pending, Running, Succeeded or Failed (``getPhase``)."""
        for container in self.init:
            current = container.current
            if current is None or current.finished_at is None:
                return "Pending"
            if current.exit_code != 0:
                if self.restart_policy == "Never":
                    return "Failed"
                return "Pending"
        if any(c.current is None for c in self.containers):
            return "Pending"
        if any(
            c.running() or (c.restart_at is not None and not self.stopping) for c in self.containers
        ):
            return "Running"
        codes = [c.current.exit_code for c in self.containers if c.current is not None]
        if all(code == 0 for code in codes):
            return "Succeeded"
        if self.restart_policy == "Never" or self.stopping:
            return "Failed"
        return "Running"

    def status(
        self, pod: Mapping[str, Any], now: datetime, scheduled: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """The pod status at ``now``."""
        phase = self.phase()
        statuses = [self._container_status(c, now) for c in self.containers]
        init_statuses = [self._container_status(c, now) for c in self.init]
        start = _text(self.started_at)
        terminal = phase in ("Succeeded", "Failed")
        initialized = all(c.current is not None and c.current.exit_code == 0 for c in self.init)
        unready = [s["name"] for s in statuses if not s["ready"]]

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

        ready: tuple[str, str | None, str | None]
        if terminal:
            ready = ("False", "PodCompleted", None)
        elif unready:
            ready = (
                "False",
                "ContainersNotReady",
                f"containers with unready status: [{' '.join(unready)}]",
            )
        else:
            ready = ("True", None, None)
        if initialized:
            init_condition = condition("Initialized", "True", "PodCompleted" if terminal else None)
        else:
            waiting = [c.name for c in self.init if c.current is None or c.current.exit_code != 0]
            init_condition = condition(
                "Initialized",
                "False",
                "ContainersNotInitialized",
                f"containers with incomplete status: [{' '.join(waiting)}]",
            )
        conditions = [
            condition("PodReadyToStartContainers", "False" if terminal else "True"),
            init_condition,
            condition("Ready", *ready),
            condition("ContainersReady", *ready),
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
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        return status

    def container(self, name: str) -> ProcessContainer | None:
        """The container (or init container) called ``name``."""
        for container in self.init + self.containers:
            if container.name == name:
                return container
        return None
