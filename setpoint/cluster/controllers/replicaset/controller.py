"""ReplicaSet sync (``replica_set.go`` ``syncReplicaSet`` / ``manageReplicas``)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping, Sequence
from typing import Any

from setpoint.api.owners import controller_of, controller_reference
from setpoint.api.selectors import LabelSelector
from setpoint.api.times import format_time
from setpoint.cluster.controllers.replicaset.pending_writes import PendingWrites
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.deletion_ranking import pods_to_delete
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid
from setpoint.cluster.controllers.workload_pods.pod_from_template import pod_from_template
from setpoint.cluster.controllers.workload_pods.pod_state import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
)

__all__ = ["BURST_REPLICAS", "COMPONENT", "RESOURCE", "ReplicaSetController"]

COMPONENT = "replicaset-controller"
RESOURCE = "apps/replicasets"
BURST_REPLICAS = 500
"""At most this many pods are created or deleted in one sync (upstream ``burstReplicas``)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _selector(rs: Mapping[str, Any]) -> LabelSelector:
    try:
        return LabelSelector.from_dict((rs.get("spec") or {}).get("selector"))
    except ValueError:
        return LabelSelector.nothing()


class ReplicaSetController:
    """Keeps each ReplicaSet's active pods at ``spec.replicas``."""

    resource = RESOURCE
    #: The kind of the controller (owner references name it); its Events' component.
    kind = "ReplicaSet"
    component = COMPONENT
    watches = ("pods",)

    def selector_of(self, rs: Mapping[str, Any]) -> LabelSelector:
        """The pods ``rs`` selects (a ReplicaSet's selector is a structured label selector)."""
        return _selector(rs)

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context
        self._pending = PendingWrites()

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The ReplicaSets a pod event concerns: its controller, or any selecting an orphan."""
        namespace = str(_meta(obj).get("namespace") or "")
        reference = controller_of(obj)
        if reference is not None:
            if reference.get("kind") == self.kind:
                return [(namespace, str(reference.get("name")))]
            return []
        labels = _meta(obj).get("labels") or {}
        return [
            (namespace, str(_meta(rs)["name"]))
            for rs in self._context.list(self.resource, namespace)
            if self.selector_of(rs).matches(labels) and not self.selector_of(rs).empty
        ]

    async def _claim(
        self, rs: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """Owned pods that match; adopt matching orphans, release pods that stopped matching."""
        selector = self.selector_of(rs)
        uid = _meta(rs).get("uid")
        namespace = str(_meta(rs).get("namespace"))
        claimed: list[Mapping[str, Any]] = []
        for pod in pods:
            owner_uid = controller_uid(pod)
            if owner_uid is not None and owner_uid != uid:
                continue  # another controller's pod (most pods): skip it cheaply
            reference = controller_of(pod) if owner_uid is not None else None
            labels = _meta(pod).get("labels") or {}
            matches = selector.matches(labels) and not selector.empty
            if reference is not None:
                if matches:
                    claimed.append(pod)
                elif is_pod_active(pod):
                    kept = [
                        r for r in _meta(pod).get("ownerReferences") or () if r.get("uid") != uid
                    ]
                    try:
                        await self._context.patch(
                            "pods",
                            namespace,
                            str(_meta(pod)["name"]),
                            {"metadata": {"ownerReferences": kept or None}},
                        )
                    except WriteError:
                        pass
            elif (
                matches
                and not _meta(pod).get("deletionTimestamp")
                and not _meta(rs).get("deletionTimestamp")
            ):
                references = [*(_meta(pod).get("ownerReferences") or ()), controller_reference(rs)]
                try:
                    adopted = await self._context.patch(
                        "pods",
                        namespace,
                        str(_meta(pod)["name"]),
                        {"metadata": {"ownerReferences": references}},
                    )
                except WriteError:
                    continue
                claimed.append(adopted)
        return claimed

    async def _create(
        self, rs: Mapping[str, Any], count: int
    ) -> tuple[list[dict[str, Any]], WriteError | None]:
        """Create ``count`` pods in slow-start batches of 1, 2, 4, ...; stop at the first error."""
        template = (rs.get("spec") or {}).get("template") or {}
        created: list[dict[str, Any]] = []
        batch = 1
        remaining = count
        while remaining > 0:
            size = min(batch, remaining)
            results = await asyncio.gather(
                *(
                    self._context.create("pods", pod_from_template(template, rs))
                    for _ in range(size)
                ),
                return_exceptions=True,
            )
            error: WriteError | None = None
            for result in results:
                if isinstance(result, WriteError):
                    error = error or result
                    self._context.event(
                        rs,
                        "Warning",
                        "FailedCreate",
                        f"Error creating: {result.message}",
                        self.component,
                    )
                elif isinstance(result, BaseException):
                    raise result
                else:
                    created.append(result)
                    self._context.event(
                        rs,
                        "Normal",
                        "SuccessfulCreate",
                        f"Created pod: {result['metadata']['name']}",
                        self.component,
                    )
            if error is not None:
                return created, error
            remaining -= size
            batch *= 2
        return created, None

    async def _delete(
        self, rs: Mapping[str, Any], victims: Sequence[Mapping[str, Any]]
    ) -> tuple[list[str], WriteError | None]:
        namespace = str(_meta(rs).get("namespace"))

        async def delete(pod: Mapping[str, Any]) -> str:
            name = str(_meta(pod)["name"])
            await self._context.delete("pods", namespace, name, uid=_meta(pod).get("uid"))
            return name

        results = await asyncio.gather(*(delete(p) for p in victims), return_exceptions=True)
        deleted: list[str] = []
        error: WriteError | None = None
        for pod, result in zip(victims, results, strict=True):
            name = str(_meta(pod)["name"])
            if isinstance(result, WriteError):
                if result.code == 404:
                    deleted.append(name)
                    continue
                error = error or result
                self._context.event(
                    rs,
                    "Warning",
                    "FailedDelete",
                    f"Error deleting: {result.message}",
                    self.component,
                )
            elif isinstance(result, BaseException):
                raise result
            else:
                deleted.append(name)
                self._context.event(
                    rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name}", self.component
                )
        return deleted, error

    def _related_pods(
        self, rs: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """Pods of every ReplicaSet with the same controller (a Deployment's other sets too)."""
        owner = controller_of(rs)
        namespace = str(_meta(rs).get("namespace"))
        uids = {_meta(rs).get("uid")}
        if owner is not None:
            uids |= {
                _meta(other).get("uid")
                for other in self._context.list(self.resource, namespace)
                if controller_uid(other) == owner.get("uid")
            }
        return [p for p in pods if controller_uid(p) in uids]

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one ReplicaSet; returns seconds until it should be looked at again."""
        key = _key(namespace, name)
        clock = self._context.clock
        rs = self._context.get(self.resource, namespace, name)
        if rs is None:
            self._pending.forget(key)
            return None
        needs_sync = self._pending.satisfied(
            key,
            clock.monotonic(),
            lambda pod: self._context.get("pods", namespace, pod),
            lambda: self._context.list("pods", namespace),
        )
        # Its own pods and the orphans it may adopt, from the index by controller: the other
        # controllers' pods (most of a namespace's) cannot be claimed.
        uid = _meta(rs).get("uid")
        candidates = [
            *self._context.list_controlled("pods", namespace, str(uid) if uid else None),
            *self._context.list_controlled("pods", namespace, None),
        ]
        claimed = await self._claim(rs, candidates)
        active = [p for p in claimed if is_pod_active(p)]
        replicas = int((rs.get("spec") or {}).get("replicas", 1))
        error: WriteError | None = None
        diff = len(active) - replicas
        if needs_sync and not _meta(rs).get("deletionTimestamp") and diff:
            if diff < 0:
                created, error = await self._create(rs, min(-diff, BURST_REPLICAS))
                self._pending.expect(key, clock.monotonic(), created=created)
            else:
                all_pods = self._context.list("pods", namespace)
                victims = pods_to_delete(
                    active, min(diff, BURST_REPLICAS), clock.now(), self._related_pods(rs, all_pods)
                )
                deleted, error = await self._delete(rs, victims)
                self._pending.expect(key, clock.monotonic(), deleted=deleted)
        status = self._status(rs, active, error, diff)
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        await self._write_status(rs, status)
        if (
            error is None
            and min_ready > 0
            and status.get("readyReplicas", 0) == replicas
            and status.get("availableReplicas", 0) != replicas
        ):
            return float(min_ready)
        if not needs_sync:
            return 1.0
        return None

    def _status(
        self,
        rs: Mapping[str, Any],
        active: Sequence[Mapping[str, Any]],
        error: WriteError | None,
        diff: int,
    ) -> dict[str, Any]:
        now = self._context.clock.now()
        spec = rs.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        status = copy.deepcopy(dict(rs.get("status") or {}))
        conditions = [
            c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"
        ]
        failure = next(
            (c for c in status.get("conditions") or () if c.get("type") == "ReplicaFailure"), None
        )
        if error is not None and failure is None:
            reason = "FailedCreate" if diff < 0 else "FailedDelete"
            failure = {
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": format_time(now),
                "reason": reason,
                "message": error.message,
            }
        elif error is None:
            failure = None
        if failure is not None:
            conditions.append(failure)
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        counts = {
            "fullyLabeledReplicas": sum(
                1
                for p in active
                if all(
                    (_meta(p).get("labels") or {}).get(k) == v for k, v in template_labels.items()
                )
            ),
            "readyReplicas": sum(1 for p in active if is_pod_ready(p)),
            "availableReplicas": sum(1 for p in active if is_pod_available(p, min_ready, now)),
            "observedGeneration": int(_meta(rs).get("generation") or 0),
        }
        status["replicas"] = len(active)
        for field, value in counts.items():
            if value:
                status[field] = value
            else:
                status.pop(field, None)
        return status

    async def _write_status(self, rs: Mapping[str, Any], status: dict[str, Any]) -> None:
        if status == (rs.get("status") or {}):
            return
        updated = {**rs, "status": status}
        try:
            await self._context.update_status(self.resource, updated)
        except WriteError as error:
            if error.code not in (404, 409):
                raise
