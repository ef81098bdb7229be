"""Tables of the control plane's own kinds and the older workload kinds: component statuses,
replication controllers and horizontal pod autoscalers (core ``v1``, ``autoscaling``),
certificate signing requests (``certificates.k8s.io``) and API services
(``apiregistration.k8s.io``), as ``printers.go`` and kube-aggregator print them."""

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
    format_labels,
    human_duration,
    integer,
    items,
    mapping,
    name_and_age,
    template_containers,
    text,
)


def _component_status_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name = text(mapping(obj, "metadata").get("name"))
    status, message, error = "Unknown", "", ""
    for condition in items(obj, "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message = text(condition.get("message"))
            error = text(condition.get("error"))
            break
    return [name, status, message, error]


COMPONENT_STATUSES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Status", description="Status of the component conditions"),
        Column("Message", description="Message of the component conditions"),
        Column("Error", description="Error of the component conditions"),
    ),
    _component_status_cells,
)


def _replication_controller_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    replicas = field(obj, "spec", "replicas")
    names, images = template_containers(obj, "spec", "template")
    return [
        name,
        replicas if isinstance(replicas, int) else 1,
        integer(field(obj, "status", "replicas")),
        integer(field(obj, "status", "readyReplicas")),
        age,
        names,
        images,
        format_labels(field(obj, "spec", "selector")),
    ]


REPLICATION_CONTROLLERS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Desired", type="integer", doc="core.v1.ReplicationControllerSpec/replicas"),
        Column("Current", type="integer", doc="core.v1.ReplicationControllerStatus/replicas"),
        Column("Ready", type="integer", doc="core.v1.ReplicationControllerStatus/readyReplicas"),
        AGE_COLUMN,
        Column("Containers", priority=1, description=CONTAINERS_DESCRIPTION),
        Column("Images", priority=1, description=IMAGES_DESCRIPTION),
        Column("Selector", priority=1, doc="core.v1.ReplicationControllerSpec/selector"),
    ),
    _replication_controller_cells,
)


def _metric_target(metric: dict[str, Any], current: dict[str, Any] | None) -> str:
    """One ``current/target`` of an HPA's Targets cell (resource metrics; others by value)."""
    kind = text(metric.get("type"))
    source = mapping(metric, kind[:1].lower() + kind[1:]) if kind else {}
    target = mapping(source, "target")
    current_source = (
        mapping(current, kind[:1].lower() + kind[1:]) if current is not None and kind else {}
    )
    now_value = mapping(current_source, "current")
    name = text(source.get("name")) or text(field(source, "metric", "name"))
    if "averageUtilization" in target:
        shown = now_value.get("averageUtilization")
        have = f"{shown}%" if isinstance(shown, int) else "<unknown>"
        cell = f"{have}/{target['averageUtilization']}%"
    else:
        wanted = target.get("averageValue", target.get("value"))
        have_value = now_value.get("averageValue", now_value.get("value"))
        have = str(have_value) if have_value is not None else "<unknown>"
        cell = f"{have}/{wanted}"
    return f"{name}: {cell}" if kind == "Resource" and name else cell


def _hpa_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    ref = mapping(spec, "scaleTargetRef")
    metrics = [m for m in items(spec, "metrics") if isinstance(m, dict)]
    percent = spec.get("targetCPUUtilizationPercentage")
    if isinstance(percent, int):  # an autoscaling/v1 object: its one target
        metrics = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": percent},
                },
            }
        ]
    currents = [m for m in items(obj, "status", "currentMetrics") if isinstance(m, dict)]
    shown = [
        _metric_target(metric, currents[index] if index < len(currents) else None)
        for index, metric in enumerate(metrics[:3])
    ]
    targets = ", ".join(shown) if shown else NONE
    if len(metrics) > 3:
        targets += f" + {len(metrics) - 3} more..."
    minimum = spec.get("minReplicas")
    return [
        name,
        f"{text(ref.get('kind'))}/{text(ref.get('name'))}",
        targets,
        str(minimum) if isinstance(minimum, int) else "<unset>",
        integer(spec.get("maxReplicas")),
        integer(field(obj, "status", "currentReplicas")),
        age,
    ]


HORIZONTAL_POD_AUTOSCALERS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Reference", doc="autoscaling.v2.HorizontalPodAutoscalerSpec/scaleTargetRef"),
        Column("Targets", doc="autoscaling.v2.HorizontalPodAutoscalerSpec/metrics"),
        Column("MinPods", doc="autoscaling.v2.HorizontalPodAutoscalerSpec/minReplicas"),
        Column(
            "MaxPods", type="integer", doc="autoscaling.v2.HorizontalPodAutoscalerSpec/maxReplicas"
        ),
        Column(
            "Replicas",
            type="integer",
            doc="autoscaling.v2.HorizontalPodAutoscalerStatus/currentReplicas",
        ),
        AGE_COLUMN,
    ),
    _hpa_cells,
)


def csr_condition(obj: dict[str, Any]) -> str:
    """``Approved,Issued``, ``Denied``, ``Failed`` or ``Pending`` (upstream's Condition cell)."""
    found: list[str] = []
    for condition in items(obj, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("status", "True") == "True":
            kind = text(condition.get("type"))
            if kind and kind not in found:
                found.append(kind)
    if not found:
        found.append("Pending")
    if field(obj, "status", "certificate"):
        found.append("Issued")
    return ",".join(found)


def _csr_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    seconds = spec.get("expirationSeconds")
    duration = human_duration(seconds) if isinstance(seconds, int) else NONE
    return [
        name,
        age,
        text(spec.get("signerName")),
        text(spec.get("username")),
        duration,
        csr_condition(obj),
    ]


CERTIFICATE_SIGNING_REQUESTS: Final = Printer(
    (
        NAME_COLUMN,
        AGE_COLUMN,
        Column("SignerName", doc="certificates.v1.CertificateSigningRequestSpec/signerName"),
        Column("Requestor", doc="certificates.v1.CertificateSigningRequestSpec/username"),
        Column(
            "RequestedDuration",
            doc="certificates.v1.CertificateSigningRequestSpec/expirationSeconds",
        ),
        Column("Condition", doc="certificates.v1.CertificateSigningRequestStatus/conditions"),
    ),
    _csr_cells,
)


def _api_service_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    service = mapping(obj, "spec", "service")
    shown = f"{text(service.get('namespace'))}/{text(service.get('name'))}" if service else "Local"
    available = "Unknown"
    for condition in items(obj, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Available":
            available = text(condition.get("status"))
            if available != "True":
                available = f"{available} ({text(condition.get('reason'))})"
    return [name, shown, available, age]


API_SERVICES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Service", description="The reference to the service that hosts this API endpoint."),
        Column("Available", description="Whether this service is available."),
        AGE_COLUMN,
    ),
    _api_service_cells,
)

#: Printers of these resources, by (group, resource).
CONTROL_PLANE_PRINTERS: Final = {
    ("", "componentstatuses"): COMPONENT_STATUSES,
    ("", "replicationcontrollers"): REPLICATION_CONTROLLERS,
    ("autoscaling", "horizontalpodautoscalers"): HORIZONTAL_POD_AUTOSCALERS,
    ("certificates.k8s.io", "certificatesigningrequests"): CERTIFICATE_SIGNING_REQUESTS,
    ("apiregistration.k8s.io", "apiservices"): API_SERVICES,
}
