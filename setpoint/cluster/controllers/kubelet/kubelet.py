"""The kubelet controller: node registration, leases, simulated pods, logs."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import logging
import shutil
import tempfile
from collections.abc import AsyncIterator, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from setpoint.api.clock import TimerHandle
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import BoundObject
from setpoint.cluster.apiserver.http.pod_endpoints import LogOptions, PodRuntime
from setpoint.cluster.apiserver.kinds.resource_metrics import ContainerUsage
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess, Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.framework.timestamps import micro_time_text, parse_time, time_text
from setpoint.cluster.controllers.kubelet.container_attach import Attachment
from setpoint.cluster.controllers.kubelet.container_env import ContainerConfigError, container_env
from setpoint.cluster.controllers.kubelet.container_logs import read_log
from setpoint.cluster.controllers.kubelet.node_objects import (
    NODE_LEASE_NAMESPACE,
    node_address,
    node_lease,
    node_object,
    node_status,
)
from setpoint.cluster.controllers.kubelet.pod_addresses import PodAddresses
from setpoint.cluster.controllers.kubelet.pod_stages import PodStages
from setpoint.cluster.controllers.kubelet.pod_volumes import PodVolumes
from setpoint.cluster.controllers.kubelet.process_pod import ProcessPod
from setpoint.cluster.controllers.kubelet.resource_usage import ProcessUsage, simulated_usage
from setpoint.cluster.controllers.kubelet.sandbox import Isolation, detect_isolation
from setpoint.cluster.controllers.kubelet.simulated_ephemeral import SimulatedEphemeralContainers
from setpoint.cluster.controllers.kubelet.simulated_pod import SimulatedPod
from setpoint.cluster.controllers.workload_context import WriteError

log = logging.getLogger(__name__)

#: How long a stopping kubelet waits for the processes it killed to be reaped.
KILL_WAIT_SECONDS: Final = 2.0
#: The kubelet renews its node Lease every 10 s (a quarter of its 40 s duration).
LEASE_RENEW_SECONDS: Final = 10.0
#: A Node annotation that stops (``stopped``) the simulated kubelet of that node: no Lease
#: renewals, no status, nothing done to its pods, as when a machine dies or is cut off.
#: ``setpoint cluster node stop|start`` sets and removes it.
KUBELET_ANNOTATION: Final = "setpoint.dev/kubelet"
KUBELET_STOPPED: Final = "stopped"
#: A Node created with this label set to "true" gets a simulated kubelet of its own, as if a
#: machine joined (``setpoint cluster node add``); deleting the Node removes it again.
SIMULATED_NODE_LABEL: Final = "setpoint.dev/simulated-node"
_MANAGED_STATUS: Final = (
    "phase",
    "conditions",
    "hostIP",
    "hostIPs",
    "podIP",
    "podIPs",
    "startTime",
    "containerStatuses",
    "initContainerStatuses",
    "ephemeralContainerStatuses",
)
SIMULATED_LOG_LINE: Final = (
    "setpoint: this container's output is simulated (no process ran); serve the cluster "
    "with --run-pods to run the command of each container\n"
)


class Kubelet(Controller):
    """Runs the pods bound to this cluster's nodes (simulated, or as sandboxed processes)."""

    name: ClassVar[str] = "kubelet"
    workers: ClassVar[int] = 4

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        super().__init__(access, options)
        self.nodes = {name: index for index, name in enumerate(options.node_names())}
        self.addresses = PodAddresses()
        self._runs: dict[str, SimulatedPod | ProcessPod] = {}
        #: The ephemeral containers of simulated pods, by pod uid.
        self._simulated_ephemeral: dict[str, SimulatedEphemeralContainers] = {}
        #: Nodes whose kubelet is stopped (annotation ``setpoint.dev/kubelet: stopped``).
        self.stopped: set[str] = set()
        #: Nodes added while the cluster runs (Node objects with the simulated-node label).
        self._added: set[str] = set()
        self._process_usage = ProcessUsage()
        self._stopping: dict[str, asyncio.Task[list[str]]] = {}
        self._pods_root: Path | None = None
        self._temporary_root = False
        self._uid_at: dict[ObjectKey, str] = {}
        self._lease_timer: TimerHandle | None = None
        self._renewal: asyncio.Task[None] | None = None
        self._isolation: Isolation | None = None
        #: kwok Stages for pods: when any exist, they move the pods instead of the simulation.
        self.stages = PodStages(access, self._node_ip, self._stage_pod_ip)

    def _node_ip(self, node: str) -> str:
        return node_address(self.nodes[node]) if node in self.nodes else ""

    def _stage_pod_ip(self, pod: Mapping[str, Any]) -> str:
        uid = str(pod["metadata"]["uid"])
        self._uid_at[key_of(pod)] = uid  # released with the pod (see _forget)
        return self.addresses.allocate(uid)

    def _stages_changed(self, new: Object | None, old: Object | None) -> None:
        """A Stage came, changed or went: every pod of this kubelet is matched again."""
        for pod in self.access.list("pods"):
            node = (pod.get("spec") or {}).get("nodeName")
            if node in self.nodes and node not in self.stopped:
                self.stages.forget(key_of(pod))
                self.enqueue(key_of(pod))

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:node:setpoint-node", field_manager="kubelet", component="kubelet"
        )

    def watches(self) -> list[Watch]:
        return [Watch("pods", self._my_pods), Watch("nodes", self._my_nodes)]

    def _my_pods(self, pod: Object) -> Iterable[ObjectKey]:
        node = (pod.get("spec") or {}).get("nodeName")
        if node in self.nodes and node not in self.stopped:
            return (key_of(pod),)
        return ()

    def _my_nodes(self, node: Object) -> Iterable[ObjectKey]:
        # A node's key has no namespace: reconcile tells it from a pod's by that.
        meta = node.get("metadata") or {}
        name = str(meta.get("name") or "")
        simulated = (meta.get("labels") or {}).get(SIMULATED_NODE_LABEL) == "true"
        return (ObjectKey("", name),) if name in self.nodes or simulated else ()

    def pod_runtime(self) -> PodRuntime | None:
        return self

    # -- nodes and leases ---------------------------------------------------------------

    async def start(self) -> None:
        for name, index in self.nodes.items():
            await self._register(name, index)
        self._schedule_lease_renewal()
        if not self.options.run_pods and self.stages.served():
            self.stages.watch(self._stages_changed)

    async def _register(self, name: str, index: int) -> None:
        nodes = self.access.resource("nodes")
        node = self.access.read_stored(nodes, None, name)
        if node is None:
            node = await self.access.create_in(nodes, node_object(name))
        node["status"] = node_status(index, name, time_text(self.access.clock))
        node = await self.access.update_in(nodes, node, "status")
        leases = self.access.resource("coordination.k8s.io/leases")
        lease = node_lease(name, node["metadata"]["uid"], micro_time_text(self.access.clock))
        stored = self.access.read_stored(leases, NODE_LEASE_NAMESPACE, name)
        if stored is None:
            await self.access.create_in(leases, lease)
        else:
            stored["spec"] = lease["spec"]
            stored["metadata"]["ownerReferences"] = lease["metadata"]["ownerReferences"]
            await self.access.update_in(leases, stored)

    def _schedule_lease_renewal(self) -> None:
        def renew() -> None:
            self._renewal = asyncio.get_running_loop().create_task(self._renew_leases())

        self._lease_timer = self.access.clock.call_later(LEASE_RENEW_SECONDS, renew)

    async def _reconcile_node(self, name: str) -> None:
        """Run a node added with the simulated-node label, forget one removed, and stop or
        start the kubelet of node ``name`` as its annotation says."""
        node = self.access.get("nodes", "", name)
        if node is None:
            if name in self._added:  # removed: its machine is gone, nothing runs there any more
                self._added.discard(name)
                self.nodes.pop(name, None)
                self.stopped.discard(name)
                log.info("node %s removed: its kubelet is gone", name)
            return
        labels = (node.get("metadata") or {}).get("labels") or {}
        if name not in self.nodes and labels.get(SIMULATED_NODE_LABEL) == "true":
            self.nodes[name] = max(self.nodes.values(), default=-1) + 1
            self._added.add(name)
            log.info("node %s added: its kubelet registers it", name)
            await self._register(name, self.nodes[name])
        wanted_stopped = (
            node is not None
            and ((node.get("metadata") or {}).get("annotations") or {}).get(KUBELET_ANNOTATION)
            == KUBELET_STOPPED
        )
        if wanted_stopped and name not in self.stopped:
            self.stopped.add(name)
            log.info("kubelet of node %s stopped: no more heartbeats or pod updates", name)
        elif not wanted_stopped and name in self.stopped and node is not None:
            self.stopped.discard(name)
            log.info("kubelet of node %s started again", name)
            await self._register(name, self.nodes[name])
            # Catch up with what happened to its pods meanwhile (deletions above all).
            for pod in self.access.list("pods"):
                if (pod.get("spec") or {}).get("nodeName") == name:
                    self.enqueue(key_of(pod))

    async def _renew_leases(self) -> None:
        leases = self.access.resource("coordination.k8s.io/leases")
        for name in self.nodes:
            if name in self.stopped:
                continue
            try:
                await self.access.patch_in(
                    leases,
                    NODE_LEASE_NAMESPACE,
                    name,
                    {"spec": {"renewTime": micro_time_text(self.access.clock)}},
                )
            except WriteError as exc:
                log.debug("lease %s not renewed: %s", name, exc.message)
        self._schedule_lease_renewal()

    async def stop(self) -> None:
        if self._lease_timer is not None:
            self._lease_timer.cancel()
        await super().stop()
        pending = [*self._stopping.values(), *([self._renewal] if self._renewal else [])]
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        killed = [run for run in self._runs.values() if isinstance(run, ProcessPod)]
        for run in killed:
            run.kill_now()
        await asyncio.gather(*(run.wait_killed(KILL_WAIT_SECONDS) for run in killed))
        if self._pods_root is not None and self._temporary_root:
            shutil.rmtree(self._pods_root, ignore_errors=True)

    def _pod_directory(self, pod: Mapping[str, Any]) -> Path:
        if self._pods_root is None:
            if self.options.pods_dir:
                self._pods_root = Path(self.options.pods_dir).expanduser()
            else:
                self._pods_root = Path(tempfile.mkdtemp(prefix="setpoint-pods-"))
                self._temporary_root = True
        meta = pod["metadata"]
        directory = self._pods_root / f"{meta['namespace']}_{meta['name']}_{meta['uid']}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "volumes").mkdir(exist_ok=True)
        if self.isolation() is not None:
            # The sandbox's user (nobody, under a root server) must reach its own working
            # directory and volumes to mount them, and list nothing on the way (0711).
            for path in (self._pods_root, directory, directory / "volumes"):
                path.chmod(0o711)
        return directory

    # -- pods ---------------------------------------------------------------------------

    def _forget(self, key: ObjectKey) -> None:
        self.stages.forget(key)
        uid = self._uid_at.pop(key, None)
        if uid is not None:
            run = self._runs.pop(uid, None)
            if isinstance(run, ProcessPod):
                run.kill_now()
                # The pod's files and logs go with it, as the kubelet cleans up its pod
                # directory and /var/log/pods; off the event loop (a log may be large).
                asyncio.get_running_loop().run_in_executor(
                    None, functools.partial(shutil.rmtree, run.directory, ignore_errors=True)
                )
            self._stopping.pop(uid, None)
            self._simulated_ephemeral.pop(uid, None)
            self.addresses.release(uid)

    async def reconcile(self, key: ObjectKey) -> float | None:
        if not key.namespace:
            await self._reconcile_node(key.name)
            return None
        pod = self.access.get("pods", key.namespace, key.name)
        if pod is None:
            self._forget(key)
            return None
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if node not in self.nodes or node in self.stopped:
            return None
        meta = pod["metadata"]
        uid = str(meta["uid"])
        if self._uid_at.get(key) not in (None, uid):
            self._forget(key)
        if not self.options.run_pods:
            stages = self.stages.stages()
            if stages:
                return await self.stages.step(key, pod, node, stages)
        now = self.access.clock.now()
        run = self._runs.get(uid)
        phase = (pod.get("status") or {}).get("phase")
        if "deletionTimestamp" in meta:
            if isinstance(run, ProcessPod) and not run.stopped:
                self._stop_processes(key, pod, run, node)
                return None
            if (
                run is None
                and not self.options.run_pods
                and phase not in ("Succeeded", "Failed")
                and (pod.get("status") or {}).get("podIP")
            ):
                run = self._start(pod, node, now)  # ran before this kubelet started
            await self._terminate(pod, run, node)
            return None
        if phase in ("Succeeded", "Failed") and run is None:
            return None
        if run is None:
            run = self._start(pod, node, now)
        if isinstance(run, ProcessPod):
            for name in run.add_ephemeral(spec.get("ephemeralContainers") or []):
                self._pulled_ephemeral(pod, node, name)
            await run.advance()
            self._flush_events(pod, node, run)
        status = run.status(pod, now, _scheduled(pod, run))
        ephemeral_delay = None
        if isinstance(run, SimulatedPod):
            ephemeral_delay = self._run_simulated_ephemeral(pod, node, run, status, now)
        current = pod.get("status") or {}
        if isinstance(run, SimulatedPod):
            self._transition_events(pod, node, current, status)
        if any(current.get(field) != status.get(field) for field in _MANAGED_STATUS):
            await self.access.write_status_in(
                self.access.resource("pods"),
                key.namespace,
                key.name,
                status,
                uid=uid,
                server_built=True,
            )
        delay = min(
            (d for d in (run.next_change(now), ephemeral_delay) if d is not None), default=None
        )
        if delay is None:
            return None
        # Time may have moved during the awaits above (a test advancing a FakeClock): the
        # next change is due that much sooner, at once if it has passed.
        return delay - (self.access.clock.now() - now).total_seconds()

    def _start(self, pod: Mapping[str, Any], node: str, now: Any) -> SimulatedPod | ProcessPod:
        meta = pod["metadata"]
        uid = str(meta["uid"])
        status = pod.get("status") or {}
        if self.options.run_pods:
            return self._start_processes(pod, node)
        started = parse_time(status.get("startTime"))
        if status.get("podIP") and started is not None:
            # Running before this kubelet started (a restarted --data-dir cluster): adopt it.
            self.addresses.reserve(uid, status["podIP"])
            run = SimulatedPod.start(
                pod, started, status["podIP"], node_address(self.nodes[node]), self._run_seconds
            )
        else:
            run = SimulatedPod.start(
                pod,
                now,
                self.addresses.allocate(uid),
                node_address(self.nodes[node]),
                self._run_seconds,
            )
            unpulled = {c.name for c in run.containers if c.pull_error is not None}
            self._started_events(pod, node, unpulled)
            for error in run.annotation_errors:
                self.access.recorder.record(
                    pod, "Warning", "InvalidSimulation", error, "kubelet", host=node
                )
        self._runs[uid] = run
        self._uid_at[key_of(pod)] = uid
        return run

    def isolation(self) -> Isolation | None:
        """How pods are confined: None when they run unconfined (``--run-pods=unsafe``, or no
        isolation on this machine)."""
        if self.options.run_pods_unconfined:
            return None
        if self._isolation is None:
            self._isolation = self.options.isolation or detect_isolation()
            self._isolation = self._isolation.with_hidden(self.options.protected_paths)
            if self._pods_root is not None:
                self._isolation = self._isolation.with_hidden([self._pods_root])
        return self._isolation if self._isolation.available else None

    def _service_env(self) -> dict[str, str]:
        """The ``kubernetes`` Service's variables the kubelet gives every container."""
        host, port = self.options.api_host, str(self.options.api_port())
        return {
            "KUBERNETES_SERVICE_HOST": host,
            "KUBERNETES_SERVICE_PORT": port,
            "KUBERNETES_SERVICE_PORT_HTTPS": port,
            "KUBERNETES_PORT": f"tcp://{host}:{port}",
            f"KUBERNETES_PORT_{port}_TCP": f"tcp://{host}:{port}",
            f"KUBERNETES_PORT_{port}_TCP_PROTO": "tcp",
            f"KUBERNETES_PORT_{port}_TCP_PORT": port,
            f"KUBERNETES_PORT_{port}_TCP_ADDR": host,
        }

    def _issue_token(
        self,
        namespace: str,
        account: str,
        audiences: list[str],
        seconds: int,
        pod: Mapping[str, Any],
    ) -> str:
        tokens = self.options.service_account_tokens
        found = self._lookup("serviceaccounts", namespace, account)
        if tokens is None or found is None:
            raise ContainerConfigError(f'serviceaccount "{account}" not found')
        meta = pod["metadata"]
        return tokens.issue(
            dict(found),
            audiences or list(tokens.audiences),
            seconds,
            BoundObject("Pod", str(meta["name"]), str(meta["uid"])),
        )

    def _start_processes(self, pod: Mapping[str, Any], node: str) -> ProcessPod:
        meta = pod["metadata"]
        uid = str(meta["uid"])
        key = key_of(pod)
        pod_ip = self.addresses.allocate(uid)
        host_ip = node_address(self.nodes[node])
        view = copy.deepcopy(dict(pod))
        view.setdefault("status", {}).update(podIP=pod_ip, hostIP=host_ip)
        service_env = self._service_env()

        def environment(container: Mapping[str, Any]) -> dict[str, str]:
            return {**service_env, **container_env(view, container, self._lookup)}

        directory = self._pod_directory(pod)
        isolation = self.isolation()
        owner = (
            None
            if isolation is None or isolation.uid is None
            else (isolation.uid, isolation.gid or isolation.uid)
        )
        volumes = PodVolumes(
            view,
            directory / "volumes",
            self._lookup,
            lambda ns, account, audiences, seconds: self._issue_token(
                ns, account, audiences, seconds, pod
            ),
            owner,
        )
        run = ProcessPod(
            pod,
            directory,
            pod_ip,
            host_ip,
            self.access.clock,
            environment,
            lambda: self.enqueue(key),
            isolation=isolation,
            volumes=volumes if isolation is not None else None,
            log_max_size=self.options.container_log_max_size,
            log_max_files=self.options.container_log_max_files,
        )
        spec = pod.get("spec") or {}
        for kind in ("initContainers", "containers"):
            for container in spec.get(kind) or []:
                image = container.get("image", "")
                self._event(
                    pod,
                    node,
                    "Pulled",
                    f'Container image "{image}" already present on machine',
                    f"spec.{kind}{{{container.get('name', '')}}}",
                )
        self._runs[uid] = run
        self._uid_at[key] = uid
        return run

    def _lookup(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = self.access.read_stored(
            self.access.resource(resource), namespace, name
        )
        return found

    def _pulled_ephemeral(self, pod: Mapping[str, Any], node: str, name: str) -> None:
        for spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            if spec.get("name") == name:
                self._event(
                    pod,
                    node,
                    "Pulled",
                    f'Container image "{spec.get("image", "")}" already present on machine',
                    f"spec.ephemeralContainers{{{name}}}",
                )

    def _run_simulated_ephemeral(
        self,
        pod: Mapping[str, Any],
        node: str,
        run: SimulatedPod,
        status: dict[str, Any],
        now: Any,
    ) -> float | None:
        """Start a simulated pod's new ephemeral containers and add their statuses to
        ``status``; seconds until one of them ends by itself."""
        if not (pod.get("spec") or {}).get("ephemeralContainers"):
            return None
        ephemeral = self._simulated_ephemeral.setdefault(
            run.uid, SimulatedEphemeralContainers(run.uid, self._run_seconds)
        )
        for name in ephemeral.add(pod, now):
            self._pulled_ephemeral(pod, node, name)
            path = f"spec.ephemeralContainers{{{name}}}"
            self._event(pod, node, "Created", f"Created container: {name}", path)
            self._event(pod, node, "Started", f"Started container {name}", path)
        status["ephemeralContainerStatuses"] = ephemeral.statuses(now)
        return ephemeral.next_change(now)

    def _flush_events(self, pod: Mapping[str, Any], node: str, run: ProcessPod) -> None:
        init_names = {c.name for c in run.init}
        ephemeral_names = {c.name for c in run.ephemeral}
        for type_, reason, message, container in run.events:
            kind = (
                "initContainers"
                if container in init_names
                else "ephemeralContainers"
                if container in ephemeral_names
                else "containers"
            )
            self.access.recorder.record(
                pod,
                type_,
                reason,
                message,
                "kubelet",
                host=node,
                field_path=f"spec.{kind}{{{container}}}",
            )
        run.events.clear()

    def _stop_processes(
        self, key: ObjectKey, pod: Mapping[str, Any], run: ProcessPod, node: str
    ) -> None:
        if run.uid in self._stopping:
            return
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace_seconds = float(grace) if isinstance(grace, int) else 30.0
        for container in run.containers:
            if container.running():
                self._event(
                    pod,
                    node,
                    "Killing",
                    f"Stopping container {container.name}",
                    f"spec.containers{{{container.name}}}",
                )
        task = asyncio.get_running_loop().create_task(run.stop(grace_seconds))
        task.add_done_callback(lambda _: self.enqueue(key))
        self._stopping[run.uid] = task

    @property
    def _run_seconds(self) -> float:
        return self.options.simulated_run_seconds

    def _started_events(
        self,
        pod: Mapping[str, Any],
        node: str,
        not_pulled: Collection[str] = (),
    ) -> None:
        spec = pod.get("spec") or {}
        for kind, containers in (
            ("initContainers", spec.get("initContainers") or []),
            ("containers", spec.get("containers") or []),
        ):
            for container in containers:
                name = container.get("name", "")
                if kind == "containers" and name in not_pulled:
                    continue  # its pull fails: see _transition_events
                path = f"spec.{kind}{{{name}}}"
                image = container.get("image", "")
                self._event(
                    pod,
                    node,
                    "Pulled",
                    f'Container image "{image}" already present on machine',
                    path,
                )
                self._event(pod, node, "Created", f"Created container: {name}", path)
                self._event(pod, node, "Started", f"Started container {name}", path)

    def _event(
        self,
        pod: Mapping[str, Any],
        node: str,
        reason: str,
        message: str,
        path: str,
        type_: str = "Normal",
    ) -> None:
        self.access.recorder.record(
            pod, type_, reason, message, "kubelet", host=node, field_path=path
        )

    def _transition_events(
        self,
        pod: Mapping[str, Any],
        node: str,
        current: Mapping[str, Any],
        status: Mapping[str, Any],
    ) -> None:
        """The kubelet's Events for what changed in a simulated pod's containers since the
        status it last wrote: restarts, crash-loop back-off, image pull failures."""
        before = {s.get("name"): s for s in current.get("containerStatuses") or []}
        meta = pod["metadata"]
        pod_ref = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
        for entry in status.get("containerStatuses") or []:
            name = entry["name"]
            old = before.get(name) or {}
            path = f"spec.containers{{{name}}}"
            image = entry.get("image", "")
            waiting = (entry.get("state") or {}).get("waiting") or {}
            old_waiting = (old.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason")
            if entry.get("restartCount", 0) > old.get("restartCount", 0):
                self._event(
                    pod,
                    node,
                    "Pulled",
                    f'Container image "{image}" already present on machine',
                    path,
                )
                self._event(pod, node, "Created", f"Created container: {name}", path)
                self._event(pod, node, "Started", f"Started container {name}", path)
            if reason == old_waiting.get("reason"):
                continue
            if reason == "CrashLoopBackOff":
                self._event(
                    pod,
                    node,
                    "BackOff",
                    f"Back-off restarting failed container {name} in pod {pod_ref}",
                    path,
                    "Warning",
                )
            elif reason == "ErrImagePull":
                self._event(pod, node, "Pulling", f'Pulling image "{image}"', path)
                self._event(
                    pod,
                    node,
                    "Failed",
                    f'Failed to pull image "{image}": {waiting.get("message", "")}',
                    path,
                    "Warning",
                )
                self._event(pod, node, "Failed", "Error: ErrImagePull", path, "Warning")
            elif reason == "ImagePullBackOff":
                self._event(pod, node, "BackOff", f'Back-off pulling image "{image}"', path)
                self._event(pod, node, "Failed", "Error: ImagePullBackOff", path, "Warning")

    async def _terminate(
        self, pod: Mapping[str, Any], run: SimulatedPod | ProcessPod | None, node: str
    ) -> None:
        meta = pod["metadata"]
        pods = self.access.resource("pods")
        if run is not None:
            now = self.access.clock.now()
            if isinstance(run, ProcessPod):
                self._flush_events(pod, node, run)  # preStop hook failures
            if isinstance(run, SimulatedPod):
                for name in run.kill(now):
                    self._event(
                        pod,
                        node,
                        "Killing",
                        f"Stopping container {name}",
                        f"spec.containers{{{name}}}",
                    )
            status = run.status(pod, now, _scheduled(pod, run))
            ephemeral = self._simulated_ephemeral.get(run.uid)
            if isinstance(run, SimulatedPod) and ephemeral is not None:
                ephemeral.kill(now)
                status["ephemeralContainerStatuses"] = ephemeral.statuses(now)
            try:
                await self.access.write_status_in(
                    pods,
                    meta["namespace"],
                    meta["name"],
                    status,
                    uid=meta["uid"],
                    server_built=True,
                )
            except WriteError as exc:
                if exc.code not in (404, 409):
                    raise
        try:
            await self.access.delete_in(
                pods, meta["namespace"], meta["name"], uid=meta["uid"], grace_period_seconds=0
            )
        except WriteError as exc:
            if exc.code not in (404, 409):
                raise
        self._forget(key_of(pod))

    # -- metrics ------------------------------------------------------------------------

    def usage(self, pod: dict[str, Any]) -> list[ContainerUsage] | None:
        """Each running container's CPU and memory (``metrics.k8s.io``); None when the pod
        does not run here. See :mod:`.resource_usage`."""
        run = self._runs.get(str(pod["metadata"].get("uid")))
        if run is None or not self.reachable((pod.get("spec") or {}).get("nodeName") or ""):
            return None
        if isinstance(run, ProcessPod):
            usages = []
            for spec in (pod.get("spec") or {}).get("containers") or []:
                container = run.container(str(spec.get("name", "")))
                if container is None or not container.running():
                    continue
                current = container.current
                usages.append(
                    self._process_usage.read(
                        container.container_id(),
                        container.name,
                        current.pid if current is not None else None,
                    )
                )
            return usages
        names = [str(c.get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []]
        return simulated_usage(pod, names, self.access.clock.now().timestamp())

    def reachable(self, node: str) -> bool:
        """Whether ``node``'s kubelet runs here and is not stopped (a stopped one cannot be
        scraped, so its node and pods have no metrics, as with metrics-server)."""
        return node in self.nodes and node not in self.stopped

    # -- logs ---------------------------------------------------------------------------

    def container_log_path(self, uid: str, container: str) -> Path | None:
        """The current log file of ``container`` of the ``--run-pods`` pod ``uid``."""
        run = self._runs.get(uid)
        found = run.container(container) if isinstance(run, ProcessPod) else None
        return None if found is None else found.log_path()

    def exec_context(
        self, pod: dict[str, Any], container: str, command: list[str]
    ) -> tuple[list[str], str, dict[str, str]]:
        """``command`` wrapped to run inside ``container`` (its sandbox), the working
        directory and the environment to start it with (``--run-pods``)."""
        run = self._runs.get(str(pod["metadata"].get("uid")))
        if not isinstance(run, ProcessPod):
            raise status_errors.bad_request(
                "containers are simulated: serve the cluster with --run-pods to exec into them"
            )
        found = run.container(container)
        current = found.current if found is not None else None
        if found is None or current is None or not found.running() or current.pid is None:
            # No process, no sandbox to run in (a container without a command "runs" with
            # none): not found, as a kubelet answers for a container the runtime does not run.
            meta = pod["metadata"]
            raise status_errors.bad_request(
                f"container {container} not found in pod {meta['name']}_{meta['namespace']}"
            )
        view = copy.deepcopy(pod)
        view.setdefault("status", {}).update(podIP=run.pod_ip, hostIP=run.host_ip)
        try:
            env = {**self._service_env(), **container_env(view, found.spec, self._lookup)}
        except Exception as exc:
            raise status_errors.bad_request(str(exc)) from exc
        argv, options = run.command_in(found, command, env)
        return argv, str(options["cwd"]), dict(options["env"])

    def attach(self, pod: dict[str, Any], container: str, stdin: bool, tty: bool) -> Attachment:
        """A session attached to ``container``'s running process (``--run-pods``); as the
        kubelet, a container without one (simulated, finished, or without a command) is not
        found."""
        run = self._runs.get(str(pod["metadata"].get("uid")))
        attached = run.attach(container, stdin, tty) if isinstance(run, ProcessPod) else None
        if attached is None:
            meta = pod["metadata"]
            raise status_errors.bad_request(
                f"container {container} not found in pod {meta['name']}_{meta['namespace']}"
            )
        return attached

    async def logs(self, pod: dict[str, Any], options: LogOptions) -> AsyncIterator[bytes]:
        """The container's output: its log file under --run-pods, else one line saying the
        output is simulated."""
        run = self._runs.get(str(pod["metadata"].get("uid")))
        if isinstance(run, ProcessPod):
            container = run.container(options.container)
            if container is not None:
                async for chunk in read_log(container, options, self.access.clock):
                    yield chunk
                return
        line = SIMULATED_LOG_LINE
        if options.timestamps:
            line = f"{micro_time_text(self.access.clock).replace('.000000Z', 'Z')} {line}"
        if options.tail_lines == 0:
            return
        data = line.encode()
        if options.limit_bytes is not None:
            data = data[: options.limit_bytes]
        yield data


def _scheduled(pod: Mapping[str, Any], run: SimulatedPod | ProcessPod) -> Mapping[str, Any]:
    """The PodScheduled condition to report: the scheduler's, or (a pod created with
    ``nodeName``) True since the pod started, as the kubelet adds it."""
    found = _condition(pod, "PodScheduled")
    if found is not None:
        return found
    return {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": run.started_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _condition(pod: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == type_:
            return condition  # type: ignore[no-any-return]
    return None
