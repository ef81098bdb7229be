"""DaemonSet sync: a pod per eligible node, misscheduled and failed pods removed, status."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from setpoint.api.owners import controller_of
from setpoint.cluster.controllers.daemonset.node_placement import (
    node_of,
    node_wants_daemon_pod,
    pin_to_node,
)
from setpoint.cluster.controllers.deployment.rollout_arithmetic import (
    IntOrPercentError,
    resolve_fenceposts,
)
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.adoption import adopt_if_orphan
from setpoint.cluster.controllers.workload_pods.controller_revisions import (
    REVISIONS,
    current_revision,
)
from setpoint.cluster.controllers.workload_pods.pod_from_template import pod_from_template
from setpoint.cluster.controllers.workload_pods.pod_state import (
    is_pod_available,
    is_pod_ready,
    pod_phase,
)

__all__ = ["COMPONENT", "GENERATION_LABEL", "RESOURCE", "DaemonSetController"]

COMPONENT = "daemonset-controller"
RESOURCE = "apps/daemonsets"
GENERATION_LABEL = "pod-template-generation"
_REVISION_LABEL = "controller-revision-hash"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name"))


def _fenceposts(strategy: Mapping[str, Any], desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as node counts: surge rounds up, unavailable down; never 0/0."""
    rolling = strategy.get("rollingUpdate") or {}
    try:
        return resolve_fenceposts(
            rolling.get("maxSurge", 0), rolling.get("maxUnavailable", 1), desired
        )
    except IntOrPercentError:
        return 0, 1


class DaemonSetController:
    """Runs one pod of each DaemonSet on every eligible node."""

    resource = RESOURCE
    # Revisions are watched so that their cache is filled from the start.
    watches = ("pods", "nodes", REVISIONS)

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The DaemonSet of a pod or revision; every DaemonSet for a Node change."""
        if resource == "nodes":
            return [
                (str(_meta(ds).get("namespace")), _name(ds)) for ds in self._context.list(RESOURCE)
            ]
        reference = controller_of(obj)
        if reference is None or reference.get("kind") != "DaemonSet":
            return []
        return [(str(_meta(obj).get("namespace") or ""), str(reference.get("name")))]

    def _event(self, ds: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self._context.event(ds, type, reason, message, COMPONENT)

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one DaemonSet; returns seconds until it should be looked at again."""
        found = self._context.get(RESOURCE, namespace, name)
        if found is None or _meta(found).get("deletionTimestamp"):
            return None
        ds = copy.deepcopy(dict(found))
        try:
            return await self._sync(ds)
        except WriteError as error:
            if error.code in (404, 409):
                return None  # the watch brings the change that caused it
            raise

    async def _create(self, ds: Mapping[str, Any], node: str, revision: str) -> None:
        template = (ds.get("spec") or {}).get("template") or {}
        pod = pod_from_template(template, ds)
        pod["metadata"]["labels"] = {
            **(pod["metadata"].get("labels") or {}),
            _REVISION_LABEL: revision,
            GENERATION_LABEL: str(_meta(ds).get("generation") or 1),
        }
        pin_to_node(pod, node)
        try:
            stored = await self._context.create("pods", pod)
        except WriteError as error:
            self._event(ds, "Warning", "FailedCreate", f"Error creating: {error.message}")
            raise
        self._event(ds, "Normal", "SuccessfulCreate", f"Created pod: {_name(stored)}")

    async def _delete(self, ds: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        try:
            await self._context.delete(
                "pods", str(_meta(pod).get("namespace")), _name(pod), uid=_meta(pod).get("uid")
            )
        except WriteError as error:
            if error.code == 404:
                return
            self._event(ds, "Warning", "FailedDelete", f"Error deleting: {error.message}")
            raise
        self._event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {_name(pod)}")

    async def _sync(self, ds: dict[str, Any]) -> float | None:
        namespace = str(_meta(ds).get("namespace"))
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        current = await current_revision(self._context, ds, label_is_name=False)
        revision = current.label
        generation = str(_meta(ds).get("generation") or 1)
        now = self._context.clock.now()
        min_ready = int(spec.get("minReadySeconds") or 0)
        nodes = {_name(n): n for n in self._context.list("nodes")}
        wanted = {
            name
            for name, node in nodes.items()
            if node_wants_daemon_pod(node, template.get("spec") or {})
        }
        by_node: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for pod in self._context.list("pods", namespace):
            if _meta(pod).get("deletionTimestamp"):
                continue
            owned = await adopt_if_orphan(self._context, "pods", ds, pod)
            if owned is not None:
                by_node[node_of(owned)].append(owned)

        def updated(pod: Mapping[str, Any]) -> bool:
            labels = _meta(pod).get("labels") or {}
            return labels.get(_REVISION_LABEL) == revision or (
                labels.get(GENERATION_LABEL) == generation and _REVISION_LABEL not in labels
            )

        def keep_first(pod: Mapping[str, Any]) -> tuple[bool, bool]:
            # The pod a node keeps (and status reports): updated, then available, first.
            return (not updated(pod), not is_pod_available(pod, min_ready, now))

        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        surge, unavailable_allowed = _fenceposts(strategy, len(wanted)) if rolling else (0, 0)
        for node_name in sorted(wanted):
            pods = sorted(by_node.get(node_name, []), key=keep_first)
            by_node[node_name] = pods
            if pods and pod_phase(pods[0]) == "Failed":
                self._event(
                    ds,
                    "Warning",
                    "FailedDaemonPod",
                    f"Found failed daemon pod {namespace}/{_name(pods[0])} on node {node_name}, "
                    "will try to kill it",
                )
                await self._delete(ds, pods[0])
                continue
            if not pods:
                await self._create(ds, node_name, revision)
                continue
            if surge and len(pods) == 2 and updated(pods[0]) and not updated(pods[1]):
                # A surge pod: the old one goes once the new one is available.
                if is_pod_available(pods[0], min_ready, now):
                    await self._delete(ds, pods[1])
                continue
            for extra in pods[1:]:
                await self._delete(ds, extra)
        for node_name, pods in by_node.items():
            if node_name not in wanted:
                for pod in pods:
                    await self._delete(ds, pod)
        if rolling:
            outdated = [n for n in sorted(wanted) if by_node.get(n) and not updated(by_node[n][0])]
            if surge:
                # maxSurge: start an updated pod beside the old one on up to `surge` nodes.
                surging = sum(1 for n in wanted if len(by_node.get(n) or ()) > 1)
                for node_name in outdated[: max(0, surge - surging)]:
                    await self._create(ds, node_name, revision)
            else:
                # maxUnavailable: delete outdated pods while few enough nodes are unavailable.
                unavailable = {
                    n
                    for n in wanted
                    if not by_node.get(n) or not is_pod_available(by_node[n][0], min_ready, now)
                }
                budget = unavailable_allowed - len(unavailable)
                for node_name in outdated:
                    if node_name in unavailable:
                        await self._delete(ds, by_node[node_name][0])
                    elif budget > 0:
                        await self._delete(ds, by_node[node_name][0])
                        budget -= 1
        await self._write_status(ds, wanted, by_node, updated, min_ready, current.collision_count)
        return None

    async def _write_status(
        self,
        ds: dict[str, Any],
        wanted: set[str],
        by_node: Mapping[str, list[Mapping[str, Any]]],
        updated: Any,
        min_ready: int,
        collisions: int,
    ) -> None:
        now = self._context.clock.now()
        scheduled = [n for n in wanted if by_node.get(n)]
        first = {n: by_node[n][0] for n in scheduled}
        ready = [n for n in scheduled if is_pod_ready(first[n])]
        available = [n for n in scheduled if is_pod_available(first[n], min_ready, now)]
        status: dict[str, Any] = {
            "currentNumberScheduled": len(scheduled),
            "numberMisscheduled": sum(1 for n, pods in by_node.items() if n not in wanted and pods),
            "desiredNumberScheduled": len(wanted),
            "numberReady": len(ready),
            "observedGeneration": int(_meta(ds).get("generation") or 0),
            "updatedNumberScheduled": sum(1 for n in scheduled if updated(first[n])),
            "numberAvailable": len(available),
            "numberUnavailable": len(wanted) - len(available),
        }
        for field in (
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
        ):
            if not status[field]:
                del status[field]
        old = ds.get("status") or {}
        if collisions or old.get("collisionCount") is not None:
            status["collisionCount"] = collisions
        if status == old:
            return
        await self._context.update_status(RESOURCE, {**ds, "status": status})
