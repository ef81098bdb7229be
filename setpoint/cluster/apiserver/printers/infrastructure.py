"""Tables of the cluster's infrastructure kinds: CSI drivers, nodes and storage capacities and
volume attachments (``storage.k8s.io``), runtime classes (``node.k8s.io``), API priority and
fairness (``flowcontrol.apiserver.k8s.io``) and pod templates, as ``printers.go`` prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    CONTAINERS_DESCRIPTION,
    IMAGES_DESCRIPTION,
    NAME_COLUMN,
    NONE,
    UNSET,
    Column,
    Printer,
    field,
    format_labels,
    integer,
    items,
    mapping,
    name_and_age,
    template_containers,
    text,
)
from setpoint.cluster.apiserver.schema.quantities import canonical_text


def _pod_template_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, _ = name_and_age(obj, now)
    names, images = template_containers(obj, "template")
    return [name, names, images, format_labels(field(obj, "template", "metadata", "labels"))]


POD_TEMPLATES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Containers", description=CONTAINERS_DESCRIPTION),
        Column("Images", description=IMAGES_DESCRIPTION),
        Column("Pod Labels", description="The labels for the pod template."),
    ),
    _pod_template_cells,
)


def _csi_driver_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    tokens = [t for t in items(spec, "tokenRequests") if isinstance(t, dict)]
    token_cell = (
        ",".join(text(t.get("audience")) or "<api-server-audience>" for t in tokens)
        if tokens
        else UNSET
    )
    modes = [text(m) for m in items(spec, "volumeLifecycleModes")]
    return [
        name,
        spec.get("attachRequired") is True,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        token_cell,
        spec.get("requiresRepublish") is True,
        ",".join(modes) if modes else NONE,
        age,
    ]


CSI_DRIVERS: Final = Printer(
    (
        NAME_COLUMN,
        Column("AttachRequired", type="boolean", doc="storage.v1.CSIDriverSpec/attachRequired"),
        Column("PodInfoOnMount", type="boolean", doc="storage.v1.CSIDriverSpec/podInfoOnMount"),
        Column("StorageCapacity", type="boolean", doc="storage.v1.CSIDriverSpec/storageCapacity"),
        Column("TokenRequests", doc="storage.v1.CSIDriverSpec/tokenRequests"),
        Column(
            "RequiresRepublish", type="boolean", doc="storage.v1.CSIDriverSpec/requiresRepublish"
        ),
        Column("Modes", doc="storage.v1.CSIDriverSpec/volumeLifecycleModes"),
        AGE_COLUMN,
    ),
    _csi_driver_cells,
)


def _csi_node_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, len(items(obj, "spec", "drivers")), age]


CSI_NODES: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "Drivers",
            type="integer",
            description="Drivers indicates the number of CSI drivers registered on the node",
        ),
        AGE_COLUMN,
    ),
    _csi_node_cells,
)


def _storage_capacity_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, _age = name_and_age(obj, now)
    capacity = canonical_text(obj.get("capacity")) if obj.get("capacity") is not None else None
    return [name, text(obj.get("storageClassName")), capacity or UNSET]


#: Upstream's table has no AGE column for this kind.
CSI_STORAGE_CAPACITIES: Final = Printer(
    (
        NAME_COLUMN,
        Column("StorageClassName", doc="storage.v1.CSIStorageCapacity/storageClassName"),
        Column("Capacity", doc="storage.v1.CSIStorageCapacity/capacity"),
    ),
    _storage_capacity_cells,
)


def _volume_attachment_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    return [
        name,
        text(spec.get("attacher")),
        text(field(spec, "source", "persistentVolumeName")),
        text(spec.get("nodeName")),
        field(obj, "status", "attached") is True,
        age,
    ]


VOLUME_ATTACHMENTS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Attacher", format="name", doc="storage.v1.VolumeAttachmentSpec/attacher"),
        Column("PV", format="name", doc="storage.v1.VolumeAttachmentSource/persistentVolumeName"),
        Column("Node", format="name", doc="storage.v1.VolumeAttachmentSpec/nodeName"),
        Column("Attached", type="boolean", doc="storage.v1.VolumeAttachmentStatus/attached"),
        AGE_COLUMN,
    ),
    _volume_attachment_cells,
)


def _runtime_class_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, text(obj.get("handler")), age]


RUNTIME_CLASSES: Final = Printer(
    (NAME_COLUMN, Column("Handler", doc="node.v1.RuntimeClass/handler"), AGE_COLUMN),
    _runtime_class_cells,
)


def _flow_schema_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    method = text(field(spec, "distinguisherMethod", "type")) or NONE
    missing = "?"
    for condition in items(obj, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Dangling":
            missing = text(condition.get("status"))
    return [
        name,
        text(field(spec, "priorityLevelConfiguration", "name")),
        integer(spec.get("matchingPrecedence")),
        method,
        age,
        missing,
    ]


FLOW_SCHEMAS: Final = Printer(
    (
        NAME_COLUMN,
        Column("PriorityLevel", doc="flowcontrol.v1.PriorityLevelConfigurationReference/name"),
        Column(
            "MatchingPrecedence",
            type="string",
            doc="flowcontrol.v1.FlowSchemaSpec/matchingPrecedence",
        ),
        Column("DistinguisherMethod", doc="flowcontrol.v1.FlowSchemaSpec/distinguisherMethod"),
        AGE_COLUMN,
        Column("MissingPL", description="indicates whether the referenced priority level exists"),
    ),
    _flow_schema_cells,
)


def _priority_level_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    shares: Any = NONE
    queues: Any = NONE
    hand_size: Any = NONE
    queue_length: Any = NONE
    limited = spec.get("limited")
    if isinstance(limited, dict):
        shares = integer(limited.get("nominalConcurrencyShares"))
        queuing = field(limited, "limitResponse", "queuing")
        if isinstance(queuing, dict):
            queues = integer(queuing.get("queues"))
            hand_size = integer(queuing.get("handSize"))
            queue_length = integer(queuing.get("queueLengthLimit"))
    return [name, text(spec.get("type")), shares, queues, hand_size, queue_length, age]


PRIORITY_LEVELS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Type", doc="flowcontrol.v1.PriorityLevelConfigurationSpec/type"),
        Column(
            "NominalConcurrencyShares",
            doc="flowcontrol.v1.LimitedPriorityLevelConfiguration/nominalConcurrencyShares",
        ),
        Column("Queues", doc="flowcontrol.v1.QueuingConfiguration/queues"),
        Column("HandSize", doc="flowcontrol.v1.QueuingConfiguration/handSize"),
        Column("QueueLengthLimit", doc="flowcontrol.v1.QueuingConfiguration/queueLengthLimit"),
        AGE_COLUMN,
    ),
    _priority_level_cells,
)

#: Printers of these resources, by (group, resource).
INFRASTRUCTURE_PRINTERS: Final = {
    ("", "podtemplates"): POD_TEMPLATES,
    ("storage.k8s.io", "csidrivers"): CSI_DRIVERS,
    ("storage.k8s.io", "csinodes"): CSI_NODES,
    ("storage.k8s.io", "csistoragecapacities"): CSI_STORAGE_CAPACITIES,
    ("storage.k8s.io", "volumeattachments"): VOLUME_ATTACHMENTS,
    ("node.k8s.io", "runtimeclasses"): RUNTIME_CLASSES,
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): FLOW_SCHEMAS,
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): PRIORITY_LEVELS,
}
