"""Tables of the core group (``""``/v1): pods, services, endpoints, config maps, secrets,
namespaces, nodes, events and service accounts, as ``printers.go`` prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from setpoint.cluster.apiserver.printers.columns import (
    AGE_COLUMN,
    NAME_COLUMN,
    NONE,
    UNKNOWN,
    UNSET,
    Column,
    Printer,
    field,
    format_labels,
    integer,
    items,
    mapping,
    meta,
    name_and_age,
    since,
    text,
)
from setpoint.cluster.apiserver.schema.quantities import canonical_text

#: The pod phases that are final (``IsPodPhaseTerminal``).
_TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})
#: The reason the node controller gives pods of an unreachable node.
_NODE_UNREACHABLE_REASON: Final = "NodeLost"
_LOAD_BALANCER_WIDTH: Final = 16


def _is_restartable_init(container: dict[str, Any] | None) -> bool:
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _condition_true(conditions: list[Any], kind: str) -> bool:
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def _later(current: str, candidate: object) -> str:
    # RFC 3339 UTC timestamps of the same layout compare as strings.
    return candidate if isinstance(candidate, str) and candidate > current else current


def pod_status(pod: dict[str, Any]) -> tuple[int, int, str, int, str]:
    """(ready, total, STATUS, restarts, last restart time) as ``printPod`` computes them."""
    spec = mapping(pod, "spec")
    status = mapping(pod, "status")
    conditions = items(status, "conditions")
    total = len(items(spec, "containers"))
    ready = 0
    restarts = 0
    restartable_restarts = 0
    last_restart = ""
    last_restartable_restart = ""
    reason = text(status.get("reason")) or text(status.get("phase"))
    for condition in conditions:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("reason") == "SchedulingGated"
        ):
            reason = "SchedulingGated"
    init_specs: dict[str, dict[str, Any]] = {}
    init_list = [c for c in items(spec, "initContainers") if isinstance(c, dict)]
    for container in init_list:
        init_specs[text(container.get("name"))] = container
        if _is_restartable_init(container):
            total += 1
    initializing = False
    for index, container in enumerate(items(status, "initContainerStatuses")):
        if not isinstance(container, dict):
            continue
        restarts += integer(container.get("restartCount"))
        finished = field(container, "lastState", "terminated", "finishedAt")
        last_restart = _later(last_restart, finished)
        restartable = _is_restartable_init(init_specs.get(text(container.get("name"))))
        if restartable:
            restartable_restarts += integer(container.get("restartCount"))
            last_restartable_restart = _later(last_restartable_restart, finished)
        terminated = field(container, "state", "terminated")
        waiting = field(container, "state", "waiting")
        if isinstance(terminated, dict) and integer(terminated.get("exitCode")) == 0:
            continue
        if restartable and container.get("started") is True:
            if container.get("ready") is True:
                ready += 1
            continue
        if isinstance(terminated, dict):
            if not text(terminated.get("reason")):
                if integer(terminated.get("signal")) != 0:
                    reason = f"Init:Signal:{integer(terminated.get('signal'))}"
                else:
                    reason = f"Init:ExitCode:{integer(terminated.get('exitCode'))}"
            else:
                reason = "Init:" + text(terminated.get("reason"))
        elif (
            isinstance(waiting, dict)
            and text(waiting.get("reason"))
            and waiting.get("reason") != "PodInitializing"
        ):
            reason = "Init:" + text(waiting.get("reason"))
        else:
            reason = f"Init:{index}/{len(init_list)}"
        initializing = True
        break
    if not initializing or _condition_true(conditions, "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        for container in reversed(items(status, "containerStatuses")):
            if not isinstance(container, dict):
                continue
            restarts += integer(container.get("restartCount"))
            last_restart = _later(
                last_restart, field(container, "lastState", "terminated", "finishedAt")
            )
            waiting = field(container, "state", "waiting")
            terminated = field(container, "state", "terminated")
            if isinstance(waiting, dict) and text(waiting.get("reason")):
                reason = text(waiting.get("reason"))
            elif isinstance(terminated, dict) and text(terminated.get("reason")):
                reason = text(terminated.get("reason"))
            elif isinstance(terminated, dict):
                if integer(terminated.get("signal")) != 0:
                    reason = f"Signal:{integer(terminated.get('signal'))}"
                else:
                    reason = f"ExitCode:{integer(terminated.get('exitCode'))}"
            elif container.get("ready") is True and isinstance(
                field(container, "state", "running"), dict
            ):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"
    deleting = bool(meta(pod).get("deletionTimestamp"))
    if deleting and status.get("reason") == _NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif deleting and status.get("phase") not in _TERMINAL_PHASES:
        reason = "Terminating"
    return ready, total, reason, restarts, last_restart


def _pod_cells(pod: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(pod, now)
    ready, total, reason, restarts, last_restart = pod_status(pod)
    shown_restarts = str(restarts)
    if restarts and last_restart:
        shown_restarts = f"{restarts} ({since(last_restart, now)} ago)"
    spec = mapping(pod, "spec")
    status = mapping(pod, "status")
    addresses = items(status, "podIPs")
    pod_ip = text(addresses[0].get("ip")) if addresses and isinstance(addresses[0], dict) else ""
    gates = items(spec, "readinessGates")
    readiness = NONE
    if gates:
        conditions = [c for c in items(status, "conditions") if isinstance(c, dict)]
        true_count = 0
        for gate in gates:
            wanted = gate.get("conditionType") if isinstance(gate, dict) else None
            for condition in conditions:
                if condition.get("type") == wanted:
                    true_count += condition.get("status") == "True"
                    break
        readiness = f"{true_count}/{len(gates)}"
    return [
        name,
        f"{ready}/{total}",
        reason,
        shown_restarts,
        age,
        pod_ip or NONE,
        text(spec.get("nodeName")) or NONE,
        text(status.get("nominatedNodeName")) or NONE,
        readiness,
    ]


def _pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    phase = field(pod, "status", "phase")
    if phase == "Succeeded":
        message = "The pod has completed successfully."
    elif phase == "Failed":
        message = "The pod failed."
    else:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


PODS: Final = Printer(
    (
        NAME_COLUMN,
        Column(
            "Ready",
            description="The aggregate readiness state of this pod for accepting traffic.",
        ),
        Column("Status", description="The aggregate status of the containers in this pod."),
        Column(
            "Restarts",
            description="The number of times the containers in this pod have been restarted "
            "and when the last container in this pod has restarted.",
        ),
        AGE_COLUMN,
        Column("IP", priority=1, doc="core.v1.PodStatus/podIP"),
        Column("Node", priority=1, doc="core.v1.PodSpec/nodeName"),
        Column("Nominated Node", priority=1, doc="core.v1.PodStatus/nominatedNodeName"),
        Column("Readiness Gates", priority=1, doc="core.v1.PodSpec/readinessGates"),
    ),
    _pod_cells,
    _pod_conditions,
)


def _load_balancer(service: dict[str, Any]) -> str:
    found = set()
    for entry in items(service, "status", "loadBalancer", "ingress"):
        if isinstance(entry, dict):
            address = text(entry.get("ip")) or text(entry.get("hostname"))
            if address:
                found.add(address)
    return ",".join(sorted(found))  # the server prints wide: never clipped


def _external_ip(service: dict[str, Any]) -> str:
    spec = mapping(service, "spec")
    kind = spec.get("type")
    external = [text(ip) for ip in items(spec, "externalIPs")]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if kind == "LoadBalancer":
        balancer = _load_balancer(service)
        if external:
            return ",".join(([*balancer.split(",")] if balancer else []) + external)
        return balancer or "<pending>"
    if kind == "ExternalName":
        return text(spec.get("externalName"))
    return UNKNOWN


def _ports(service: dict[str, Any]) -> str:
    pieces = []
    for port in items(service, "spec", "ports"):
        if not isinstance(port, dict):
            continue
        protocol = text(port.get("protocol"))
        node_port = integer(port.get("nodePort"))
        if node_port > 0:
            pieces.append(f"{integer(port.get('port'))}:{node_port}/{protocol}")
        else:
            pieces.append(f"{integer(port.get('port'))}/{protocol}")
    return ",".join(pieces) or NONE


def _service_cells(service: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(service, now)
    spec = mapping(service, "spec")
    addresses = items(spec, "clusterIPs")
    cluster_ip = text(addresses[0]) if addresses else NONE
    return [
        name,
        text(spec.get("type")),
        cluster_ip,
        _external_ip(service),
        _ports(service),
        age,
        format_labels(spec.get("selector")),
    ]


SERVICES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Type", doc="core.v1.ServiceSpec/type"),
        Column("Cluster-IP", doc="core.v1.ServiceSpec/clusterIP"),
        Column("External-IP", doc="core.v1.ServiceSpec/externalIPs"),
        Column("Port(s)", doc="core.v1.ServiceSpec/ports"),
        AGE_COLUMN,
        Column("Selector", priority=1, doc="core.v1.ServiceSpec/selector"),
    ),
    _service_cells,
)


def _endpoints(obj: dict[str, Any]) -> str:
    subsets = [s for s in items(obj, "subsets") if isinstance(s, dict)]
    if not subsets:
        return NONE
    listed: list[str] = []
    limit = 3
    more = False
    count = 0
    for subset in subsets:
        addresses = [a for a in items(subset, "addresses") if isinstance(a, dict)]
        ports = [p for p in items(subset, "ports") if isinstance(p, dict)]
        if not ports:
            count += len(addresses)
            for address in addresses:
                if len(listed) == limit:
                    more = True
                    break
                listed.append(text(address.get("ip")))
            continue
        for port in ports:
            count += len(addresses)
            for address in addresses:
                if len(listed) == limit:
                    more = True
                    break
                ip = text(address.get("ip"))
                host = f"[{ip}]" if ":" in ip else ip
                listed.append(f"{host}:{integer(port.get('port'))}")
    joined = ",".join(listed)
    return f"{joined} + {count - limit} more..." if more else joined


ENDPOINTS: Final = Printer(
    (NAME_COLUMN, Column("Endpoints", doc="core.v1.Endpoints/subsets"), AGE_COLUMN),
    lambda obj, now: [name_and_age(obj, now)[0], _endpoints(obj), name_and_age(obj, now)[1]],
)


def _count_cells(*keys: str) -> Any:
    def cells(obj: dict[str, Any], now: datetime) -> list[Any]:
        name, age = name_and_age(obj, now)
        return [name, sum(len(mapping(obj, key)) for key in keys), age]

    return cells


def _quota_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    hard = mapping(obj, "status", "hard")
    used = mapping(obj, "status", "used")
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        parts = resource.split(".")
        shown = limits if len(parts) > 1 and parts[0] == "limits" else requests
        shown.append(f"{resource}: {_quantity(used.get(resource))}/{_quantity(hard[resource])}")
    return [name, age, ", ".join(requests), ", ".join(limits)]


def _quantity(value: object) -> str:
    """A quantity as Go prints it (a missing one is 0)."""
    return canonical_text(value) or "0"


RESOURCE_QUOTAS: Final = Printer(
    (
        NAME_COLUMN,
        AGE_COLUMN,
        Column(
            "Request",
            description="Request represents a minimum amount of cpu/memory that a container "
            "may consume.",
        ),
        Column(
            "Limit",
            description="Limits control the maximum amount of cpu/memory that a container may "
            "use independent of contention on the node.",
        ),
    ),
    _quota_cells,
)


def _slice_list(values: list[str], count: int) -> str:
    """upstream's ``listWithMoreString`` with at most 3 shown."""
    shown = ",".join(values[:3])
    if count > 3:
        return f"{shown} + {count - 3} more..."
    return shown or UNSET


def _slice_ports(obj: dict[str, Any]) -> str:
    ports: list[str] = []
    for port in items(obj, "ports"):
        if not isinstance(port, dict):
            continue
        if isinstance(port.get("port"), int):
            ports.append(str(port["port"]))
        elif port.get("name") is not None:
            ports.append(text(port.get("name")))
        else:
            ports.append("*")
    return _slice_list(ports, len(ports))


def _slice_endpoints(obj: dict[str, Any]) -> str:
    addresses = [
        text(address)
        for endpoint in items(obj, "endpoints")
        if isinstance(endpoint, dict)
        for address in endpoint.get("addresses") or []
    ]
    return _slice_list(addresses, len(addresses))


def _endpoint_slice_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, text(obj.get("addressType")), _slice_ports(obj), _slice_endpoints(obj), age]


ENDPOINT_SLICES: Final = Printer(
    (
        NAME_COLUMN,
        Column("AddressType", doc="discovery.v1.EndpointSlice/addressType"),
        Column("Ports", doc="discovery.v1.EndpointSlice/ports"),
        Column("Endpoints", doc="discovery.v1.EndpointSlice/endpoints"),
        AGE_COLUMN,
    ),
    _endpoint_slice_cells,
)


CONFIG_MAPS: Final = Printer(
    (NAME_COLUMN, Column("Data", doc="core.v1.ConfigMap/data"), AGE_COLUMN),
    _count_cells("data", "binaryData"),
)


def _secret_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, text(obj.get("type")), len(mapping(obj, "data")), age]


SECRETS: Final = Printer(
    (
        NAME_COLUMN,
        Column("Type", doc="core.v1.Secret/type"),
        Column("Data", doc="core.v1.Secret/data"),
        AGE_COLUMN,
    ),
    _secret_cells,
)


def _namespace_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, text(field(obj, "status", "phase")), age]


NAMESPACES: Final = Printer(
    (NAME_COLUMN, Column("Status", description="The status of the namespace"), AGE_COLUMN),
    _namespace_cells,
)


def _service_account_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(obj, now)
    return [name, len(items(obj, "secrets")), age]


SERVICE_ACCOUNTS: Final = Printer(
    (NAME_COLUMN, Column("Secrets", doc="core.v1.ServiceAccount/secrets"), AGE_COLUMN),
    _service_account_cells,
)


def _node_address(node: dict[str, Any], kind: str) -> str:
    for address in items(node, "status", "addresses"):
        if isinstance(address, dict) and address.get("type") == kind:
            return text(address.get("address"))
    return NONE


def _node_cells(node: dict[str, Any], now: datetime) -> list[Any]:
    name, age = name_and_age(node, now)
    status: list[str] = []
    for condition in items(node, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            status = ["Ready" if condition.get("status") == "True" else "NotReady"]
    if not status:
        status = ["Unknown"]
    if field(node, "spec", "unschedulable") is True:
        status.append("SchedulingDisabled")
    roles = set()
    for key, value in mapping(node, "metadata", "labels").items():
        if key.startswith("node-role.kubernetes.io/") and key[len("node-role.kubernetes.io/") :]:
            roles.add(key[len("node-role.kubernetes.io/") :])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = mapping(node, "status", "nodeInfo")
    return [
        name,
        ",".join(status),
        ",".join(sorted(roles)) or NONE,
        age,
        text(info.get("kubeletVersion")),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        text(info.get("osImage")) or UNKNOWN,
        text(info.get("kernelVersion")) or UNKNOWN,
        text(info.get("containerRuntimeVersion")) or UNKNOWN,
    ]


NODES: Final = Printer(
    (
        NAME_COLUMN,
        Column("Status", description="The status of the node"),
        Column("Roles", description="The roles of the node"),
        AGE_COLUMN,
        Column("Version", doc="core.v1.NodeSystemInfo/kubeletVersion"),
        Column("Internal-IP", priority=1, doc="core.v1.NodeStatus/addresses"),
        Column("External-IP", priority=1, doc="core.v1.NodeStatus/addresses"),
        Column("OS-Image", priority=1, doc="core.v1.NodeSystemInfo/osImage"),
        Column("Kernel-Version", priority=1, doc="core.v1.NodeSystemInfo/kernelVersion"),
        Column(
            "Container-Runtime", priority=1, doc="core.v1.NodeSystemInfo/containerRuntimeVersion"
        ),
    ),
    _node_cells,
)


def _event_cells(event: dict[str, Any], now: datetime) -> list[Any]:
    first = since(event.get("firstTimestamp"), now)
    if not event.get("firstTimestamp"):
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = integer(event.get("count"))
    series = event.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = integer(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API carry no count
    involved = mapping(event, "involvedObject")
    kind = text(involved.get("kind")).lower()
    target = f"{kind}/{involved['name']}" if text(involved.get("name")) else kind
    component = text(field(event, "source", "component")) or text(event.get("reportingComponent"))
    instance = text(field(event, "source", "host")) or text(event.get("reportingInstance"))
    source = f"{component}, {instance}" if instance else component
    return [
        last,
        text(event.get("type")),
        text(event.get("reason")),
        target,
        text(involved.get("fieldPath")),
        source,
        text(event.get("message")).strip(),
        first,
        count,
        text(meta(event).get("name")),
    ]


EVENTS: Final = Printer(
    (
        Column("Last Seen", doc="core.v1.Event/lastTimestamp"),
        Column("Type", doc="core.v1.Event/type"),
        Column("Reason", doc="core.v1.Event/reason"),
        Column("Object", doc="core.v1.Event/involvedObject"),
        Column("Subobject", priority=1, doc="core.v1.ObjectReference/fieldPath"),
        Column("Source", priority=1, doc="core.v1.Event/source"),
        Column("Message", doc="core.v1.Event/message"),
        Column("First Seen", priority=1, doc="core.v1.Event/firstTimestamp"),
        Column("Count", priority=1, doc="core.v1.Event/count"),
        Column("Name", priority=1, format="name", description=NAME_COLUMN.description),
    ),
    _event_cells,
)

#: Printers of the core group by resource (plural).
CORE_PRINTERS: Final = {
    "pods": PODS,
    "services": SERVICES,
    "endpoints": ENDPOINTS,
    "configmaps": CONFIG_MAPS,
    "resourcequotas": RESOURCE_QUOTAS,
    "secrets": SECRETS,
    "namespaces": NAMESPACES,
    "serviceaccounts": SERVICE_ACCOUNTS,
    "nodes": NODES,
    "events": EVENTS,
}
