"""Tables of ``metrics.k8s.io`` (``kubectl get nodes.metrics.k8s.io``), as metrics-server
prints them: the name, one column per resource of the usage (``cpu``, ``memory``, sorted) in
canonical quantities, and the window the rates cover."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import Column, Printer, items, mapping, text
from setpoint.cluster.apiserver.schema.quantities import Quantity

#: The resources the usage of every metrics object here holds (metrics-server's columns come
#: from the first object's usage; here every object has these two).
_RESOURCES: Final = ("cpu", "memory")
_COLUMNS: Final = (
    Column("Name", format="name", description="Name of the resource"),
    *(Column(resource, format="quantity") for resource in _RESOURCES),
    Column("Window", format="duration"),
)


def _shown(values: dict[str, Quantity], resource: str) -> str:
    value = values.get(resource)
    return str(value) if value is not None else "0"


def _node_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    usage = {
        name: parsed
        for name, value in mapping(obj, "usage").items()
        if (parsed := Quantity.parse(value)) is not None
    }
    name = text(mapping(obj, "metadata").get("name"))
    return [name, *(_shown(usage, r) for r in _RESOURCES), text(obj.get("window"))]


def _pod_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    # A pod's usage is the sum of its containers' (the first one's format is kept, as Go's
    # Quantity.Add keeps the receiver's).
    usage: dict[str, Quantity] = {}
    for container in items(obj, "containers"):
        if not isinstance(container, dict):
            continue
        for name, value in (container.get("usage") or {}).items():
            parsed = Quantity.parse(value)
            if parsed is not None:
                usage[name] = usage[name] + parsed if name in usage else parsed
    name = text(mapping(obj, "metadata").get("name"))
    return [name, *(_shown(usage, r) for r in _RESOURCES), text(obj.get("window"))]


NODE_METRICS: Final = Printer(_COLUMNS, _node_cells)
POD_METRICS: Final = Printer(_COLUMNS, _pod_cells)

#: Printers of these resources, by (group, resource).
RESOURCE_METRICS_PRINTERS: Final = {
    ("metrics.k8s.io", "nodes"): NODE_METRICS,
    ("metrics.k8s.io", "pods"): POD_METRICS,
}
