"""Marks silent nodes ``Unknown`` and taints them (``node_lifecycle_controller.go``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.framework.timestamps import parse_time, time_text
from setpoint.cluster.controllers.workload_context import WriteError

#: ``--node-monitor-grace-period`` (50 s since Kubernetes 1.32).
GRACE_PERIOD: Final = timedelta(seconds=50)
LEASES: Final = "coordination.k8s.io/leases"
NODE_LEASE_NAMESPACE: Final = "kube-node-lease"
UNREACHABLE: Final = "node.kubernetes.io/unreachable"
NOT_READY: Final = "node.kubernetes.io/not-ready"
#: The conditions a silent node's kubelet can no longer vouch for.
_CONDITIONS: Final = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
UNKNOWN_REASON: Final = "NodeStatusUnknown"
UNKNOWN_MESSAGE: Final = "Kubelet stopped posting node status."
#: Real seconds between finding a node silent and acting on it (see ``reconcile``).
CONFIRM_SECONDS: Final = 1.0


def ready_status(node: Mapping[str, Any]) -> str:
    """The node's ``Ready`` condition status (``Unknown`` when it has none)."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return str(condition.get("status") or "Unknown")
    return "Unknown"


def _node_key(obj: Object) -> Iterable[ObjectKey]:
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "Lease" and meta.get("namespace") != NODE_LEASE_NAMESPACE:
        return ()
    return (ObjectKey("", meta.get("name") or ""),)


class NodeLifecycleController(Controller):
    """Watches heartbeats; see the package docstring."""

    name: ClassVar[str] = "node-lifecycle"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Nodes found silent once, with the heartbeat they were silent since.
        self._suspects: dict[str, datetime | None] = {}

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:node-controller",
            field_manager="kube-controller-manager",
            component="node-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch("nodes", _node_key), Watch(LEASES, _node_key)]

    def _last_heartbeat(self, node: Mapping[str, Any]) -> datetime | None:
        """The latest of the Lease's renewal and the Ready condition's heartbeat."""
        times: list[datetime] = []
        lease = self.access.get(LEASES, NODE_LEASE_NAMESPACE, node["metadata"]["name"])
        if lease is not None:
            renewed = parse_time((lease.get("spec") or {}).get("renewTime"))
            if renewed is not None:
                times.append(renewed)
        for condition in (node.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Ready":
                beat = parse_time(condition.get("lastHeartbeatTime"))
                if beat is not None:
                    times.append(beat)
        if not times:
            created = parse_time(node["metadata"].get("creationTimestamp"))
            return created
        return max(times)

    async def reconcile(self, key: ObjectKey) -> float | None:
        node = self.access.get("nodes", "", key.name)
        if node is None:
            return None
        now = self.access.clock.now()
        heartbeat = self._last_heartbeat(node)
        silent = heartbeat is not None and now - heartbeat > GRACE_PERIOD
        if silent and self._suspects.get(key.name) != heartbeat:
            # Confirm on the next look, a moment of real time later: when a test's FakeClock
            # jumps past the grace period, the kubelet's own renewal (due in the same jump)
            # may not have reached the cache yet; a stopped kubelet stays silent.
            self._suspects[key.name] = heartbeat
            self.queue.add_after(key, CONFIRM_SECONDS, clock=self.options.retry_clock)
            return None
        if not silent:
            self._suspects.pop(key.name, None)
        try:
            if silent and ready_status(node) != "Unknown":
                node = await self._mark_unknown(node, now)
            await self._taint(node, now)
        except WriteError as error:
            if error.code == 404:
                return None
            raise
        if heartbeat is None or silent:
            return None
        # Look again when the grace period would run out without a new heartbeat.
        return (heartbeat + GRACE_PERIOD - now).total_seconds() + 0.001

    async def _mark_unknown(self, node: Mapping[str, Any], now: datetime) -> Mapping[str, Any]:
        status = dict(node.get("status") or {})
        stamp = time_text(self.access.clock)
        conditions = []
        for condition in status.get("conditions") or []:
            if condition.get("type") in _CONDITIONS:
                condition = {
                    **condition,
                    "status": "Unknown",
                    "reason": UNKNOWN_REASON,
                    "message": UNKNOWN_MESSAGE,
                    "lastTransitionTime": stamp,
                }
            conditions.append(condition)
        status["conditions"] = conditions
        updated = await self.access.update_status("nodes", {**node, "status": status})
        name = node["metadata"]["name"]
        self.access.event(
            node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady"
        )
        await self._mark_pods_not_ready(name)
        return updated

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """``MarkPodsNotReady``: the pods on the node are not ready any more."""
        stamp = time_text(self.access.clock)
        for pod in self.access.list("pods"):
            if (pod.get("spec") or {}).get("nodeName") != node_name:
                continue
            status = dict(pod.get("status") or {})
            changed = False
            conditions = []
            for condition in status.get("conditions") or []:
                if condition.get("type") == "Ready" and condition.get("status") != "False":
                    condition = {**condition, "status": "False", "lastTransitionTime": stamp}
                    changed = True
                conditions.append(condition)
            if not changed:
                continue
            status["conditions"] = conditions
            try:
                await self.access.update_status("pods", {**pod, "status": status})
            except WriteError as error:
                if error.code not in (404, 409):
                    raise
                continue
            self.access.event(pod, "Warning", "NodeNotReady", "Node is not ready")

    async def _taint(self, node: Mapping[str, Any], now: datetime) -> None:
        """Keep the condition taints in step with ``Ready`` (both effects)."""
        ready = ready_status(node)
        wanted_key = {"Unknown": UNREACHABLE, "False": NOT_READY}.get(ready)
        spec = dict(node.get("spec") or {})
        taints = list(spec.get("taints") or [])
        kept = [
            t
            for t in taints
            if t.get("key") not in (UNREACHABLE, NOT_READY) or t.get("key") == wanted_key
        ]
        if wanted_key is not None:
            for effect in ("NoSchedule", "NoExecute"):
                if not any(t.get("key") == wanted_key and t.get("effect") == effect for t in kept):
                    taint: dict[str, Any] = {"key": wanted_key, "effect": effect}
                    if effect == "NoExecute":
                        taint["timeAdded"] = time_text(self.access.clock)
                    kept.append(taint)
        if kept == taints:
            return
        if kept:
            spec["taints"] = kept
        else:
            spec.pop("taints", None)
        await self.access.update("nodes", {**node, "spec": spec})
