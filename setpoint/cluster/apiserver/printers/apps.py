"""Tables of the ``apps`` group: deployments, replica sets, stateful sets, daemon sets and
controller revisions, as ``printers.go`` prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    CONTAINERS_DESCRIPTION,
    IMAGES_DESCRIPTION,
    NAME_COLUMN,
    NONE,
    Column,
    Printer,
    field,
    format_label_selector,
    format_labels,
    integer,
    items,
    mapping,
    name_and_age,
    selector_string,
    template_containers,
    text,
)

_CONTAINERS: Final = Column("Containers", priority=1, description=CONTAINERS_DESCRIPTION)
_IMAGES: Final = Column("Images", priority=1, description=IMAGES_DESCRIPTION)
_SELECTOR: Final = Column("Selector", priority=1, doc="apps.v1.ReplicaSetSpec/selector")


def _replicas(obj: dict[str, Any]) -> int:
    # Defaulted to 1 on create; a stored object always has it.
    value = field(obj, "spec", "replicas")
    return integer(value) if value is not None else 1


def _deployment_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    status = mapping(obj, "status")
    names, images = template_containers(obj, "spec", "template")
    selector = selector_string(field(obj, "spec", "selector"))
    return [
        name,
        f"{integer(status.get('readyReplicas'))}/{_replicas(obj)}",
        integer(status.get("updatedReplicas")),
        integer(status.get("availableReplicas")),
        age,
        names,
        images,
        "<invalid>" if selector is None else selector,
    ]


DEPLOYMENTS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Ready", description="Number of the pod with ready state"),
        Column("Up-to-date", doc="apps.v1.DeploymentStatus/updatedReplicas"),
        Column("Available", doc="apps.v1.DeploymentStatus/availableReplicas"),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
        Column("Selector", priority=1, doc="apps.v1.DeploymentSpec/selector"),
    ),
    _deployment_cells,
)


def _replica_set_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    status = mapping(obj, "status")
    names, images = template_containers(obj, "spec", "template")
    return [
        name,
        _replicas(obj),
        integer(status.get("replicas")),
        integer(status.get("readyReplicas")),
        age,
        names,
        images,
        format_label_selector(field(obj, "spec", "selector")),
    ]


REPLICA_SETS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Desired", type="integer", doc="apps.v1.ReplicaSetSpec/replicas"),
        Column("Current", type="integer", doc="apps.v1.ReplicaSetStatus/replicas"),
        Column("Ready", type="integer", doc="apps.v1.ReplicaSetStatus/readyReplicas"),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _replica_set_cells,
)


def _stateful_set_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    names, images = template_containers(obj, "spec", "template")
    ready = integer(field(obj, "status", "readyReplicas"))
    return [name, f"{ready}/{_replicas(obj)}", age, names, images]


STATEFUL_SETS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Ready", description="Number of the pod with ready state"),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
    ),
    _stateful_set_cells,
)


def _daemon_set_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    status = mapping(obj, "status")
    names, images = template_containers(obj, "spec", "template")
    return [
        name,
        integer(status.get("desiredNumberScheduled")),
        integer(status.get("currentNumberScheduled")),
        integer(status.get("numberReady")),
        integer(status.get("updatedNumberScheduled")),
        integer(status.get("numberAvailable")),
        format_labels(field(obj, "spec", "template", "spec", "nodeSelector")),
        age,
        names,
        images,
        format_label_selector(field(obj, "spec", "selector")),
    ]


DAEMON_SETS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Desired", type="integer", doc="apps.v1.DaemonSetStatus/desiredNumberScheduled"),
        Column("Current", type="integer", doc="apps.v1.DaemonSetStatus/currentNumberScheduled"),
        Column("Ready", type="integer", doc="apps.v1.DaemonSetStatus/numberReady"),
        Column("Up-to-date", type="integer", doc="apps.v1.DaemonSetStatus/updatedNumberScheduled"),
        Column("Available", type="integer", doc="apps.v1.DaemonSetStatus/numberAvailable"),
        Column("Node Selector", doc="core.v1.PodSpec/nodeSelector"),
        AGE_COLUMN,
        _CONTAINERS,
        _IMAGES,
        Column("Selector", priority=1, doc="apps.v1.DaemonSetSpec/selector"),
    ),
    _daemon_set_cells,
)


def _controller_revision_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    controller = NONE
    for reference in items(obj, "metadata", "ownerReferences"):
        if isinstance(reference, dict) and reference.get("controller") is True:
            group = text(reference.get("apiVersion")).rpartition("/")[0]
            kind = text(reference.get("kind"))
            qualified = f"{kind}.{group}" if group else kind
            controller = f"{qualified.lower()}/{text(reference.get('name'))}"
            break
    return [name, controller, integer(obj.get("revision")), age]


CONTROLLER_REVISIONS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Controller", description="Controller of the object"),
        Column("Revision", doc="apps.v1.ControllerRevision/revision"),
        AGE_COLUMN,
    ),
    _controller_revision_cells,
)

#: Printers of the apps group by resource.
APPS_PRINTERS: Final = {
    "deployments": DEPLOYMENTS,
    "replicasets": REPLICA_SETS,
    "statefulsets": STATEFUL_SETS,
    "daemonsets": DAEMON_SETS,
    "controllerrevisions": CONTROLLER_REVISIONS,
}
