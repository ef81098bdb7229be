"""Persistent volumes and claims: a new one starts ``Pending`` (upstream's strategies reset the
status on create; a volume also records when its phase last changed), and a new claim that
names no class gets the default StorageClass (the ``DefaultStorageClass`` admission plugin:
the class annotated ``storageclass.kubernetes.io/is-default-class: "true"``, the newest when
several are); the namespace's LimitRanges bound a new claim's storage request; new claims and
volumes get the ``kubernetes.io/pvc-protection`` / ``pv-protection`` finalizer (the
StorageObjectInUseProtection plugin). Binding, and removing those finalizers once nothing uses
the object, are the volume controllers' (``setpoint.cluster.controllers.volumes``)."""

from __future__ import annotations

import time
from typing import Any, Final

from setpoint.cluster.apiserver.kinds.limit_ranges import LimitRanger
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.server_clock import server_time
from setpoint.cluster.apiserver.storage import Storage

STORAGE_CLASSES_ROOT: Final = "/storage.k8s.io/storageclasses/"
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
PVC_PROTECTION: Final = "kubernetes.io/pvc-protection"
PV_PROTECTION: Final = "kubernetes.io/pv-protection"


def default_class_name(storage: Storage) -> str | None:
    """The default StorageClass's name (the newest, then the first by name), or None."""
    defaults: list[tuple[str, str]] = []
    for record in storage.list(STORAGE_CLASSES_ROOT):
        meta = decode(record.value)["metadata"]
        if (meta.get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true":
            defaults.append((str(meta.get("creationTimestamp") or ""), str(meta["name"])))
    if not defaults:
        return None
    newest = max(created for created, _ in defaults)
    return min(name for created, name in defaults if created == newest)


class VolumeBehaviour(KindBehaviour):
    """PersistentVolume and PersistentVolumeClaim rules: status ``Pending`` on create, the
    default class for claims that name none."""

    def __init__(
        self,
        storage: Storage,
        limit_ranger: LimitRanger,
        validator: BuiltinValidator | None = None,
    ) -> None:
        super().__init__(validator)
        self._storage = storage
        self._limit_ranger = limit_ranger

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        # StorageObjectInUseProtection: the protection controllers remove these once the
        # object is unused (a claim no running pod mounts, a volume no longer Bound).
        finalizer = PV_PROTECTION if resource.kind == "PersistentVolume" else PVC_PROTECTION
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            finalizers = metadata.get("finalizers")
            if not isinstance(finalizers, list):
                finalizers = []
            if finalizer not in finalizers:
                metadata["finalizers"] = [*finalizers, finalizer]
        status: dict[str, Any] = {"phase": "Pending"}
        if resource.kind == "PersistentVolume":
            status["lastPhaseTransitionTime"] = time.strftime(
                "%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time())
            )
        else:
            spec = obj.get("spec")
            # Only an absent class is defaulted: "" asks for no class at all.
            if isinstance(spec, dict) and spec.get("storageClassName") is None:
                name = default_class_name(self._storage)
                if name is not None:
                    spec["storageClassName"] = name
            self._limit_ranger.admit_claim(obj)
        obj["status"] = status
