"""StatefulSet sync: revisions, ordered pod and claim creation, scale-down, rolling update."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from setpoint.api.owners import controller_of, owner_reference
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods import controller_revisions
from setpoint.cluster.controllers.workload_pods.adoption import adopt_if_orphan
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid
from setpoint.cluster.controllers.workload_pods.pod_from_template import pod_from_template
from setpoint.cluster.controllers.workload_pods.pod_state import (
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_phase,
)

__all__ = [
    "COMPONENT",
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "RESOURCE",
    "REVISION_LABEL",
    "StatefulSetController",
]

COMPONENT = "statefulset-controller"
RESOURCE = "apps/statefulsets"
_REVISIONS = "apps/controllerrevisions"
_CLAIMS = "persistentvolumeclaims"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name"))


def _retention(sts: Mapping[str, Any], when: str) -> str:
    """``persistentVolumeClaimRetentionPolicy.<when>`` (Retain by default)."""
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return str(policy.get(when) or "Retain")


def _healthy(pod: Mapping[str, Any], min_ready: int, now: Any) -> bool:
    return (
        pod_phase(pod) == "Running"
        and is_pod_available(pod, min_ready, now)
        and not _meta(pod).get("deletionTimestamp")
    )


class StatefulSetController:
    """Keeps each StatefulSet's ordinals, claims and revisions."""

    resource = RESOURCE
    # Claims and revisions are watched so that their caches are filled from the start.
    watches = ("pods", _CLAIMS, _REVISIONS)

    def __init__(self, context: WorkloadContext) -> None:
        self._context = context

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The StatefulSet that controls a pod or a revision (claims map to none)."""
        if resource == _CLAIMS:
            return []
        reference = controller_of(obj)
        if reference is None or reference.get("kind") != "StatefulSet":
            return []
        return [(str(_meta(obj).get("namespace") or ""), str(reference.get("name")))]

    def _event(self, sts: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self._context.event(sts, type, reason, message, COMPONENT)

    def _pod(self, sts: Mapping[str, Any], ordinal: int, revision: str) -> dict[str, Any]:
        name = f"{_name(sts)}-{ordinal}"
        spec = sts.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        pod = pod_from_template(template, sts, name=name)
        pod["metadata"]["labels"] = {
            **(pod["metadata"].get("labels") or {}),
            REVISION_LABEL: revision,
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(ordinal),
        }
        pod["spec"]["hostname"] = name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes = [
            v
            for v in pod["spec"].get("volumes") or []
            if v.get("name") not in {_name(c) for c in spec.get("volumeClaimTemplates") or []}
        ]
        for claim in spec.get("volumeClaimTemplates") or []:
            volumes.append(
                {
                    "name": _name(claim),
                    "persistentVolumeClaim": {"claimName": f"{_name(claim)}-{name}"},
                }
            )
        if volumes:
            pod["spec"]["volumes"] = volumes
        return pod

    async def _create_claims(self, sts: Mapping[str, Any], pod_name: str) -> None:
        namespace = str(_meta(sts).get("namespace"))
        spec = sts.get("spec") or {}
        selector_labels = (spec.get("selector") or {}).get("matchLabels") or {}
        for template in spec.get("volumeClaimTemplates") or []:
            claim_name = f"{_name(template)}-{pod_name}"
            if self._context.get(_CLAIMS, namespace, claim_name) is not None:
                continue
            claim: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": claim_name,
                    "namespace": namespace,
                    "labels": {**(_meta(template).get("labels") or {}), **selector_labels},
                },
                "spec": copy.deepcopy(template.get("spec") or {}),
            }
            if _meta(template).get("annotations"):
                claim["metadata"]["annotations"] = dict(_meta(template)["annotations"])
            if _retention(sts, "whenDeleted") == "Delete":
                claim["metadata"]["ownerReferences"] = [owner_reference(sts)]
            try:
                await self._context.create(_CLAIMS, claim)
            except WriteError as error:
                if error.reason != "AlreadyExists":
                    self._event(
                        sts,
                        "Warning",
                        "FailedCreate",
                        f"create Claim {claim_name} for Pod {pod_name} in StatefulSet "
                        f"{_name(sts)} failed error: {error.message}",
                    )
                    raise
                continue
            self._event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {claim_name} Pod {pod_name} in StatefulSet {_name(sts)} success",
            )

    async def _create_pod(self, sts: Mapping[str, Any], ordinal: int, revision: str) -> None:
        pod = self._pod(sts, ordinal, revision)
        name = pod["metadata"]["name"]
        await self._create_claims(sts, name)
        try:
            await self._context.create("pods", pod)
        except WriteError as error:
            if error.reason == "AlreadyExists":
                return
            self._event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {name} in StatefulSet {_name(sts)} failed error: {error.message}",
            )
            raise
        self._event(
            sts,
            "Normal",
            "SuccessfulCreate",
            f"create Pod {name} in StatefulSet {_name(sts)} successful",
        )

    async def _claims_follow_pod(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """``whenScaled: Delete``: a condemned pod owns its claims, so they go with it."""
        namespace = str(_meta(sts).get("namespace"))
        for template in (sts.get("spec") or {}).get("volumeClaimTemplates") or []:
            claim = self._context.get(_CLAIMS, namespace, f"{_name(template)}-{_name(pod)}")
            if claim is None:
                continue
            # Owned by the pod alone (upstream drops the set's reference), or the garbage
            # collector would only strip the pod's dangling reference.
            references = [
                r
                for r in _meta(claim).get("ownerReferences") or ()
                if r.get("uid") not in (_meta(sts).get("uid"), _meta(pod).get("uid"))
            ]
            await self._context.patch(
                _CLAIMS,
                namespace,
                _name(claim),
                {"metadata": {"ownerReferences": [*references, owner_reference(pod)]}},
            )

    async def _delete_pod(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        name = _name(pod)
        try:
            await self._context.delete(
                "pods", str(_meta(pod).get("namespace")), name, uid=_meta(pod).get("uid")
            )
        except WriteError as error:
            if error.code == 404:
                return
            self._event(
                sts,
                "Warning",
                "FailedDelete",
                f"delete Pod {name} in StatefulSet {_name(sts)} failed error: {error.message}",
            )
            raise
        self._event(
            sts,
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {name} in StatefulSet {_name(sts)} successful",
        )

    async def sync(self, namespace: str, name: str) -> float | None:
        """Reconcile one StatefulSet; returns seconds until it should be looked at again."""
        found = self._context.get(RESOURCE, namespace, name)
        if found is None or _meta(found).get("deletionTimestamp"):
            return None
        sts = copy.deepcopy(dict(found))
        try:
            await self._sync(sts)
        except WriteError as error:
            if error.code in (404, 409):
                return None  # the watch brings the change that caused it
            raise
        return None

    async def _sync(self, sts: dict[str, Any]) -> None:
        namespace = str(_meta(sts).get("namespace"))
        spec = sts.get("spec") or {}
        now = self._context.clock.now()
        min_ready = int(spec.get("minReadySeconds") or 0)
        revision = await controller_revisions.current_revision(
            self._context, sts, label_is_name=True
        )
        update_revision = revision.name
        status = sts.get("status") or {}
        current_revision = status.get("currentRevision") or update_revision
        pattern = re.compile(rf"^{re.escape(_name(sts))}-(\d+)$")
        pods: dict[int, Mapping[str, Any]] = {}
        for pod in self._context.list("pods", namespace):
            match = pattern.match(_name(pod))
            if match is None:
                continue
            owned = await adopt_if_orphan(self._context, "pods", sts, pod)
            if owned is not None:
                pods[int(match.group(1))] = owned
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        replicas = int(spec.get("replicas", 1))
        wanted = range(start, start + replicas)
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        await self._act(sts, pods, wanted, ordered, update_revision, current_revision, partition)
        await self._write_status(
            sts,
            self._list_pods(sts, pattern),
            update_revision,
            current_revision,
            min_ready,
            now,
            revision.collision_count,
        )

    def _list_pods(
        self, sts: Mapping[str, Any], pattern: re.Pattern[str]
    ) -> list[Mapping[str, Any]]:
        return [
            pod
            for pod in self._context.list("pods", str(_meta(sts).get("namespace")))
            if controller_uid(pod) == _meta(sts).get("uid") and pattern.match(_name(pod))
        ]

    async def _act(
        self,
        sts: Mapping[str, Any],
        pods: dict[int, Mapping[str, Any]],
        wanted: range,
        ordered: bool,
        update_revision: str,
        current_revision: str,
        partition: int,
    ) -> None:
        now = self._context.clock.now()
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        # Create missing ordinals, replace finished ones, in order.
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is None:
                revision = current_revision if ordinal < partition else update_revision
                await self._create_pod(sts, ordinal, revision)
                if ordered:
                    return
                continue
            if is_pod_terminal(pod) and not _meta(pod).get("deletionTimestamp"):
                await self._delete_pod(sts, pod)
                if ordered:
                    return
                continue
            if ordered and not _healthy(pod, min_ready, now):
                return
        # Scale down from the highest ordinal.
        condemned = sorted((o for o in pods if o not in wanted), reverse=True)
        for ordinal in condemned:
            pod = pods[ordinal]
            if _meta(pod).get("deletionTimestamp"):
                if ordered:
                    return
                continue
            if _retention(sts, "whenScaled") == "Delete":
                await self._claims_follow_pod(sts, pod)
            await self._delete_pod(sts, pod)
            if ordered:
                return
        if ordered and condemned:
            return
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        # Rolling update: highest ordinal first, down to the partition, one at a time.
        for ordinal in sorted((o for o in pods if o in wanted), reverse=True):
            if ordinal < partition:
                break
            pod = pods[ordinal]
            labels = _meta(pod).get("labels") or {}
            if labels.get(REVISION_LABEL) != update_revision:
                if not _meta(pod).get("deletionTimestamp"):
                    await self._delete_pod(sts, pod)
                return
            if not _healthy(pod, min_ready, now):
                return

    async def _write_status(
        self,
        sts: dict[str, Any],
        pods: list[Mapping[str, Any]],
        update_revision: str,
        current_revision: str,
        min_ready: int,
        now: Any,
        collisions: int,
    ) -> None:
        replicas = ready = available = current = updated = 0
        for pod in pods:
            replicas += 1
            if pod_phase(pod) == "Running" and is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, now):
                    available += 1
            if not _meta(pod).get("deletionTimestamp"):
                revision = (_meta(pod).get("labels") or {}).get(REVISION_LABEL)
                current += revision == current_revision
                updated += revision == update_revision
        spec_replicas = int((sts.get("spec") or {}).get("replicas", 1))
        if updated == spec_replicas and ready == spec_replicas and replicas == spec_replicas:
            current_revision, current = update_revision, updated
        old = sts.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": int(_meta(sts).get("generation") or 0),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_revision,
            "updateRevision": update_revision,
            "collisionCount": collisions,
            "availableReplicas": available,
        }
        for field in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not status[field]:
                del status[field]
        if status == old:
            return
        await self._context.update_status(RESOURCE, {**sts, "status": status})
