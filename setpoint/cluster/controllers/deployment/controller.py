"""Deployment sync (``deployment_controller.go`` ``syncDeployment`` and its strategies)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from setpoint.api.owners import controller_of, controller_reference
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.controllers.deployment import deployment_status as status_logic
from setpoint.cluster.controllers.deployment.replica_sets import (
    POD_TEMPLATE_HASH_LABEL,
    REVISION_ANNOTATION,
    equal_ignore_hash,
    is_active,
    spec_replicas,
    sum_status_replicas,
)
from setpoint.cluster.controllers.deployment.revisions import (
    DESIRED_REPLICAS_ANNOTATION,
    find_new_replica_set,
    history_to_delete,
    max_revision,
    set_new_replica_set_annotations,
    set_replicas_annotations,
)
from setpoint.cluster.controllers.deployment.rollout_arithmetic import (
    IntOrPercentError,
    active_or_latest,
    deployment_replicas,
    is_rolling_update,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    proportional_scale,
    scale_down_old_for_rolling_update,
    unhealthy_cleanup,
)
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid
from setpoint.cluster.controllers.workload_pods.pod_state import pod_phase
from setpoint.cluster.controllers.workload_pods.template_hash import compute_hash

__all__ = ["COMPONENT", "RESOURCE", "DeploymentController"]

COMPONENT = "deployment-controller"
RESOURCE = "apps/deployments"
_RS = "apps/replicasets"

_RSList = list[dict[str, Any]]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name"))


class DeploymentController:
    """Rolls each Deployment's ReplicaSets toward its template and size."""

    resource = RESOURCE
    watches = (_RS, "pods")

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The Deployment a ReplicaSet (or a ReplicaSet's pod) belongs to."""
        namespace = str(_meta(obj).get("namespace") or "")
        reference = controller_of(obj)
        if reference is None:
            return []
        if resource == "pods":
            # Only a pod going away matters (Recreate waits for old pods to stop); the
            # ReplicaSet's status change covers everything else.
            if reference.get("kind") != "ReplicaSet" or not (
                _meta(obj).get("deletionTimestamp") or pod_phase(obj) in ("Succeeded", "Failed")
            ):
                return []
            rs = self._context.get(_RS, namespace, str(reference.get("name")))
            reference = controller_of(rs) if rs is not None else None
            if reference is None:
                return []
        if reference.get("kind") != "Deployment":
            return []
        return [(namespace, str(reference.get("name")))]

    # -- reads ---------------------------------------------------------------------------

    def _owned_sets(self, deployment: Mapping[str, Any]) -> _RSList:
        uid = _meta(deployment).get("uid")
        return [
            copy.deepcopy(dict(rs))
            for rs in self._context.list(_RS, str(_meta(deployment).get("namespace")))
            if controller_uid(rs) == uid
        ]

    async def _claim_sets(self, deployment: Mapping[str, Any]) -> None:
        """``claimReplicaSets``: adopt matching orphans, release owned sets that stop matching."""
        try:
            selector = LabelSelector.from_dict((deployment.get("spec") or {}).get("selector"))
        except ValueError:
            return
        if selector.empty:
            return
        uid = _meta(deployment).get("uid")
        namespace = str(_meta(deployment).get("namespace"))
        for rs in self._context.list(_RS, namespace):
            owner = controller_uid(rs)
            matches = selector.matches(_meta(rs).get("labels") or {})
            references = list(_meta(rs).get("ownerReferences") or ())
            if owner is None and matches and not _meta(rs).get("deletionTimestamp"):
                references.append(controller_reference(deployment))
            elif owner == uid and not matches:
                references = [r for r in references if r.get("uid") != uid]
            else:
                continue
            try:
                await self._context.patch(
                    _RS, namespace, _name(rs), {"metadata": {"ownerReferences": references or None}}
                )
            except WriteError as error:
                if error.code != 404:
                    raise

    # -- writes --------------------------------------------------------------------------

    async def _write_status(self, deployment: dict[str, Any], status: dict[str, Any]) -> None:
        for field in (
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "observedGeneration",
        ):
            if not status.get(field):
                status.pop(field, None)
        if status == (deployment.get("status") or {}):
            return
        deployment["status"] = status
        updated = await self._context.update_status(RESOURCE, deployment)
        deployment["metadata"] = updated["metadata"]

    async def _scale(
        self, rs: dict[str, Any], size: int, deployment: Mapping[str, Any], operation: str = ""
    ) -> bool:
        """Set the set's size and replica annotations; a ScalingReplicaSet event on resize."""
        old_size = spec_replicas(rs)
        replicas = deployment_replicas(deployment)
        resized = old_size != size
        annotated = set_replicas_annotations(rs, replicas, replicas + max_surge(deployment))
        if not resized and not annotated:
            return False
        rs.setdefault("spec", {})["replicas"] = size
        updated = await self._context.update(_RS, rs)
        rs.clear()
        rs.update(updated)
        if resized:
            operation = operation or ("up" if old_size < size else "down")
            self._context.event(
                deployment,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {operation} replica set {_name(rs)} from {old_size} to {size}",
                COMPONENT,
            )
        return resized

    async def _set_revision(self, deployment: dict[str, Any], revision: str) -> None:
        annotations = _meta(deployment).get("annotations") or {}
        if annotations.get(REVISION_ANNOTATION) == revision:
            return
        patched = await self._context.patch(
            RESOURCE,
            str(_meta(deployment).get("namespace")),
            _name(deployment),
            {"metadata": {"annotations": {REVISION_ANNOTATION: revision}}},
        )
        deployment["metadata"] = patched["metadata"]

    async def _new_replica_set(
        self, deployment: dict[str, Any], sets: _RSList, create: bool
    ) -> dict[str, Any] | None:
        """``getNewReplicaSet``: find (and update) or create the set for the current template."""
        found = find_new_replica_set(deployment, sets)
        existing = next((rs for rs in sets if rs is found), None)
        old = [rs for rs in sets if rs is not existing]
        new_revision = max_revision(old) + 1
        now = self._context.clock.now()
        status = copy.deepcopy(dict(deployment.get("status") or {}))
        if existing is not None:
            rs = copy.deepcopy(existing)
            changed = set_new_replica_set_annotations(deployment, rs, new_revision, exists=True)
            min_ready = (deployment.get("spec") or {}).get("minReadySeconds", 0)
            if changed or (rs.get("spec") or {}).get("minReadySeconds", 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                updated = await self._context.update(_RS, rs)
                existing.clear()
                existing.update(updated)
                return existing
            await self._set_revision(
                deployment, (_meta(rs).get("annotations") or {}).get(REVISION_ANNOTATION, "")
            )
            if status_logic.has_progress_deadline(deployment) and (
                status_logic.find_condition(status, status_logic.PROGRESSING) is None
            ):
                status_logic.set_condition(
                    status,
                    status_logic.new_condition(
                        status_logic.PROGRESSING,
                        "True",
                        "FoundNewReplicaSet",
                        f'Found new replica set "{_name(rs)}"',
                        now,
                    ),
                )
                await self._write_status(deployment, status)
            return existing
        if not create:
            return None
        return await self._create_replica_set(deployment, old, new_revision)

    async def _create_replica_set(
        self, deployment: dict[str, Any], old: _RSList, revision: int
    ) -> dict[str, Any] | None:
        spec = deployment.get("spec") or {}
        status = copy.deepcopy(dict(deployment.get("status") or {}))
        now = self._context.clock.now()
        template = copy.deepcopy(spec.get("template") or {})
        pod_hash = compute_hash(template, status.get("collisionCount"))
        template.setdefault("metadata", {})
        template["metadata"]["labels"] = {
            **(template["metadata"].get("labels") or {}),
            POD_TEMPLATE_HASH_LABEL: pod_hash,
        }
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {
            **(selector.get("matchLabels") or {}),
            POD_TEMPLATE_HASH_LABEL: pod_hash,
        }
        name = f"{_name(deployment)}-{pod_hash}"
        rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": _meta(deployment).get("namespace"),
                "labels": dict(template["metadata"]["labels"]),
                "ownerReferences": [controller_reference(deployment)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": spec.get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        size = new_rs_new_replicas(deployment, [*old, rs], rs)
        rs["spec"]["replicas"] = size
        set_new_replica_set_annotations(deployment, rs, revision, exists=False)
        try:
            created = await self._context.create(_RS, rs)
        except WriteError as error:
            if error.reason == "AlreadyExists":
                found = self._context.get(_RS, str(_meta(deployment).get("namespace")), name)
                if (
                    found is not None
                    and (controller_of(found) or {}).get("uid") == _meta(deployment).get("uid")
                    and equal_ignore_hash(
                        (found.get("spec") or {}).get("template"), spec.get("template")
                    )
                ):
                    return copy.deepcopy(dict(found))
                # A hash collision: try again with another hash on the next sync.
                status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
                await self._write_status(deployment, status)
                return None
            if error.code == 403:
                raise
            message = f'Failed to create new replica set "{name}": {error.message}'
            if status_logic.has_progress_deadline(deployment):
                status_logic.set_condition(
                    status,
                    status_logic.new_condition(
                        status_logic.PROGRESSING, "False", "ReplicaSetCreateError", message, now
                    ),
                )
                await self._write_status(deployment, status)
            self._context.event(deployment, "Warning", "ReplicaSetCreateError", message, COMPONENT)
            raise
        if size > 0:
            self._context.event(
                deployment,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {name} from 0 to {size}",
                COMPONENT,
            )
        await self._set_revision(deployment, str(revision))
        if status_logic.has_progress_deadline(deployment):
            status_logic.set_condition(
                status,
                status_logic.new_condition(
                    status_logic.PROGRESSING,
                    "True",
                    "NewReplicaSetCreated",
                    f'Created new replica set "{name}"',
                    now,
                ),
            )
            await self._write_status(deployment, status)
        return created

    async def _sets_and_revision(
        self, deployment: dict[str, Any], create: bool
    ) -> tuple[dict[str, Any] | None, _RSList]:
        sets = self._owned_sets(deployment)
        new_rs = await self._new_replica_set(deployment, sets, create)
        new_uid = _meta(new_rs).get("uid") if new_rs is not None else None
        old = [rs for rs in sets if _meta(rs).get("uid") != new_uid]
        return new_rs, old

    async def _cleanup(self, deployment: Mapping[str, Any], old: _RSList) -> None:
        for rs in history_to_delete(deployment, old):
            try:
                await self._context.delete(
                    _RS, str(_meta(rs).get("namespace")), _name(rs), uid=_meta(rs).get("uid")
                )
            except WriteError as error:
                if error.code != 404:
                    raise

    # -- sync ----------------------------------------------------------------------------

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one Deployment; returns seconds until it should be looked at again."""
        found = self._context.get(RESOURCE, namespace, name)
        if found is None:
            return None
        deployment = copy.deepcopy(dict(found))
        try:
            return await self._sync(deployment)
        except WriteError as error:
            if error.code in (404, 409):
                return None  # the watch brings the change that caused it
            raise
        except IntOrPercentError as error:
            # kube-apiserver's validation refuses such a Deployment; this server's schema
            # checks let it through, so report it instead of retrying forever.
            self._context.event(
                deployment,
                "Warning",
                "InvalidStrategy",
                f"spec.strategy.rollingUpdate: {error}",
                COMPONENT,
            )
            return None

    async def _sync(self, deployment: dict[str, Any]) -> float | None:
        if not _meta(deployment).get("deletionTimestamp"):
            await self._claim_sets(deployment)
        if _meta(deployment).get("deletionTimestamp"):
            new_rs, old = await self._sets_and_revision(deployment, create=False)
            await self._sync_status(deployment, [*old, *([new_rs] if new_rs else [])], new_rs)
            return None
        await self._check_paused(deployment)
        spec = deployment.get("spec") or {}
        if spec.get("paused") or self._is_scaling_event(deployment):
            return await self._sync_scale(deployment)
        if is_rolling_update(deployment):
            return await self._rollout_rolling(deployment)
        return await self._rollout_recreate(deployment)

    async def _check_paused(self, deployment: dict[str, Any]) -> None:
        if not status_logic.has_progress_deadline(deployment):
            return
        status = copy.deepcopy(dict(deployment.get("status") or {}))
        condition = status_logic.find_condition(status, status_logic.PROGRESSING)
        if condition is not None and condition.get("reason") == "ProgressDeadlineExceeded":
            return
        paused_shown = condition is not None and condition.get("reason") == "DeploymentPaused"
        now = self._context.clock.now()
        paused = bool((deployment.get("spec") or {}).get("paused"))
        if paused and not paused_shown:
            new = status_logic.new_condition(
                status_logic.PROGRESSING, "Unknown", "DeploymentPaused", "Deployment is paused", now
            )
        elif not paused and paused_shown:
            new = status_logic.new_condition(
                status_logic.PROGRESSING,
                "Unknown",
                "DeploymentResumed",
                "Deployment is resumed",
                now,
            )
        else:
            return
        status_logic.set_condition(status, new)
        await self._write_status(deployment, status)

    def _is_scaling_event(self, deployment: Mapping[str, Any]) -> bool:
        replicas = str(deployment_replicas(deployment))
        for rs in self._owned_sets(deployment):
            if not is_active(rs):
                continue
            desired = (_meta(rs).get("annotations") or {}).get(DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired != replicas:
                return True
        return False

    async def _sync_scale(self, deployment: dict[str, Any]) -> float | None:
        """``sync``: apply a size change (also while paused) without rolling out."""
        new_rs, old = await self._sets_and_revision(deployment, create=False)
        await self._scale_all(deployment, new_rs, old)
        if (deployment.get("spec") or {}).get("paused"):
            await self._cleanup(deployment, old)
        all_sets = [*old, *([new_rs] if new_rs else [])]
        await self._sync_status(deployment, all_sets, new_rs)
        return None

    async def _scale_all(
        self, deployment: dict[str, Any], new_rs: dict[str, Any] | None, old: _RSList
    ) -> None:
        replicas = deployment_replicas(deployment)
        target = active_or_latest(new_rs, old)
        if target is not None:
            rs = next(r for r in [*old, *([new_rs] if new_rs else [])] if r is target)
            if spec_replicas(rs) != replicas:
                await self._scale(rs, replicas, deployment)
            return
        if new_rs is not None and self._saturated(deployment, new_rs):
            for rs in old:
                if is_active(rs):
                    await self._scale(rs, 0, deployment)
            return
        if is_rolling_update(deployment):
            active = [rs for rs in [*old, *([new_rs] if new_rs else [])] if is_active(rs)]
            sizes, operation = proportional_scale(deployment, active)
            for rs in active:
                await self._scale(rs, sizes[_name(rs)], deployment, operation)

    def _saturated(self, deployment: Mapping[str, Any], rs: Mapping[str, Any]) -> bool:
        replicas = deployment_replicas(deployment)
        desired = (_meta(rs).get("annotations") or {}).get(DESIRED_REPLICAS_ANNOTATION)
        return (
            desired == str(replicas)
            and spec_replicas(rs) == replicas
            and int((rs.get("status") or {}).get("availableReplicas") or 0) == replicas
        )

    async def _sync_status(
        self,
        deployment: dict[str, Any],
        all_sets: Sequence[Mapping[str, Any]],
        new_rs: Mapping[str, Any] | None,
    ) -> None:
        status = status_logic.calculate_status(
            deployment, all_sets, new_rs, self._context.clock.now()
        )
        await self._write_status(deployment, status)

    async def _rollout_status(
        self,
        deployment: dict[str, Any],
        all_sets: Sequence[Mapping[str, Any]],
        new_rs: Mapping[str, Any] | None,
    ) -> float | None:
        now = self._context.clock.now()
        status = status_logic.rollout_status(deployment, all_sets, new_rs, now)
        delay = status_logic.progress_recheck_delay(deployment, status, now)
        await self._write_status(deployment, status)
        return delay

    async def _rollout_rolling(self, deployment: dict[str, Any]) -> float | None:
        new_rs, old = await self._sets_and_revision(deployment, create=True)
        if new_rs is None:
            return None  # a hash collision: the status write re-enqueues the Deployment
        all_sets = [*old, new_rs]
        replicas = deployment_replicas(deployment)
        # Scale the new set up (or down to the desired size).
        if spec_replicas(new_rs) > replicas:
            if await self._scale(new_rs, replicas, deployment):
                return await self._rollout_status(deployment, all_sets, new_rs)
        elif spec_replicas(new_rs) < replicas:
            size = new_rs_new_replicas(deployment, all_sets, new_rs)
            if await self._scale(new_rs, size, deployment):
                return await self._rollout_status(deployment, all_sets, new_rs)
        if await self._scale_down_old(deployment, all_sets, old, new_rs):
            return await self._rollout_status(deployment, all_sets, new_rs)
        if status_logic.deployment_complete(deployment, deployment.get("status") or {}):
            await self._cleanup(deployment, old)
        return await self._rollout_status(deployment, all_sets, new_rs)

    async def _scale_down_old(
        self,
        deployment: dict[str, Any],
        all_sets: _RSList,
        old: _RSList,
        new_rs: dict[str, Any],
    ) -> bool:
        """``reconcileOldReplicaSets``: drop unhealthy old pods, then available ones."""
        active_old = [rs for rs in old if is_active(rs)]
        if not sum(spec_replicas(rs) for rs in active_old):
            return False
        all_pods = sum(spec_replicas(rs) for rs in all_sets)
        replicas = deployment_replicas(deployment)
        min_available = replicas - max_unavailable(deployment)
        new_unavailable = spec_replicas(new_rs) - int(
            (new_rs.get("status") or {}).get("availableReplicas") or 0
        )
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        scaled = False
        by_name = {_name(rs): rs for rs in active_old}
        for name, size in unhealthy_cleanup(active_old, max_scaled_down).items():
            scaled = await self._scale(by_name[name], size, deployment) or scaled
        for name, size in scale_down_old_for_rolling_update(
            deployment, [*active_old, new_rs], active_old
        ).items():
            scaled = await self._scale(by_name[name], size, deployment) or scaled
        return scaled

    async def _rollout_recreate(self, deployment: dict[str, Any]) -> float | None:
        new_rs, old = await self._sets_and_revision(deployment, create=False)
        all_sets = [*old, *([new_rs] if new_rs else [])]
        scaled = False
        for rs in old:
            if is_active(rs):
                scaled = await self._scale(rs, 0, deployment) or scaled
        if scaled or self._old_pods_running(deployment, new_rs, old):
            return await self._rollout_status(deployment, all_sets, new_rs)
        if new_rs is None:
            new_rs, old = await self._sets_and_revision(deployment, create=True)
            if new_rs is None:
                return None
            all_sets = [*old, new_rs]
        await self._scale(new_rs, deployment_replicas(deployment), deployment)
        if status_logic.deployment_complete(deployment, deployment.get("status") or {}):
            await self._cleanup(deployment, old)
        return await self._rollout_status(deployment, all_sets, new_rs)

    def _old_pods_running(
        self, deployment: Mapping[str, Any], new_rs: Mapping[str, Any] | None, old: _RSList
    ) -> bool:
        if sum_status_replicas(old) > 0:
            return True
        old_uids = {_meta(rs).get("uid") for rs in old}
        for pod in self._context.list("pods", str(_meta(deployment).get("namespace"))):
            if controller_uid(pod) not in old_uids:
                continue
            if pod_phase(pod) not in ("Failed", "Succeeded"):
                return True
        return False
