"""What both controllers read: a Service's selected pods and their resolved ports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of

_TERMINAL = ("Succeeded", "Failed")


def selector_of(service: Mapping[str, Any]) -> dict[str, str] | None:
    """The Service's selector, or None when it has none (its endpoints are the user's)."""
    selector = (service.get("spec") or {}).get("selector")
    return dict(selector) if selector else None


def matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` carry every key/value of ``selector``."""
    return all(labels.get(key) == value for key, value in selector.items())


def services_selecting(access: ClusterAccess, pod: Object) -> Iterable[ObjectKey]:
    """The keys of the Services in the pod's namespace whose selector matches it."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    keys = []
    for service in access.list("services", meta.get("namespace") or ""):
        selector = selector_of(service)
        if selector is not None and matches(selector, labels):
            keys.append(key_of(service))
    return keys


def selected_pods(access: ClusterAccess, service: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Pods in the Service's namespace matching its selector, with an IP and not finished,
    sorted by IP."""
    selector = selector_of(service) or {}
    namespace = service["metadata"]["namespace"]
    pods = [
        pod
        for pod in access.list("pods", namespace)
        if matches(selector, (pod.get("metadata") or {}).get("labels") or {})
        and (pod.get("status") or {}).get("podIP")
        and (pod.get("status") or {}).get("phase") not in _TERMINAL
    ]
    return sorted(pods, key=lambda pod: _ip_key(pod["status"]["podIP"]))


def _ip_key(ip: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in ip.split("."))
    except ValueError:
        return (0,)


def pod_ready(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's Ready condition is True."""
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def resolved_ports(service: Mapping[str, Any], pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Service's ports with ``targetPort`` resolved for ``pod`` (ports a named target
    port cannot be found for are left out, as upstream)."""
    container_ports: dict[str, int] = {}
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") and isinstance(port.get("containerPort"), int):
                container_ports.setdefault(port["name"], port["containerPort"])
    resolved = []
    for port in (service.get("spec") or {}).get("ports") or []:
        target = port.get("targetPort", port.get("port"))
        if isinstance(target, str):
            if target.isdigit():
                number: int | None = int(target)
            else:
                number = container_ports.get(target)
        else:
            number = target if isinstance(target, int) else None
        if number is None:
            continue
        entry: dict[str, Any] = {"port": number, "protocol": port.get("protocol") or "TCP"}
        if port.get("name"):
            entry["name"] = port["name"]
        if port.get("appProtocol"):
            entry["appProtocol"] = port["appProtocol"]
        resolved.append(entry)
    return resolved


def target_ref(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The ``targetRef`` of a pod's endpoint."""
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def is_headless(service: Mapping[str, Any]) -> bool:
    """Whether the Service is headless (``clusterIP: None``)."""
    return (service.get("spec") or {}).get("clusterIP") == "None"
