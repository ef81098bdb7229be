"""Binds claims to volumes, provisions host-path volumes, releases volumes of deleted claims."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.volumes.matching import best_volume, claim_class
from setpoint.cluster.controllers.workload_context import WriteError

CLAIMS: Final = "persistentvolumeclaims"
VOLUMES: Final = "persistentvolumes"
CLASSES: Final = "storage.k8s.io/storageclasses"
#: The provisioner of the default class, and the class itself (named as kind's and minikube's).
HOST_PATH_PROVISIONER: Final = "setpoint.dev/host-path"
DEFAULT_CLASS_NAME: Final = "standard"
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
#: Upstream's annotations on bound objects.
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY: Final = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"


def default_storage_class() -> dict[str, Any]:
    """The ``standard`` StorageClass, default, provisioned here."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": DEFAULT_CLASS_NAME,
            "annotations": {DEFAULT_CLASS_ANNOTATION: "true"},
        },
        "provisioner": HOST_PATH_PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _volume_keys(volume: Object) -> Iterable[ObjectKey]:
    keys = [ObjectKey("", str(_meta(volume).get("name") or ""))]
    ref = (volume.get("spec") or {}).get("claimRef")
    if isinstance(ref, dict) and ref.get("namespace") and ref.get("name"):
        keys.append(ObjectKey(str(ref["namespace"]), str(ref["name"])))
    return keys


def _claim_keys(claim: Object) -> Iterable[ObjectKey]:
    meta = _meta(claim)
    keys = [ObjectKey(str(meta.get("namespace") or ""), str(meta.get("name") or ""))]
    volume = (claim.get("spec") or {}).get("volumeName")
    if volume:
        keys.append(ObjectKey("", str(volume)))
    return keys


class PersistentVolumeController(Controller):
    """kube-controller-manager's ``persistentvolume-binder`` with a host-path provisioner.

    Keys with a namespace are claims; keys without one are volumes.
    """

    name: ClassVar[str] = "persistentvolume-binder"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:persistent-volume-binder",
            field_manager="kube-controller-manager",
            component="persistentvolume-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch(CLAIMS, _claim_keys), Watch(VOLUMES, _volume_keys)]

    @property
    def _root(self) -> Path:
        return Path(self.options.volumes_dir or Path(tempfile.gettempdir()) / "setpoint-volumes")

    async def start(self) -> None:
        classes = self.access.list(CLASSES)
        has_default = any(
            (_meta(c).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"
            for c in classes
        )
        if has_default or any(_meta(c).get("name") == DEFAULT_CLASS_NAME for c in classes):
            return
        try:
            await self.access.create(CLASSES, default_storage_class())
        except WriteError as exc:
            if exc.code != 409:
                raise

    async def reconcile(self, key: ObjectKey) -> float | None:
        if key.namespace:
            await self._sync_claim(key.namespace, key.name)
        else:
            await self._sync_volume(key.name)
        return None

    # -- claims ---------------------------------------------------------------------------

    async def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self.access.get(CLAIMS, namespace, name)
        if claim is None or _meta(claim).get("deletionTimestamp"):
            return
        bound_to = (claim.get("spec") or {}).get("volumeName")
        if bound_to:
            volume = self.access.get(VOLUMES, "", str(bound_to))
            if volume is None:
                await self._claim_status(claim, {"phase": "Lost"})
                return
            await self._bind(volume, claim)
            return
        volume = best_volume(self.access.list(VOLUMES), claim)
        if volume is None:
            volume = await self._provision(claim)
        if volume is not None:
            await self._bind(volume, claim)

    async def _provision(self, claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
        class_name = claim_class(claim)
        storage_class = self.access.get(CLASSES, "", class_name) if class_name else None
        if storage_class is None or storage_class.get("provisioner") != HOST_PATH_PROVISIONER:
            return None
        meta = _meta(claim)
        name = f"pvc-{meta.get('uid')}"
        existing = self.access.get(VOLUMES, "", name)
        if existing is not None:
            return existing
        spec = claim.get("spec") or {}
        directory = self._root / f"{name}_{meta.get('namespace')}_{meta.get('name')}"
        directory.mkdir(parents=True, exist_ok=True)
        volume = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {PROVISIONED_BY: HOST_PATH_PROVISIONER}},
            "spec": {
                "capacity": {
                    "storage": ((spec.get("resources") or {}).get("requests") or {}).get(
                        "storage", "0"
                    )
                },
                "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                "hostPath": {"path": str(directory), "type": "DirectoryOrCreate"},
                "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
                "storageClassName": class_name,
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "claimRef": self._claim_ref(claim),
            },
        }
        try:
            created = await self.access.create(VOLUMES, volume)
        except WriteError as exc:
            if exc.code != 409:
                raise
            return self.access.get(VOLUMES, "", name)
        self.access.event(
            claim,
            "Normal",
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {name}",
        )
        return created

    @staticmethod
    def _claim_ref(claim: Mapping[str, Any]) -> dict[str, Any]:
        meta = _meta(claim)
        return {
            "kind": "PersistentVolumeClaim",
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "apiVersion": "v1",
            "resourceVersion": meta.get("resourceVersion"),
        }

    async def _bind(self, volume: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
        """Point the volume at the claim and the claim at the volume; both Bound."""
        try:
            ref = (volume.get("spec") or {}).get("claimRef") or {}
            if ref.get("uid") != _meta(claim).get("uid"):
                annotations = dict(_meta(volume).get("annotations") or {})
                annotations[BOUND_BY_CONTROLLER] = "yes"
                volume = await self.access.update(
                    VOLUMES,
                    {
                        **volume,
                        "metadata": {**_meta(volume), "annotations": annotations},
                        "spec": {**(volume.get("spec") or {}), "claimRef": self._claim_ref(claim)},
                    },
                )
            await self._volume_status(volume, "Bound")
            spec = claim.get("spec") or {}
            annotations = dict(_meta(claim).get("annotations") or {})
            wanted = {BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}
            if _meta(volume).get("annotations", {}).get(PROVISIONED_BY):
                wanted[STORAGE_PROVISIONER] = HOST_PATH_PROVISIONER
            if spec.get("volumeName") != _meta(volume).get("name") or any(
                annotations.get(k) != v for k, v in wanted.items()
            ):
                claim = await self.access.update(
                    CLAIMS,
                    {
                        **claim,
                        "metadata": {**_meta(claim), "annotations": {**annotations, **wanted}},
                        "spec": {**spec, "volumeName": _meta(volume).get("name")},
                    },
                )
            volume_spec = volume.get("spec") or {}
            await self._claim_status(
                claim,
                {
                    "phase": "Bound",
                    "accessModes": list(volume_spec.get("accessModes") or []),
                    "capacity": dict(volume_spec.get("capacity") or {}),
                },
            )
        except WriteError as exc:
            # Someone else wrote first (409) or the object went (404): the watch brings it back.
            if exc.code not in (404, 409):
                raise

    async def _claim_status(self, claim: Mapping[str, Any], status: dict[str, Any]) -> None:
        if (claim.get("status") or {}) == status:
            return
        await self.access.update_status(CLAIMS, {**claim, "status": status})

    async def _volume_status(self, volume: Mapping[str, Any], phase: str) -> None:
        current = dict(volume.get("status") or {})
        if current.get("phase") == phase:
            return
        status = {"phase": phase, "lastPhaseTransitionTime": time_text(self.access.clock)}
        await self.access.update_status(VOLUMES, {**volume, "status": status})

    # -- volumes --------------------------------------------------------------------------

    async def _sync_volume(self, name: str) -> None:
        volume = self.access.get(VOLUMES, "", name)
        if volume is None or _meta(volume).get("deletionTimestamp"):
            return
        ref = (volume.get("spec") or {}).get("claimRef")
        try:
            if not isinstance(ref, dict):
                await self._volume_status(volume, "Available")
                return
            claim = self.access.get(CLAIMS, str(ref.get("namespace")), str(ref.get("name")))
            if claim is not None and ref.get("uid") in (None, "", _meta(claim).get("uid")):
                return  # bound, or being bound: the claim's sync finishes it
            if not ref.get("uid"):
                return  # pre-bound to a claim that does not exist yet
            await self._release(volume)
        except WriteError as exc:
            if exc.code not in (404, 409):
                raise

    async def _release(self, volume: Mapping[str, Any]) -> None:
        spec = volume.get("spec") or {}
        provisioned = (_meta(volume).get("annotations") or {}).get(PROVISIONED_BY)
        # Released first: the pv-protection controller lets a volume go only when not Bound.
        await self._volume_status(volume, "Released")
        if spec.get("persistentVolumeReclaimPolicy") == "Delete" and (
            provisioned == HOST_PATH_PROVISIONER
        ):
            path = (spec.get("hostPath") or {}).get("path")
            await self.access.delete(VOLUMES, "", str(_meta(volume).get("name")))
            if isinstance(path, str) and Path(path).parent == self._root:
                shutil.rmtree(path, ignore_errors=True)
