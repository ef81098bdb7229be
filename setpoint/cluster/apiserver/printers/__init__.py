"""Table output: how ``kubectl get`` sees objects (``Accept: ...;as=Table;g=meta.k8s.io``).

kube-apiserver turns objects into ``meta.k8s.io`` Tables on request: one column definition per
column (name, type, format, priority: ``priority > 0`` columns are kubectl's ``-o wide``), one
row per object with its cells and, as ``includeObject`` asks, its metadata or the whole object.
kubectl then only lays the cells out, so the columns and every cell's text (``STATUS`` of a pod,
``READY 1/3`` of a deployment, ages such as ``5m3s``) are the server's.

Each module holds the printers of a group of kinds, declared as data (:class:`~.columns.Printer`:
columns plus a cells function), with the columns and formats of upstream's
``pkg/printers/internalversion/printers.go``: ``core`` (pods, services, config maps, secrets,
namespaces, nodes, events ...), ``apps``, ``batch``, ``rbac``, ``platform`` (leases, priority
classes, ingresses, pod disruption budgets, webhook configurations), ``storage`` (persistent
volumes and claims, storage classes), ``control_plane`` (component statuses, replication
controllers, autoscalers, certificate signing requests, API services) and ``infrastructure``
(pod templates, CSI kinds, volume attachments, runtime classes, flow control). ``custom`` builds the
printer of a custom resource from its CRD's ``additionalPrinterColumns`` (``json_path``
evaluates their JSONPaths). Kinds without a printer get upstream's default Name / Created At.
``table`` builds the Tables of lists, single objects and watch events.
"""

from setpoint.cluster.apiserver.printers.columns import Column, Printer, human_duration
from setpoint.cluster.apiserver.printers.table import (
    TableWriter,
    check_include_object,
    printer_for,
    table_version,
)

__all__ = [
    "Column",
    "Printer",
    "TableWriter",
    "check_include_object",
    "human_duration",
    "printer_for",
    "table_version",
]
