"""Tables of the smaller groups operators meet: leases (``coordination.k8s.io``), priority
classes (``scheduling.k8s.io``), ingresses, ingress classes and network policies
(``networking.k8s.io``), pod disruption budgets (``policy``) and webhook configurations
(``admissionregistration.k8s.io``), as ``printers.go`` prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.api.go_format import go_label_selector
from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    NAME_COLUMN,
    NONE,
    Column,
    Printer,
    field,
    format_label_selector,
    integer,
    items,
    mapping,
    name_and_age,
    text,
)


def _lease_cells(lease: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(lease, now)
    return [name, text(field(lease, "spec", "holderIdentity")), age]


LEASES: Final = Printer(
    (NAME_COLUMN, Column("Holder", doc="coordination.v1.LeaseSpec/holderIdentity"), AGE_COLUMN),
    _lease_cells,
)


def _priority_class_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [
        name,
        integer(obj.get("value")),
        obj.get("globalDefault") is True,
        age,
        text(obj.get("preemptionPolicy")),
    ]


PRIORITY_CLASSES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Value", type="integer", doc="scheduling.v1.PriorityClass/value"),
        Column("Global-Default", type="boolean", doc="scheduling.v1.PriorityClass/globalDefault"),
        AGE_COLUMN,
        Column("PreemptionPolicy", doc="scheduling.v1.PriorityClass/preemptionPolicy"),
    ),
    _priority_class_cells,
)


def _ingress_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    rules = [r for r in items(spec, "rules") if isinstance(r, dict)]
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and text(rule.get("host")):
            hosts.append(text(rule.get("host")))
    shown_hosts = ",".join(hosts) if hosts else "*"
    if hosts and more:
        shown_hosts = f"{shown_hosts} + {len(rules) - 3} more..."
    found = set()
    for entry in items(obj, "status", "loadBalancer", "ingress"):
        if isinstance(entry, dict) and (text(entry.get("ip")) or text(entry.get("hostname"))):
            found.add(text(entry.get("ip")) or text(entry.get("hostname")))
    return [
        name,
        text(spec.get("ingressClassName")) or NONE,
        shown_hosts,
        ",".join(sorted(found)),
        "80, 443" if items(spec, "tls") else "80",
        age,
    ]


INGRESSES: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "Class",
            description="The name of the IngressClass resource that should be used for "
            "additional configuration",
        ),
        Column(
            "Hosts",
            description="Hosts that incoming requests are matched against before the ingress rule",
        ),
        Column(
            "Address",
            description="Address is a list containing ingress points for the load-balancer",
        ),
        Column("Ports", description="Ports of TLS configurations that open"),
        AGE_COLUMN,
    ),
    _ingress_cells,
)


def _ingress_class_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    parameters = field(obj, "spec", "parameters")
    shown = NONE
    if isinstance(parameters, dict):
        shown = text(parameters.get("kind"))
        if isinstance(parameters.get("apiGroup"), str):
            shown += "." + parameters["apiGroup"]
        shown += "/" + text(parameters.get("name"))
    return [name, text(field(obj, "spec", "controller")), shown, age]


INGRESS_CLASSES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Controller", description="Controller that is responsible for handling this class"),
        Column("Parameters", description="A reference to a resource with additional parameters"),
        AGE_COLUMN,
    ),
    _ingress_class_cells,
)


def _network_policy_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, format_label_selector(mapping(obj, "spec", "podSelector")), age]


NETWORK_POLICIES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Pod-Selector", doc="networking.v1.NetworkPolicySpec/podSelector"),
        AGE_COLUMN,
    ),
    _network_policy_cells,
)


def _int_or_string(value: object) -> str:
    if value is None:
        return "N/A"
    return str(value)


def _disruption_budget_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    spec = mapping(obj, "spec")
    return [
        name,
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        integer(field(obj, "status", "disruptionsAllowed")),
        age,
    ]


POD_DISRUPTION_BUDGETS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Min Available", description="The minimum number of pods that must be available."),
        Column(
            "Max Unavailable", description="The maximum number of pods that may be unavailable."
        ),
        Column(
            "Allowed Disruptions",
            type="integer",
            description="Calculated number of pods that may be disrupted at this time.",
        ),
        AGE_COLUMN,
    ),
    _disruption_budget_cells,
)


def _webhook_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, len(items(obj, "webhooks")), age]


WEBHOOK_CONFIGURATIONS: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "Webhooks",
            type="integer",
            description="Webhooks indicates the number of webhooks registered in this "
            "configuration",
        ),
        AGE_COLUMN,
    ),
    _webhook_cells,
)


def _scale_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [
        name,
        integer(field(obj, "spec", "replicas")),
        integer(field(obj, "status", "replicas")),
        age,
    ]


#: The ``scale`` subresource of any scalable kind (``autoscaling/v1`` Scale).
SCALE: Final = Printer(
    (
        Column("Name", description=NAME_COLUMN.description),
        Column("Desired", type="integer", doc="autoscaling.v1.ScaleSpec/replicas"),
        Column("Available", type="integer", doc="autoscaling.v1.ScaleStatus/replicas"),
        AGE_COLUMN,
    ),
    _scale_cells,
)


def _policy_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    param_kind = mapping(obj, "spec", "paramKind")
    shown = (
        f"{text(param_kind.get('apiVersion'))}/{text(param_kind.get('kind'))}"
        if field(obj, "spec", "paramKind") is not None
        else "<unset>"
    )
    return [name, len(items(obj, "spec", "validations")), shown, age]


VALIDATING_ADMISSION_POLICIES: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "Validations",
            type="integer",
            description="Validations indicates the number of validation rules defined in this "
            "configuration",
        ),
        Column(
            "ParamKind",
            description="ParamKind specifies the kind of resources used to parameterize this "
            "policy",
        ),
        AGE_COLUMN,
    ),
    _policy_cells,
)


def _param_ref(obj: dict[str, Any]) -> str:
    ref = field(obj, "spec", "paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    name = text(ref.get("name"))
    if name:
        namespace = text(ref.get("namespace"))
        # Without a namespace the parameter may be cluster-scoped: upstream shows "*/".
        return f"{namespace}/{name}" if namespace else f"*/{name}"
    if ref.get("selector") is not None:
        return go_label_selector(ref.get("selector"))
    return "<unset>"


def _binding_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, text(field(obj, "spec", "policyName")), _param_ref(obj), age]


VALIDATING_ADMISSION_POLICY_BINDINGS: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "PolicyName",
            description="PolicyName indicates the policy definition which the policy binding "
            "binded to",
        ),
        Column(
            "ParamRef",
            description="ParamRef indicates the param resource which sets the configration param",
        ),
        AGE_COLUMN,
    ),
    _binding_cells,
)

#: Printers of these groups, by (group, resource).
PLATFORM_PRINTERS: Final = {
    ("coordination.k8s.io", "leases"): LEASES,
    ("scheduling.k8s.io", "priorityclasses"): PRIORITY_CLASSES,
    ("networking.k8s.io", "ingresses"): INGRESSES,
    ("networking.k8s.io", "ingressclasses"): INGRESS_CLASSES,
    ("networking.k8s.io", "networkpolicies"): NETWORK_POLICIES,
    ("policy", "poddisruptionbudgets"): POD_DISRUPTION_BUDGETS,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): WEBHOOK_CONFIGURATIONS,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): WEBHOOK_CONFIGURATIONS,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): (
        VALIDATING_ADMISSION_POLICIES
    ),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): (
        VALIDATING_ADMISSION_POLICY_BINDINGS
    ),
}
