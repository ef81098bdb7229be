"""Deletes orphaned pods, terminating pods on out-of-service nodes, and the oldest finished
pods beyond the threshold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.workload_context import WriteError

#: How long a pod's node must stay missing before the pod is collected (upstream's).
QUARANTINE_SECONDS: Final = 40.0
#: How often finished pods are counted against the threshold (upstream's gcCheckPeriod).
CHECK_PERIOD_SECONDS: Final = 20.0
#: The key of the periodic sweep of finished pods (no pod has an empty namespace).
SWEEP: Final = ObjectKey("", "")
FINISHED: Final = ("Succeeded", "Failed")
#: The taint an administrator puts on a node known to be gone for good (non-graceful shutdown).
OUT_OF_SERVICE: Final = "node.kubernetes.io/out-of-service"


def _node_of(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _out_of_service(node: Mapping[str, Any]) -> bool:
    """Not ready and tainted ``node.kubernetes.io/out-of-service`` (someone declared it gone)."""
    ready = next(
        (
            c.get("status")
            for c in (node.get("status") or {}).get("conditions") or []
            if c.get("type") == "Ready"
        ),
        None,
    )
    taints = (node.get("spec") or {}).get("taints") or []
    return ready != "True" and any(t.get("key") == OUT_OF_SERVICE for t in taints)


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


class PodGarbageCollector(Controller):
    """Collects pods whose node is gone, and finished pods beyond the threshold."""

    name: ClassVar[str] = "pod-garbage-collector"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: uid → when the pod was first seen bound to a missing node.
        self._missing_since: dict[str, datetime] = {}

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:pod-garbage-collector",
            field_manager="PodGC",
            component="pod-garbage-collector",
        )

    def watches(self) -> list[Watch]:
        return [Watch("pods"), Watch("nodes", self._pods_on)]

    def _pods_on(self, node: Object) -> Iterable[ObjectKey]:
        return self.access.keys_of_pods_on(node)

    async def start(self) -> None:
        if self.options.terminated_pod_gc_threshold > 0:
            self.enqueue_after(SWEEP, CHECK_PERIOD_SECONDS)

    async def reconcile(self, key: ObjectKey) -> float | None:
        if key == SWEEP:
            await self._delete_finished_beyond_threshold()
            return CHECK_PERIOD_SECONDS
        pod = self.access.get("pods", key.namespace, key.name)
        if pod is None:
            return None
        uid = str(pod["metadata"]["uid"])
        node = _node_of(pod)
        found = self.access.get("nodes", "", node) if node else None
        if found is not None and pod["metadata"].get("deletionTimestamp"):
            self._missing_since.pop(uid, None)
            if _out_of_service(found):
                # Its kubelet will never finish the deletion: upstream's gcTerminating.
                await self._fail_and_delete(pod, condition=False)
            return None
        if not node or found is not None:
            self._missing_since.pop(uid, None)
            return None
        now = self.access.clock.now()
        since = self._missing_since.setdefault(uid, now)
        remaining = QUARANTINE_SECONDS - (now - since).total_seconds()
        if remaining > 0:
            return remaining
        # The cache may lag: collect only when the node is absent from storage too.
        if self.access.read_stored(self.access.resource("nodes"), None, node) is not None:
            self._missing_since.pop(uid, None)
            return None
        await self._fail_and_delete(pod)
        self._missing_since.pop(uid, None)
        return None

    async def _fail_and_delete(self, pod: Mapping[str, Any], *, condition: bool = True) -> None:
        """Mark the pod ``Failed`` (unless it finished) and delete it at once; ``condition``:
        with the ``DisruptionTarget`` condition saying its node is gone (the orphan case; a
        terminating pod on an out-of-service node gets none, as upstream)."""
        meta = pod["metadata"]
        pods = self.access.resource("pods")
        status = dict(pod.get("status") or {})
        if _phase(pod) not in FINISHED:
            status["phase"] = "Failed"
        if condition:
            target = {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": time_text(self.access.clock),
                "reason": "DeletionByPodGC",
                "message": "PodGC: node no longer exists",
            }
            others = [c for c in status.get("conditions") or [] if c.get("type") != target["type"]]
            status["conditions"] = [*others, target]
        try:
            await self.access.write_status_in(
                pods, meta["namespace"], meta["name"], status, uid=meta["uid"]
            )
            await self.access.delete_in(
                pods, meta["namespace"], meta["name"], uid=meta["uid"], grace_period_seconds=0
            )
        except WriteError as exc:
            if exc.code != 404:  # gone already; a 409 is retried
                raise

    async def _delete_finished_beyond_threshold(self) -> None:
        threshold = self.options.terminated_pod_gc_threshold
        finished = [p for p in self.access.list("pods") if _phase(p) in FINISHED]
        excess = len(finished) - threshold
        if threshold <= 0 or excess <= 0:
            return
        # Oldest first; equal (second-resolution) creation times in name order, as upstream.
        finished.sort(
            key=lambda p: (str(p["metadata"].get("creationTimestamp") or ""), p["metadata"]["name"])
        )
        pods = self.access.resource("pods")
        for pod in finished[:excess]:
            meta = pod["metadata"]
            try:
                await self.access.delete_in(
                    pods, meta["namespace"], meta["name"], uid=meta["uid"], grace_period_seconds=0
                )
            except WriteError as exc:
                if exc.code not in (404, 409):
                    raise
