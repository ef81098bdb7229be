"""Deletes pods from nodes whose ``NoExecute`` taints they do not tolerate
(``pkg/controller/tainteviction``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, ClassVar

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.workload_context import WriteError


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``Toleration.ToleratesTaint``."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")


def eviction_delay(
    tolerations: list[Mapping[str, Any]], taints: list[Mapping[str, Any]]
) -> float | None:
    """Seconds the pod may stay (0: go now; None: it tolerates every taint for ever)."""
    shortest: float | None = None
    forever = True
    for taint in taints:
        matching = [t for t in tolerations if tolerates(t, taint)]
        if not matching:
            return 0.0
        for toleration in matching:
            seconds = toleration.get("tolerationSeconds")
            if seconds is None:
                continue
            forever = False
            value = max(float(seconds), 0.0)
            shortest = value if shortest is None else min(shortest, value)
    if forever:
        return None
    return shortest


class TaintEvictionController(Controller):
    """Evicts pods from ``NoExecute``-tainted nodes (see the package docstring)."""

    name: ClassVar[str] = "taint-eviction"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: When an eviction was first scheduled for a pod (upstream counts from then).
        self._scheduled_at: dict[ObjectKey, datetime] = {}

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:taint-eviction-controller",
            field_manager="kube-controller-manager",
            component="taint-eviction-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch("pods", lambda pod: (key_of(pod),)), Watch("nodes", self._pods_on)]

    def _pods_on(self, node: Object) -> Iterable[ObjectKey]:
        return self.access.keys_of_pods_on(node)

    async def reconcile(self, key: ObjectKey) -> float | None:
        pod = self.access.get("pods", key.namespace, key.name)
        node_name = (pod.get("spec") or {}).get("nodeName") if pod is not None else None
        node = self.access.get("nodes", "", node_name) if node_name else None
        if pod is None or node is None or pod["metadata"].get("deletionTimestamp"):
            self._scheduled_at.pop(key, None)
            return None
        taints = [
            t
            for t in (node.get("spec") or {}).get("taints") or []
            if t.get("effect") == "NoExecute"
        ]
        delay = (
            eviction_delay(list((pod.get("spec") or {}).get("tolerations") or []), taints)
            if taints
            else None
        )
        if delay is None:
            self._scheduled_at.pop(key, None)
            return None
        now = self.access.clock.now()
        since = self._scheduled_at.setdefault(key, now)
        due = since + timedelta(seconds=delay)
        if due > now:
            return (due - now).total_seconds()
        self._scheduled_at.pop(key, None)
        await self._evict(pod)
        return None

    async def _evict(self, pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        self.access.event(
            pod,
            "Normal",
            "TaintManagerEviction",
            f"Marking for deletion Pod {meta.get('namespace')}/{meta.get('name')}",
        )
        status = dict(pod.get("status") or {})
        conditions = [
            c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": time_text(self.access.clock),
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
            }
        )
        try:
            await self.access.update_status(
                "pods", {**pod, "status": {**status, "conditions": conditions}}
            )
            await self.access.delete(
                "pods", meta.get("namespace") or "", meta.get("name") or "", uid=meta.get("uid")
            )
        except WriteError as error:
            if error.code not in (404, 409):
                raise
