"""What one object uses of each quota resource, and whether a quota's scopes select it.

Upstream's evaluators (``pkg/quota/v1/evaluator/core``): a pod uses ``pods`` and its compute
resources while it is not finished (``count/pods`` always), a Service ``services`` and, by
type, ``services.loadbalancers`` and ``services.nodeports``, a claim
``persistentvolumeclaims`` and its requested storage (also per storage class), and any object
its ``count/<resource>[.<group>]`` (and the legacy ``configmaps``, ``secrets``,
``replicationcontrollers``, ``resourcequotas`` names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from setpoint.cluster.apiserver.schema.quantities import ZERO, Quantity

#: Compute resources a pod is charged for: (quota name, which of requests/limits, resource).
_POD_COMPUTE: Final = (
    ("cpu", "requests", "cpu"),
    ("requests.cpu", "requests", "cpu"),
    ("limits.cpu", "limits", "cpu"),
    ("memory", "requests", "memory"),
    ("requests.memory", "requests", "memory"),
    ("limits.memory", "limits", "memory"),
    ("ephemeral-storage", "requests", "ephemeral-storage"),
    ("requests.ephemeral-storage", "requests", "ephemeral-storage"),
    ("limits.ephemeral-storage", "limits", "ephemeral-storage"),
)
#: Quota resources whose every container must say its value (a 403 "must specify" otherwise).
_MUST_SPECIFY: Final = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
#: The legacy object-count names of core kinds (each the kind's plural; ``count/<resource>``
#: is the general form).
LEGACY_COUNT_NAMES: Final = frozenset(
    {"configmaps", "secrets", "replicationcontrollers", "resourcequotas"}
)
#: The kinds whose objects use more than their count (their evaluators' usage).
EVALUATED_PLURALS: Final = ("pods", "services", "persistentvolumeclaims")
_STORAGE_CLASS_SUFFIX: Final = ".storageclass.storage.k8s.io/"


def count_name(group: str, plural: str) -> str:
    """``count/pods``, ``count/deployments.apps``."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _is_finished(pod: Mapping[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed")


def _sum_containers(pod: Mapping[str, Any], which: str) -> dict[str, Quantity]:
    """The pod's requests or limits: its containers' sum, or the largest init container's
    when that is bigger, plus its overhead (``PodRequests``/``PodLimits``)."""
    spec = pod.get("spec") or {}
    totals: dict[str, Quantity] = {}
    for container in spec.get("containers") or []:
        for name, text in ((container.get("resources") or {}).get(which) or {}).items():
            value = Quantity.parse(text)
            if value is not None:
                totals[name] = totals[name] + value if name in totals else value
    for container in spec.get("initContainers") or []:
        for name, text in ((container.get("resources") or {}).get(which) or {}).items():
            value = Quantity.parse(text)
            if value is not None and (name not in totals or value.value > totals[name].value):
                totals[name] = value
    for name, text in (spec.get("overhead") or {}).items():
        value = Quantity.parse(text)
        if value is not None and name in totals:
            totals[name] = totals[name] + value
    return totals


def pod_usage(pod: Mapping[str, Any]) -> dict[str, Quantity]:
    """What a pod uses (a finished pod only its ``count/pods``)."""
    usage = {"count/pods": Quantity.count(1)}
    if _is_finished(pod):
        return usage
    usage["pods"] = Quantity.count(1)
    totals = {
        "requests": _sum_containers(pod, "requests"),
        "limits": _sum_containers(pod, "limits"),
    }
    for quota_name, which, resource in _POD_COMPUTE:
        value = totals[which].get(resource)
        if value is not None:
            usage[quota_name] = value
    for which, values in totals.items():
        for resource, value in values.items():
            if resource.startswith("hugepages-"):
                usage[f"{which}.{resource}"] = value
                if which == "requests":
                    usage[resource] = value
            elif "/" in resource and which == "requests":
                usage[f"requests.{resource}"] = value  # extended resources
    return usage


def service_usage(service: Mapping[str, Any]) -> dict[str, Quantity]:
    """What a Service uses: ``services``, and its node ports and load balancer by type."""
    spec = service.get("spec") or {}
    usage = {
        "count/services": Quantity.count(1),
        "services": Quantity.count(1),
        "services.loadbalancers": ZERO,
        "services.nodeports": ZERO,
    }
    kind = spec.get("type")
    ports = len(spec.get("ports") or [])
    if kind == "NodePort":
        usage["services.nodeports"] = Quantity.count(ports)
    elif kind == "LoadBalancer":
        usage["services.loadbalancers"] = Quantity.count(1)
        if spec.get("allocateLoadBalancerNodePorts") is False:
            ports = sum(1 for port in spec.get("ports") or [] if port.get("nodePort"))
        usage["services.nodeports"] = Quantity.count(ports)
    return usage


def claim_usage(claim: Mapping[str, Any]) -> dict[str, Quantity]:
    """What a PersistentVolumeClaim uses: one claim and its requested storage, also under
    its storage class's names."""
    spec = claim.get("spec") or {}
    usage = {
        "count/persistentvolumeclaims": Quantity.count(1),
        "persistentvolumeclaims": Quantity.count(1),
    }
    storage = Quantity.parse(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    allocated = Quantity.parse(
        ((claim.get("status") or {}).get("allocatedResources") or {}).get("storage")
    )
    if allocated is not None and (storage is None or allocated.value > storage.value):
        storage = allocated
    class_name = spec.get("storageClassName")
    if storage is not None:
        usage["requests.storage"] = storage
    if class_name:
        prefix = f"{class_name}{_STORAGE_CLASS_SUFFIX}"
        usage[prefix + "persistentvolumeclaims"] = Quantity.count(1)
        if storage is not None:
            usage[prefix + "requests.storage"] = storage
    return usage


_POD_NAMES: Final = frozenset({"pods", "count/pods"} | {name for name, _, _ in _POD_COMPUTE})
_SERVICE_NAMES: Final = frozenset(
    {"services", "count/services", "services.loadbalancers", "services.nodeports"}
)
_CLAIM_NAMES: Final = frozenset(
    {"persistentvolumeclaims", "count/persistentvolumeclaims", "requests.storage"}
)


def handles(group: str, plural: str, name: str) -> bool:
    """Whether quota resource ``name`` counts objects of ``group``/``plural`` (upstream's
    ``MatchingResources``)."""
    if not group and plural == "pods":
        return (
            name in _POD_NAMES
            or name.startswith(("hugepages-", "requests.hugepages-", "limits.hugepages-"))
            or (name.startswith("requests.") and "/" in name)
        )
    if not group and plural == "services":
        return name in _SERVICE_NAMES
    if not group and plural == "persistentvolumeclaims":
        if name in _CLAIM_NAMES:
            return True
        _, separator, what = name.partition(_STORAGE_CLASS_SUFFIX)
        return bool(separator) and what in ("requests.storage", "persistentvolumeclaims")
    return name == count_name(group, plural) or (
        not group and plural in LEGACY_COUNT_NAMES and name == plural
    )


def usage_of(group: str, plural: str, obj: Mapping[str, Any]) -> dict[str, Quantity]:
    """What ``obj`` of resource ``group``/``plural`` uses of every quota resource it counts in."""
    if not group and plural == "pods":
        return pod_usage(obj)
    if not group and plural == "services":
        return service_usage(obj)
    if not group and plural == "persistentvolumeclaims":
        return claim_usage(obj)
    usage = {count_name(group, plural): Quantity.count(1)}
    if not group and plural in LEGACY_COUNT_NAMES:
        usage[plural] = Quantity.count(1)
    return usage


# -- scopes ---------------------------------------------------------------------------------


def _is_best_effort(pod: Mapping[str, Any]) -> bool:
    """No container requests or limits CPU or memory (QoS class BestEffort)."""
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            for which in ("requests", "limits"):
                values = resources.get(which) or {}
                if any(name in values for name in ("cpu", "memory")):
                    return False
    return True


def _is_terminating(pod: Mapping[str, Any]) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return isinstance(deadline, int) and deadline >= 0


def _matches_scope(
    scope: str, operator: str, values: Iterable[str], pod: Mapping[str, Any]
) -> bool:
    if scope == "Terminating":
        return _is_terminating(pod)
    if scope == "NotTerminating":
        return not _is_terminating(pod)
    if scope == "BestEffort":
        return _is_best_effort(pod)
    if scope == "NotBestEffort":
        return not _is_best_effort(pod)
    if scope == "PriorityClass":
        name = (pod.get("spec") or {}).get("priorityClassName")
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return bool(name) and name in set(values)
        if operator == "NotIn":
            return not name or name not in set(values)
        return False
    if scope == "CrossNamespacePodAffinity":
        return _uses_cross_namespace_affinity(pod)
    return False


def _uses_cross_namespace_affinity(pod: Mapping[str, Any]) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [
            weighted.get("podAffinityTerm") or {}
            for weighted in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        for term in terms:
            if term.get("namespaces") or term.get("namespaceSelector") is not None:
                return True
    return False


def _scopes(quota: Mapping[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The quota's scopes and scope-selector expressions as (scope, operator, values)."""
    spec = quota.get("spec") or {}
    scopes: list[tuple[str, str, tuple[str, ...]]] = [
        (str(scope), "Exists", ()) for scope in spec.get("scopes") or []
    ]
    for expression in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        scopes.append(
            (
                str(expression.get("scopeName")),
                str(expression.get("operator")),
                tuple(str(v) for v in expression.get("values") or []),
            )
        )
    return scopes


def is_scoped(quota: Mapping[str, Any]) -> bool:
    """Whether ``quota`` has scopes (then it counts pods only)."""
    return bool(_scopes(quota))


def scopes_select(
    quota: Mapping[str, Any], group: str, plural: str, obj: Mapping[str, Any]
) -> bool:
    """Whether ``quota``'s scopes (and scope selector) select ``obj``. Only pods have scopes
    to match: a scoped quota counts nothing else."""
    scopes = _scopes(quota)
    if not scopes:
        return True
    if group or plural != "pods":
        return False
    return all(_matches_scope(scope, operator, values, obj) for scope, operator, values in scopes)


def missing_requests(pod: Mapping[str, Any], tracked: Iterable[str]) -> str | None:
    """Upstream's "must specify" check: when a quota tracks CPU or memory, every container
    must state that request or limit. The message, or None when nothing is missing."""
    required = _MUST_SPECIFY.intersection(tracked)
    if not required:
        return None
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            requests = resources.get("requests") or {}
            limits = resources.get("limits") or {}
            for name in required:
                which, _, resource = name.rpartition(".")
                present = resource in limits if which == "limits" else resource in requests
                if not present:
                    missing.setdefault(name, set()).add(str(container.get("name") or ""))
    if not missing:
        return None
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)


def sum_usage(
    usages: Iterable[Mapping[str, Quantity]], names: Iterable[str]
) -> dict[str, Quantity]:
    """The total of ``usages`` for each of ``names`` (0 where nothing uses it)."""
    wanted = set(names)
    totals: dict[str, Quantity] = {}
    for usage in usages:
        for name, value in usage.items():
            if name in wanted:
                totals[name] = totals[name] + value if name in totals else value
    for name in wanted:
        totals.setdefault(name, ZERO)
    return totals
