"""Job sync: apply :func:`plan_job`, then delete finished Jobs after their TTL.

Writes go in upstream's order: the status (with newly finished pods listed as uncounted)
first, then the tracking finalizers come off those pods, then surplus pods are deleted and
missing ones created. ``ttlSecondsAfterFinished`` (upstream's ttl-after-finished controller)
is checked here too: the Job is deleted with Foreground propagation once it expires.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from setpoint.api.owners import controller_of
from setpoint.api.times import parse_time
from setpoint.cluster.controllers.job.job_accounting import (
    COMPLETION_INDEX_ANNOTATION,
    INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
    finished_condition,
    plan_job,
)
from setpoint.cluster.controllers.replicaset.pending_writes import PendingWrites
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.pod_from_template import pod_from_template

__all__ = ["COMPONENT", "RESOURCE", "TTL_COMPONENT", "JobController"]

COMPONENT = "job-controller"
TTL_COMPONENT = "ttl-after-finished-controller"
RESOURCE = "batch/jobs"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class JobController:
    """Runs each Job's pods to completion or failure."""

    resource = RESOURCE
    watches = ("pods",)

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context
        self._pending = PendingWrites()

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The Job that controls a pod."""
        reference = controller_of(obj)
        if reference is None or reference.get("kind") != "Job":
            return []
        return [(str(_meta(obj).get("namespace") or ""), str(reference.get("name")))]

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one Job; returns seconds until it should be looked at again."""
        key = f"{namespace}/{name}"
        job = self._context.get(RESOURCE, namespace, name)
        await self._release_orphans(namespace, name, job)
        if job is None:
            self._pending.forget(key)
            return None
        try:
            return await self._sync(key, job)
        except WriteError as error:
            if error.code in (404, 409):
                return None  # the watch brings the change that caused it
            raise

    async def _sync(self, key: str, job: Mapping[str, Any]) -> float | None:
        clock = self._context.clock
        namespace = str(_meta(job).get("namespace"))
        uid = _meta(job).get("uid")
        pods = self._context.list_controlled("pods", namespace, str(uid) if uid else None)
        if finished_condition(job) is not None:
            for pod in pods:
                await self._release(pod)
            return await self._expire(job)
        if _meta(job).get("deletionTimestamp"):
            for pod in pods:
                await self._release(pod)
            return None
        settled = self._pending.satisfied(
            key,
            clock.monotonic(),
            lambda pod: self._context.get("pods", namespace, pod),
            lambda: self._context.list("pods", namespace),
        )
        plan = plan_job(job, pods, clock.now())
        if not settled:
            plan.create, plan.delete = 0, []
        if plan.status != (job.get("status") or {}):
            updated = await self._context.update_status(RESOURCE, {**job, "status": plan.status})
            job = updated
        for pod in plan.remove_finalizer:
            await self._release(pod)
        deleted = []
        for pod in plan.delete:
            pod_name = str(_meta(pod)["name"])
            try:
                await self._context.delete("pods", namespace, pod_name, uid=_meta(pod).get("uid"))
            except WriteError as error:
                if error.code != 404:
                    self._context.event(
                        job,
                        "Warning",
                        "FailedDelete",
                        f"Error deleting: {error.message}",
                        COMPONENT,
                    )
                    continue
            deleted.append(pod_name)
            self._context.event(
                job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod_name}", COMPONENT
            )
        created = []
        template = (job.get("spec") or {}).get("template") or {}
        indexes: list[int | None] = list(plan.create_indexes) or [None] * plan.create
        per_index = (job.get("spec") or {}).get("backoffLimitPerIndex") is not None
        for index in indexes:
            pod = self._pod(job, template, index)
            if per_index and index is not None:
                pod["metadata"]["annotations"][INDEX_FAILURE_COUNT_ANNOTATION] = str(
                    plan.index_failures.get(index, 0)
                )
            pod["metadata"]["finalizers"] = [
                *pod["metadata"].get("finalizers", []),
                JOB_TRACKING_FINALIZER,
            ]
            try:
                stored = await self._context.create("pods", pod)
            except WriteError as error:
                self._context.event(
                    job, "Warning", "FailedCreate", f"Error creating: {error.message}", COMPONENT
                )
                break
            created.append(stored)
            self._context.event(
                job,
                "Normal",
                "SuccessfulCreate",
                f"Created pod: {stored['metadata']['name']}",
                COMPONENT,
            )
        if created or deleted:
            self._pending.expect(key, clock.monotonic(), created=created, deleted=deleted)
        for event_type, reason, message in plan.events:
            self._context.event(job, event_type, reason, message, COMPONENT)
        if finished_condition(job) is not None:
            return await self._expire(job)
        return plan.requeue_after if settled else 1.0

    @staticmethod
    def _pod(
        job: Mapping[str, Any], template: Mapping[str, Any], index: int | None
    ) -> dict[str, Any]:
        """A pod of ``job``; an Indexed Job's pod carries its completion index."""
        if index is None:
            return pod_from_template(template, job)
        name = str(_meta(job)["name"])
        pod = pod_from_template(template, job, name_prefix=f"{name}-{index}-")
        metadata = pod["metadata"]
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            COMPLETION_INDEX_ANNOTATION: str(index),
        }
        metadata["labels"] = {
            **(metadata.get("labels") or {}),
            COMPLETION_INDEX_ANNOTATION: str(index),
        }
        env = {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"}
            },
        }
        spec = pod["spec"]
        for field in ("initContainers", "containers"):
            for container in spec.get(field) or ():
                variables = [v for v in container.get("env") or () if v.get("name") != env["name"]]
                container["env"] = [*variables, env]
        spec.setdefault("hostname", f"{name}-{index}")
        return pod

    async def _release_orphans(
        self, namespace: str, name: str, job: Mapping[str, Any] | None
    ) -> None:
        """Unblock pods of a Job that is gone (or was replaced by another of the same name).

        Without this a deleted Job's pods would keep the tracking finalizer forever.
        """
        uid = _meta(job).get("uid") if job is not None else None
        for pod in self._context.list("pods", namespace):
            reference = controller_of(pod)
            if (
                reference is not None
                and reference.get("kind") == "Job"
                and reference.get("name") == name
                and reference.get("uid") != uid
            ):
                await self._release(pod)

    async def _release(self, pod: Mapping[str, Any]) -> None:
        finalizers = list(_meta(pod).get("finalizers") or ())
        if JOB_TRACKING_FINALIZER not in finalizers:
            return
        kept = [f for f in finalizers if f != JOB_TRACKING_FINALIZER]
        try:
            await self._context.patch(
                "pods",
                str(_meta(pod).get("namespace")),
                str(_meta(pod)["name"]),
                {"metadata": {"finalizers": kept or None}},
            )
        except WriteError as error:
            if error.code != 404:
                raise

    async def _expire(self, job: Mapping[str, Any]) -> float | None:
        """Delete a finished Job ``ttlSecondsAfterFinished`` after it finished."""
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None or _meta(job).get("deletionTimestamp"):
            return None
        status = job.get("status") or {}
        finished = status.get("completionTime")
        if not finished:
            for condition in status.get("conditions") or ():
                if condition.get("type") == "Failed" and condition.get("status") == "True":
                    finished = condition.get("lastTransitionTime")
        if not finished:
            return None
        expires = parse_time(str(finished)) + timedelta(seconds=int(ttl))
        now = self._context.clock.now()
        if now < expires:
            return (expires - now).total_seconds()
        await self._context.delete(
            RESOURCE,
            str(_meta(job).get("namespace")),
            str(_meta(job)["name"]),
            propagation="Foreground",
            uid=_meta(job).get("uid"),
        )
        return None
