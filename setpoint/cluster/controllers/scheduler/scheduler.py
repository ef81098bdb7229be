"""The scheduler controller (``pkg/scheduler/schedule_one.go``: bind, handleSchedulingFailure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from setpoint.cluster.apiserver.kinds.pod_binding import bind_pod
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess, Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.scheduler.node_fit import (
    NodeUsage,
    failure_message,
    pod_requests,
    unfit_reasons,
)

SCHEDULER_NAME: Final = "default-scheduler"
REPORTING_INSTANCE: Final = "default-scheduler-setpoint"
_RESOURCE_REASONS: Final = frozenset({"Insufficient cpu", "Insufficient memory", "Too many pods"})
_TERMINAL: Final = frozenset({"Succeeded", "Failed"})


def _waiting_for_node(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
        and "deletionTimestamp" not in (pod.get("metadata") or {})
        and (pod.get("status") or {}).get("phase") not in _TERMINAL
    )


class Scheduler(Controller):
    """Binds pods whose ``schedulerName`` is ``default-scheduler`` to a node that fits."""

    name: ClassVar[str] = "scheduler"

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        super().__init__(access, options)
        self._usage: dict[str, NodeUsage] = {}
        self._assigned: dict[str, str] = {}
        self._unschedulable: set[ObjectKey] = set()

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:kube-scheduler", field_manager="kube-scheduler", component=SCHEDULER_NAME
        )

    def watches(self) -> list[Watch]:
        return [Watch("pods", self._pod_keys), Watch("nodes", self._retry_unschedulable)]

    def _pod_keys(self, pod: Object) -> Iterable[ObjectKey]:
        self._account(pod)
        if _waiting_for_node(pod):
            return (key_of(pod),)
        return ()

    def _retry_unschedulable(self, node: Object) -> Iterable[ObjectKey]:
        return list(self._unschedulable)

    def _account(self, pod: Mapping[str, Any]) -> None:
        """Keep per-node requests current (called for old and new states of every pod)."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        live = self.access.get("pods", meta.get("namespace") or "", meta.get("name") or "")
        current = live if live is not None and live["metadata"].get("uid") == uid else None
        node = ((current or {}).get("spec") or {}).get("nodeName")
        terminal = ((current or {}).get("status") or {}).get("phase") in _TERMINAL
        previous = self._assigned.get(uid)
        if current is None or not node or terminal:
            if previous is not None:
                self._usage[previous].remove(uid)
                del self._assigned[uid]
                for key in list(self._unschedulable):  # room freed: try the waiting pods
                    self.enqueue(key)
            return
        if previous == node:
            return
        if previous is not None:
            self._usage[previous].remove(uid)
        cpu, memory = pod_requests(current)
        self._usage.setdefault(node, NodeUsage()).add(uid, cpu, memory)
        self._assigned[uid] = node

    async def reconcile(self, key: ObjectKey) -> float | None:
        pod = self.access.get("pods", key.namespace, key.name)
        if pod is None or not _waiting_for_node(pod):
            self._unschedulable.discard(key)
            return None
        if (pod.get("spec") or {}).get("schedulingGates"):
            await self._unschedulable_status(
                pod, "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"
            )
            return None
        nodes = self.access.list("nodes")

        def load(node: Mapping[str, Any]) -> tuple[int, str]:
            name = node["metadata"]["name"]
            return self._usage.setdefault(name, NodeUsage()).pods, name

        # The least-loaded node that fits wins; reasons are gathered only when none fits.
        chosen = next(
            (
                load(node)[1]
                for node in sorted(nodes, key=load)
                if not unfit_reasons(pod, node, self._usage[node["metadata"]["name"]])
            ),
            None,
        )
        if chosen is None:
            reasons: Counter[str] = Counter()
            resource_failures = 0
            for node in nodes:
                why = unfit_reasons(pod, node, self._usage[node["metadata"]["name"]])
                reasons.update(why)
                if any(reason in _RESOURCE_REASONS for reason in why):
                    resource_failures += 1
            self._unschedulable.add(key)
            await self._unschedulable_status(
                pod, "Unschedulable", failure_message(len(nodes), reasons, resource_failures)
            )
            return None
        self._unschedulable.discard(key)
        await self._bind(pod, chosen)
        return None

    async def _bind(self, pod: Mapping[str, Any], node: str) -> None:
        meta = pod["metadata"]
        pods = self.access.resource("pods")
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        try:
            await bind_pod(
                self.access.operations,
                pods,
                meta["namespace"],
                meta["name"],
                binding,
                time_text(self.access.clock),
            )
        except APIError as exc:
            if exc.code in (404, 409):
                return
            raise
        bound = self.access.read_stored(pods, meta["namespace"], meta["name"])
        if bound is not None:
            self.access.informers.informer_for(pods).observe(bound)
            self._account(bound)
        self.access.recorder.record_v1(
            pod,
            "Normal",
            "Scheduled",
            "Binding",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}",
            SCHEDULER_NAME,
            REPORTING_INSTANCE,
        )

    async def _unschedulable_status(
        self, pod: Mapping[str, Any], reason: str, message: str
    ) -> None:
        status = pod.get("status") or {}
        conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
        previous = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if (
            previous is not None
            and previous.get("status") == "False"
            and previous.get("reason") == reason
            and previous.get("message") == message
        ):
            return
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": (
                previous.get("lastTransitionTime")
                if previous is not None and previous.get("status") == "False"
                else time_text(self.access.clock)
            ),
            "reason": reason,
            "message": message,
        }
        conditions = [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]
        meta = pod["metadata"]
        await self.access.patch_in(
            self.access.resource("pods"),
            meta["namespace"],
            meta["name"],
            {"status": {"conditions": conditions}},
            "status",
        )
        if reason == "Unschedulable":
            self.access.recorder.record_v1(
                pod,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                message,
                SCHEDULER_NAME,
                REPORTING_INSTANCE,
            )
