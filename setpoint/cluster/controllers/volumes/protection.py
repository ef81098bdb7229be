"""The pvc-protection and pv-protection controllers: a claim or volume being deleted keeps its
protection finalizer while it is in use, and loses it (so it goes) once it is not.

A claim is in use while a pod scheduled to a node mounts it and has not finished
(``pkg/controller/volume/pvcprotection``); a volume while it is ``Bound``
(``pkg/controller/volume/pvprotection``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.workload_context import WriteError

CLAIMS: Final = "persistentvolumeclaims"
VOLUMES: Final = "persistentvolumes"
PVC_PROTECTION: Final = "kubernetes.io/pvc-protection"
PV_PROTECTION: Final = "kubernetes.io/pv-protection"
_FINISHED: Final = frozenset({"Succeeded", "Failed"})


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def claims_mounted(pod: Mapping[str, Any]) -> list[str]:
    """The claims a pod mounts."""
    names = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim = (volume or {}).get("persistentVolumeClaim") or {}
        if claim.get("claimName"):
            names.append(str(claim["claimName"]))
    return names


def uses_claims(pod: Mapping[str, Any]) -> bool:
    """Whether the pod holds its claims: scheduled, not finished (``podUsesPVC``)."""
    phase = (pod.get("status") or {}).get("phase")
    return bool((pod.get("spec") or {}).get("nodeName")) and phase not in _FINISHED


def _pod_keys(pod: Object) -> Iterable[ObjectKey]:
    namespace = str(_meta(pod).get("namespace") or "")
    return [ObjectKey(namespace, name) for name in claims_mounted(pod)]


def _volume_key(volume: Object) -> Iterable[ObjectKey]:
    return [ObjectKey("", str(_meta(volume).get("name") or ""))]


class VolumeProtectionController(Controller):
    """Removes the protection finalizers of unused claims and volumes being deleted.

    Keys with a namespace are claims; keys without one are volumes.
    """

    name: ClassVar[str] = "pvc-protection"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:pvc-protection-controller",
            field_manager="kube-controller-manager",
            component="pvc-protection-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch(CLAIMS), Watch("pods", _pod_keys), Watch(VOLUMES, _volume_key)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        if key.namespace:
            claim = self.access.get(CLAIMS, key.namespace, key.name)
            if claim is None or not self._releasable(claim, PVC_PROTECTION):
                return None
            in_use = any(
                uses_claims(pod) and key.name in claims_mounted(pod)
                for pod in self.access.list("pods", key.namespace)
            )
            if not in_use:
                await self._remove_finalizer(CLAIMS, claim, PVC_PROTECTION)
            return None
        volume = self.access.get(VOLUMES, "", key.name)
        if volume is None or not self._releasable(volume, PV_PROTECTION):
            return None
        if (volume.get("status") or {}).get("phase") != "Bound":
            await self._remove_finalizer(VOLUMES, volume, PV_PROTECTION)
        return None

    @staticmethod
    def _releasable(obj: Mapping[str, Any], finalizer: str) -> bool:
        meta = _meta(obj)
        return bool(meta.get("deletionTimestamp")) and finalizer in (meta.get("finalizers") or [])

    async def _remove_finalizer(
        self, resource: str, obj: Mapping[str, Any], finalizer: str
    ) -> None:
        meta = dict(_meta(obj))
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        try:
            await self.access.update(resource, {**obj, "metadata": meta})
        except WriteError as exc:
            if exc.code not in (404, 409):
                raise
