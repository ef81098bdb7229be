"""Tables of storage: persistent volumes and claims (core ``v1``) and storage classes
(``storage.k8s.io``), with the columns of upstream's ``printers.go``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    NAME_COLUMN,
    UNSET,
    Column,
    Printer,
    field,
    items,
    mapping,
    name_and_age,
    text,
)

#: ``helper.GetAccessModesAsString``'s short forms, in its order.
_ACCESS_MODES: Final = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)
#: The annotation marking the cluster's default StorageClass.
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"


def access_modes(modes: list[Any]) -> str:
    """``RWO,RWX``: the access modes present, each once, in upstream's order."""
    return ",".join(short for mode, short in _ACCESS_MODES if mode in modes)


def _volume_attributes_class(spec: dict[str, Any]) -> str:
    return text(spec.get("volumeAttributesClassName")) or UNSET


def _persistent_volume_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    claim = mapping(spec, "claimRef")
    claim_text = f"{text(claim.get('namespace'))}/{text(claim.get('name'))}" if claim else ""
    return [
        name,
        text(field(spec, "capacity", "storage")),
        access_modes(items(spec, "accessModes")),
        text(spec.get("persistentVolumeReclaimPolicy")),
        text(field(obj, "status", "phase")),
        claim_text,
        text(spec.get("storageClassName")),
        _volume_attributes_class(spec),
        text(field(obj, "status", "reason")),
        age,
        text(spec.get("volumeMode")) or "<unset>",
    ]


PERSISTENT_VOLUMES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Capacity", doc="core.v1.PersistentVolumeSpec/capacity"),
        Column("Access Modes", doc="core.v1.PersistentVolumeSpec/accessModes"),
        Column("Reclaim Policy", doc="core.v1.PersistentVolumeSpec/persistentVolumeReclaimPolicy"),
        Column("Status", doc="core.v1.PersistentVolumeStatus/phase"),
        Column("Claim", doc="core.v1.PersistentVolumeSpec/claimRef"),
        Column("StorageClass", description="StorageClass of the pv"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
        Column("Reason", doc="core.v1.PersistentVolumeStatus/reason"),
        AGE_COLUMN,
        Column("VolumeMode", priority=1, doc="core.v1.PersistentVolumeSpec/volumeMode"),
    ),
    _persistent_volume_cells,
)


def _persistent_volume_claim_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    status = mapping(obj, "status")
    phase = text(status.get("phase"))
    if "deletionTimestamp" in mapping(obj, "metadata"):
        phase = "Terminating"
    bound = bool(text(spec.get("volumeName")))
    return [
        name,
        phase,
        text(spec.get("volumeName")),
        text(field(status, "capacity", "storage")) if bound else "",
        access_modes(items(status, "accessModes")) if bound else "",
        text(spec.get("storageClassName")),
        _volume_attributes_class(spec),
        age,
        text(spec.get("volumeMode")) or "<unset>",
    ]


PERSISTENT_VOLUME_CLAIMS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Status", doc="core.v1.PersistentVolumeClaimStatus/phase"),
        Column("Volume", doc="core.v1.PersistentVolumeClaimSpec/volumeName"),
        Column("Capacity", doc="core.v1.PersistentVolumeClaimStatus/capacity"),
        Column("Access Modes", doc="core.v1.PersistentVolumeClaimStatus/accessModes"),
        Column("StorageClass", description="StorageClass of the pvc"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
        AGE_COLUMN,
        Column("VolumeMode", priority=1, doc="core.v1.PersistentVolumeClaimSpec/volumeMode"),
    ),
    _persistent_volume_claim_cells,
)


def is_default_class(obj: dict[str, Any]) -> bool:
    """Whether a StorageClass is annotated as the cluster's default."""
    annotations = mapping(obj, "metadata", "annotations")
    return text(annotations.get(DEFAULT_CLASS_ANNOTATION)) == "true"


def _storage_class_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    if is_default_class(obj):
        name += " (default)"
    expansion = obj.get("allowVolumeExpansion")
    return [
        name,
        text(obj.get("provisioner")),
        text(obj.get("reclaimPolicy")) or "Delete",
        text(obj.get("volumeBindingMode")) or "Immediate",
        expansion is True,
        age,
    ]


STORAGE_CLASSES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Provisioner", doc="storage.v1.StorageClass/provisioner"),
        Column("ReclaimPolicy", doc="storage.v1.StorageClass/reclaimPolicy"),
        Column("VolumeBindingMode", doc="storage.v1.StorageClass/volumeBindingMode"),
        Column(
            "AllowVolumeExpansion",
            type="boolean",
            doc="storage.v1.StorageClass/allowVolumeExpansion",
        ),
        AGE_COLUMN,
    ),
    _storage_class_cells,
)

#: Printers of these resources, by (group, resource).
STORAGE_PRINTERS: Final = {
    ("", "persistentvolumes"): PERSISTENT_VOLUMES,
    ("", "persistentvolumeclaims"): PERSISTENT_VOLUME_CLAIMS,
    ("storage.k8s.io", "storageclasses"): STORAGE_CLASSES,
}
