"""A pod whose containers run as local processes (``setpoint cluster serve --run-pods``).

Each container's ``command`` + ``args`` runs in the pod's working directory (``work/`` of its
directory, shared by its containers) with the pod's environment, inside a sandbox
(:mod:`.sandbox`) that also holds the volumes it mounts (:mod:`.pod_volumes`); without
isolation (``--run-pods=unsafe``) it runs as the server's user in its own process group. The
image is ignored, and a container without a ``command`` keeps "running" without a process (its
image's entrypoint would run, with ``args`` in place of the image's CMD, and there is no image
to run). Output goes to one log file per container instance (:mod:`.log_files`). Exit codes
set the container states and the pod phase; with restartPolicy Always (any exit) or OnFailure
(non-zero) the container is started again, the second time at once and then after kubelet's
back-off (10 s doubling to 300 s, on the cluster clock) shown as ``CrashLoopBackOff``. Init
containers run first, one at a time. Ephemeral containers (``kubectl debug``) start once added
and are never restarted; one with a ``targetContainerName`` runs inside that container's
sandbox (its PID namespace and the rest), so it sees the target's processes. A container with
``stdin: true`` keeps its stdin open for ``kubectl attach`` (:mod:`.container_attach`).

When a container's main process exits, every process it left ends too (its PID namespace goes
away; unconfined, its process group is killed). Deletion runs each container's ``preStop``
exec hook, sends SIGTERM to the main process, waits for what is left of the grace period
(at least 2 s after a hook, as the kubelet), then SIGKILL. An ``exec`` liveness probe that keeps
failing stops the container the same way (:mod:`.liveness`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from setpoint.api.clock import Clock, TimerHandle
from setpoint.api.go_format import go_quote
from setpoint.cluster.controllers.kubelet.container_attach import Attachment, ContainerStreams
from setpoint.cluster.controllers.kubelet.container_env import ContainerConfigError
from setpoint.cluster.controllers.kubelet.liveness import Launcher, exec_probe, watch_liveness
from setpoint.cluster.controllers.kubelet.log_files import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_SIZE,
    ContainerLogWriter,
    log_time,
)
from setpoint.cluster.controllers.kubelet.pod_volumes import PodVolumes
from setpoint.cluster.controllers.kubelet.restart_backoff import (
    BACKOFF_BASE_SECONDS,
    BACKOFF_MAX_SECONDS,
)
from setpoint.cluster.controllers.kubelet.sandbox import Isolation, sandboxed_command
from setpoint.cluster.controllers.kubelet.simulated_pod import image_id

START_ERROR_EXIT_CODE: Final = 128
#: ``minimumGracePeriodInSeconds``: what SIGTERM always gets after a preStop hook.
MINIMUM_GRACE_SECONDS: Final = 2.0
#: Bytes read from a container's stdout or stderr pipe at a time.
PIPE_READ_BYTES: Final = 64 * 1024
#: How long an unconfined container's output may still arrive after its process group ended.
DRAIN_SECONDS: Final = 1.0
#: How long (steps x seconds) a stop waits for a just-started sandbox to fork its command.
COMMAND_WAIT_STEPS: Final = 100
COMMAND_WAIT_SECONDS: Final = 0.01
#: How often an unconfined container's main process is checked for its exit.
EXIT_POLL_SECONDS: Final = 0.02

__all__ = ["Instance", "ProcessContainer", "ProcessPod", "log_time"]


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Instance:
    """One run of a container: its process (if it started) and how it ended."""

    started_at: datetime
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    #: The host PID of the container's main process (unconfined) or its sandbox's init.
    pid: int | None = None
    #: Whether it runs in a sandbox (else in its own process group).
    sandboxed: bool = False
    #: The init of the sandbox it joined (an ephemeral container in its target's), if any.
    joined: int | None = None
    finished_at: datetime | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    prober: asyncio.Task[None] | None = None
    #: Its stdin and the attach sessions reading its output (None: no process).
    streams: ContainerStreams | None = None

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
    ephemeral: bool = False
    instances: list[Instance] = field(default_factory=list)
    config_error: str = ""
    restart_at: float | None = None  # clock monotonic time of the next start
    ready_after: float | None = None

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def argv(self) -> list[str]:
        """``command`` + ``args``. Without a ``command`` the image's entrypoint would run with
        ``args`` in place of its CMD, and images are not run here: ``args`` alone run when
        their first word is a program (``args: [/bin/sh, -c, ...]`` on busybox, alpine,
        ubuntu ..., whose images have no entrypoint), else nothing runs."""
        args = [str(a) for a in (self.spec.get("args") or [])]
        if not self.spec.get("command"):
            return args if args and _is_program(args[0]) else []
        return [str(a) for a in (self.spec.get("command") or [])] + args

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

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the running instance's main process (unconfined: its group)."""
        current = self.current
        if current is None or current.pid is None or current.finished_at is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if not current.sandboxed:
                os.killpg(current.pid, signum)
                return
            # SIGKILL ends the sandbox's init and so the whole PID namespace; SIGTERM goes
            # to the command, which the init follows when it exits.
            target = None if signum == signal.SIGKILL else sandboxed_command(current.pid)
            os.kill(current.pid if target is None else target, signum)

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
        *,
        isolation: Isolation | None = None,
        volumes: PodVolumes | None = None,
        log_max_size: int = DEFAULT_MAX_SIZE,
        log_max_files: int = DEFAULT_MAX_FILES,
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
        #: The containers' shared working directory (the sandbox's only writable host path).
        self.workdir = directory / "work"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.isolation = isolation if isolation is not None and isolation.available else None
        if self.isolation is not None and self.isolation.uid is not None:
            os.chown(self.workdir, self.isolation.uid, self.isolation.gid or self.isolation.uid)
        self._volumes = volumes
        self._log_max_size = log_max_size
        self._log_max_files = log_max_files
        self.pre_stop_timeout = self.grace_seconds
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
        self.ephemeral: list[ProcessContainer] = []
        self.add_ephemeral(spec.get("ephemeralContainers") or [])
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
        for container in self.ephemeral:
            if container.current is None:
                await self._start(container)

    def add_ephemeral(self, specs: list[Mapping[str, Any]]) -> list[str]:
        """Take the ephemeral containers of ``specs`` not seen yet; their names."""
        known = {c.name for c in self.ephemeral}
        added = []
        for spec in specs:
            name = str(spec.get("name", ""))
            if name and name not in known:
                self.ephemeral.append(ProcessContainer(spec, self.directory, False, True))
                known.add(name)
                added.append(name)
        return added

    def _inside(self, container: ProcessContainer) -> int | None:
        """The sandbox an ephemeral container joins: its target's, when that one runs."""
        target_name = str(container.spec.get("targetContainerName") or "")
        if not container.ephemeral or not target_name or self.isolation is None:
            return None
        target = self.container(target_name)
        current = target.current if target is not None else None
        if current is None or current.finished_at is not None or not current.sandboxed:
            return None
        return current.pid

    def _wants_restart(self, container: ProcessContainer) -> bool:
        current = container.current
        if current is None:
            return True
        if current.finished_at is None or container.ephemeral:
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
            mounts = [] if self._volumes is None else self._volumes.mounts(container.spec)
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
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
        try:
            if self.isolation is not None and _missing(argv[0], env["PATH"]):
                raise FileNotFoundError(argv[0])  # bwrap would only say it failed
            inside = self._inside(container)
            process, pid = await self.spawn(
                argv, env, mounts, stdin=bool(container.spec.get("stdin")), inside=inside
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
        instance.pid = pid
        instance.sandboxed = self.isolation is not None and inside is None
        instance.joined = inside
        instance.streams = ContainerStreams(process.stdin, bool(container.spec.get("stdinOnce")))
        self.events.append(
            ("Normal", "Started", f"Started container {container.name}", container.name)
        )
        writer = ContainerLogWriter(
            instance.log_path, self._clock.now, self._log_max_size, self._log_max_files
        )
        assert process.stdout is not None and process.stderr is not None
        instance.readers = [
            asyncio.create_task(self._copy(process.stdout, "stdout", writer, instance.streams)),
            asyncio.create_task(self._copy(process.stderr, "stderr", writer, instance.streams)),
        ]
        self._waiters.add(asyncio.create_task(self._wait(container, instance, writer)))
        probe = exec_probe(container.spec)
        if probe is not None:
            instance.prober = asyncio.create_task(
                watch_liveness(
                    probe,
                    self.launcher(instance, env),
                    self._clock,
                    lambda type_, reason, message: self._report(container, type_, reason, message),
                    lambda: self._kill_unhealthy(container, process),
                )
            )

    async def spawn(
        self,
        argv: list[str],
        env: dict[str, str],
        mounts: list[Any],
        *,
        stdin: bool = False,
        inside: int | None = None,
    ) -> tuple[asyncio.subprocess.Process, int]:
        """Start ``argv`` (in a sandbox when isolated; in the running sandbox whose init is
        host PID ``inside`` when given): the process and its main PID. With ``stdin`` its
        stdin is a pipe kept open for attach, else ``/dev/null``."""
        stdin_mode = asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL
        if self.isolation is not None and inside is not None:
            argv = self.isolation.enter_argv(inside, argv)
        if self.isolation is None or inside is not None:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.workdir,
                env=env,
                stdin=stdin_mode,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            return process, process.pid
        read, write = os.pipe()
        info = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(info), os.fdopen(read, "rb", buffering=0)
            )
        except BaseException:
            os.close(read)
            os.close(write)
            raise
        try:
            try:
                process = await asyncio.create_subprocess_exec(
                    *self.isolation.sandbox_argv(self.workdir, mounts, argv, write),
                    cwd=self.workdir,
                    env=env,
                    stdin=stdin_mode,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                    pass_fds=(write,),
                )
            finally:
                os.close(write)
            reported = await info.read()  # bwrap closes it once the sandbox runs (or fails)
        finally:
            transport.close()
        try:
            pid = int(json.loads(reported)["child-pid"])
        except (ValueError, KeyError, TypeError):
            pid = process.pid  # bwrap failed before the command ran: its exit says why
        else:
            await _sandbox_set_up(pid)
        return process, pid

    def launcher(self, instance: Instance, env: dict[str, str]) -> Launcher:
        """Runs a command "in" ``instance``'s container (exec, probes, hooks): inside its
        sandbox, or unconfined in the working directory; returns (argv, spawn options)."""

        def launch(argv: list[str]) -> tuple[list[str], dict[str, Any]]:
            options: dict[str, Any] = {"cwd": self.workdir, "env": env}
            sandbox = instance.joined if instance.joined is not None else instance.pid
            if self.isolation is None:
                return argv, options
            if sandbox is None:
                # Never run it outside a sandbox: there is none without a process.
                raise ProcessLookupError(f"container has no process to run {argv[0]!r} in")
            return self.isolation.enter_argv(sandbox, argv), options

        return launch

    def command_in(
        self, container: ProcessContainer, argv: list[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, Any]]:
        """``argv`` wrapped to run inside ``container`` (``kubectl exec``) and its options."""
        current = container.current
        assert current is not None
        return self.launcher(current, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env})(
            argv
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
        await self._terminate(container)
        try:
            async with asyncio.timeout(self.grace_seconds):
                await process.wait()
        except TimeoutError:
            container.signal(signal.SIGKILL)

    async def _copy(
        self,
        stream: asyncio.StreamReader,
        name: str,
        writer: ContainerLogWriter,
        streams: ContainerStreams,
    ) -> None:
        # Chunks, not lines: no line is too long, and the pipe is always drained.
        while True:
            data = await stream.read(PIPE_READ_BYTES)
            if not data:
                return
            writer.write(name, data)
            streams.publish(name, data)

    async def _wait(
        self, container: ProcessContainer, instance: Instance, writer: ContainerLogWriter
    ) -> None:
        assert instance.process is not None
        code = await _exited(instance.process, instance.sandboxed)
        if not instance.sandboxed and instance.pid is not None:
            # What the main process left in its group ends with it (a sandbox's PID
            # namespace does this by itself).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(instance.pid, signal.SIGKILL)
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                await asyncio.gather(*instance.readers, return_exceptions=True)
        except TimeoutError:
            # A process that left the group (setsid) still holds the pipe: stop reading it.
            for reader in instance.readers:
                reader.cancel()
        writer.close()
        if instance.streams is not None:
            instance.streams.end()
        instance.finished_at = self._clock.now()
        instance.exit_code = code if code >= 0 else 128 - code
        instance.reason = "Completed" if instance.exit_code == 0 else "Error"
        if instance.prober is not None:
            instance.prober.cancel()
        self._on_change()

    async def _terminate(self, container: ProcessContainer) -> None:
        """SIGTERM to ``container``'s command. A sandbox that has only just started may not
        have forked its command yet (its init would ignore the signal): wait for it a little."""
        current = container.current
        if current is not None and current.sandboxed and current.pid is not None:
            for _ in range(COMMAND_WAIT_STEPS):
                process = current.process
                if sandboxed_command(current.pid) is not None or (
                    process is None or process.returncode is not None
                ):
                    break
                await asyncio.sleep(COMMAND_WAIT_SECONDS)
        container.signal(signal.SIGTERM)

    async def _pre_stop(self, container: ProcessContainer, limit: float) -> None:
        """Run ``container``'s ``preStop`` exec hook, for at most ``limit`` seconds."""
        hook = ((container.spec.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}
        command = [str(a) for a in hook.get("command") or []]
        current = container.current
        if not command or current is None or current.process is None:
            return
        try:
            env = self._environment(container.spec)
        except ContainerConfigError:
            env = {}
        argv, options = self.command_in(container, command, env)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                **options,
            )
        except OSError as exc:
            self.events.append(("Warning", "FailedPreStopHook", str(exc), container.name))
            return
        try:
            async with asyncio.timeout(limit):
                output, _ = await process.communicate()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            return
        if process.returncode != 0:
            # As the kubelet's handler runner words it (lifecycle/handlers.go).
            text = output.decode(errors="replace")
            joined = " ".join(command)
            self.events.append(
                (
                    "Warning",
                    "FailedPreStopHook",
                    f"Exec lifecycle hook ([{joined}]) for Container {go_quote(container.name)} "
                    f"in Pod {go_quote(f'{self.name}_{self.namespace}({self.uid})')} failed - "
                    f"error: command '{joined}' exited with {process.returncode}: , "
                    f"message: {go_quote(text)}",
                    container.name,
                )
            )

    async def stop(self, grace_seconds: float) -> list[str]:
        """Run preStop hooks, SIGTERM every running container's main process, SIGKILL what
        is left after ``grace_seconds``; the names stopped."""
        self.stopping = True
        for timer in self._timers:
            timer.cancel()
        self._cancel_probers()
        stopped: list[str] = []
        running: list[tuple[ProcessContainer, asyncio.subprocess.Process]] = []
        for container in self.init + self.containers + self.ephemeral:
            current = container.current
            if current is None or current.finished_at is not None:
                continue
            stopped.append(container.name)
            if current.process is None:
                current.finished_at = self._clock.now()
                current.exit_code = 0
                current.reason = "Completed"
                continue
            running.append((container, current.process))
        if running:
            began = time.monotonic()
            hooks = [self._pre_stop(c, grace_seconds) for c, _ in running]
            await asyncio.gather(*hooks)
            spent = time.monotonic() - began
            left = grace_seconds - spent
            if any(_has_pre_stop(c) for c, _ in running):
                left = max(left, MINIMUM_GRACE_SECONDS)
            await asyncio.gather(*(self._terminate(c) for c, _ in running))
            waits = [
                asyncio.ensure_future(_exited(p, c.current is not None and c.current.sandboxed))
                for c, p in running
            ]
            grace: asyncio.Future[None] = asyncio.ensure_future(self._clock.sleep(max(left, 0)))
            everyone: asyncio.Future[list[int]] = asyncio.gather(*waits)
            done_or_grace: list[asyncio.Future[Any]] = [grace, everyone]
            await asyncio.wait(done_or_grace, return_when=asyncio.FIRST_COMPLETED)
            for (container, _), wait in zip(running, waits, strict=True):
                if not wait.done():
                    container.signal(signal.SIGKILL)
                    await wait
            grace.cancel()
        for waiter in list(self._waiters):
            with contextlib.suppress(Exception):
                await waiter
        self.stopped = True
        return stopped

    def _cancel_probers(self) -> None:
        for container in self.containers:
            for instance in container.instances:
                if instance.prober is not None:
                    instance.prober.cancel()

    async def wait_killed(self, limit_seconds: float) -> None:
        """After :meth:`kill_now`: wait (at most ``limit_seconds``) until every process has
        been reaped and its pipes closed, so nothing outlives the event loop."""
        pending = [waiter for waiter in self._waiters if not waiter.done()]
        if pending:
            await asyncio.wait(pending, timeout=limit_seconds)

    def kill_now(self) -> None:
        """SIGKILL every process (the server is stopping)."""
        for timer in self._timers:
            timer.cancel()
        self._cancel_probers()
        for container in self.init + self.containers + self.ephemeral:
            container.signal(signal.SIGKILL)
            current = container.current
            if current is not None and current.process is not None and current.sandboxed:
                with contextlib.suppress(ProcessLookupError, PermissionError):
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
        if any(c.config_error for c in self.init + self.containers + self.ephemeral):
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
                ready=ready and not container.init and not container.ephemeral,
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
        if self.ephemeral:
            status["ephemeralContainerStatuses"] = [
                self._container_status(c, now) for c in self.ephemeral
            ]
        return status

    def container(self, name: str) -> ProcessContainer | None:
        """The container (init, regular or ephemeral) called ``name``."""
        for container in self.init + self.containers + self.ephemeral:
            if container.name == name:
                return container
        return None

    def attach(self, name: str, stdin: bool, tty: bool) -> Attachment | None:
        """A session attached to container ``name``'s running process (None: no process)."""
        found = self.container(name)
        current = found.current if found is not None else None
        if current is None or current.finished_at is not None or current.streams is None:
            return None
        return current.streams.attach(stdin, tty)


def _has_pre_stop(container: ProcessContainer) -> bool:
    hook = ((container.spec.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}
    return bool(hook.get("command"))


def _missing(program: str, path: str) -> bool:
    """Whether ``program`` is neither on ``path`` nor a file (as ``execvp`` would find it)."""
    return shutil.which(program, path=path) is None and not os.path.isfile(program)


async def _exited(process: asyncio.subprocess.Process, sandboxed: bool) -> int:
    """The exit status of ``process``'s main process.

    ``Process.wait()`` also waits for the output pipes to close. A sandbox's processes all end
    with it, so that is soon; unconfined, a child the main process left behind may hold the
    pipes open, so the exit status (set once the process is reaped) is polled instead.
    """
    if sandboxed:
        return await process.wait()
    waiter = asyncio.ensure_future(process.wait())
    try:
        while process.returncode is None:
            # Usually the pipes close with the exit and ``wait()`` answers at once.
            await asyncio.wait([waiter], timeout=EXIT_POLL_SECONDS)
    finally:
        if not waiter.done():
            waiter.cancel()
    return process.returncode


#: How long a new sandbox may take to be set up (then entering it fails as it would have, with
#: nsenter's own message).
_SET_UP_PATIENCE_SECONDS: Final = 2.0


async def _sandbox_set_up(pid: int) -> None:
    """Wait until the sandbox whose init is host ``pid`` runs its command.

    bwrap reports its child's PID as soon as the child exists, while the child is still setting
    the sandbox up: it enters a second user namespace (the one mapping the sandbox's user)
    only at the end. An exec, probe or hook entering it before then fails in ``nsenter``
    (``setgid failed: Invalid argument``), as a loaded machine showed. The init starts the
    command last, so its first child is the sign that the sandbox is complete.
    """
    deadline = time.monotonic() + _SET_UP_PATIENCE_SECONDS
    # Polled: the kernel tells no one when a process forks (the wait is a millisecond or two).
    for _ in range(int(_SET_UP_PATIENCE_SECONDS * 1000)):
        if _running_or_gone(pid) or time.monotonic() > deadline:
            return
        await asyncio.sleep(0.001)


def _running_or_gone(pid: int) -> bool:
    """Whether the sandbox init ``pid`` has started its command, or has already ended."""
    return sandboxed_command(pid) is not None or not os.path.exists(f"/proc/{pid}")


def _is_program(word: str) -> bool:
    """Whether ``word`` names an executable: an absolute path to one, or one on ``PATH``."""
    if word.startswith("/"):
        return os.path.isfile(word) and os.access(word, os.X_OK)
    return "/" not in word and shutil.which(word) is not None
