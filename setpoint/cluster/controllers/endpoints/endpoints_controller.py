"""The Endpoints controller: one core/v1 Endpoints per Service, named as it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from setpoint.cluster.controllers.endpoints.service_pods import (
    is_headless,
    pod_ready,
    resolved_ports,
    selected_pods,
    selector_of,
    services_selecting,
    target_ref,
)
from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import ObjectKey
from setpoint.cluster.controllers.framework.timestamps import micro_time_text
from setpoint.cluster.controllers.workload_context import WriteError

TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
HEADLESS_LABEL = "service.kubernetes.io/headless"


def endpoint_subsets(service: Mapping[str, Any], pods: list[Mapping[str, Any]]) -> list[Any]:
    """``subsets``: addresses grouped by their resolved port set (``RepackSubsets``)."""
    publish_not_ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    groups: dict[str, dict[str, Any]] = {}
    for pod in pods:
        if "deletionTimestamp" in pod["metadata"] and not publish_not_ready:
            continue
        ports = resolved_ports(service, pod)
        if (service.get("spec") or {}).get("ports") and not ports:
            continue
        address: dict[str, Any] = {"ip": pod["status"]["podIP"], "targetRef": target_ref(pod)}
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            address["nodeName"] = node
        ports_key = repr(sorted((p.get("name", ""), p["port"], p["protocol"]) for p in ports))
        subset = groups.setdefault(ports_key, {"ports": ports})
        field = "addresses" if publish_not_ready or pod_ready(pod) else "notReadyAddresses"
        subset.setdefault(field, []).append(address)
    subsets = []
    for subset in groups.values():
        ordered: dict[str, Any] = {}
        for field in ("addresses", "notReadyAddresses"):
            if field in subset:
                ordered[field] = subset[field]
        if subset["ports"]:
            ordered["ports"] = subset["ports"]
        subsets.append(ordered)
    return subsets


class EndpointsController(Controller):
    """Writes the Endpoints of every Service that has a selector."""

    name: ClassVar[str] = "endpoint"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:endpoint-controller",
            field_manager="kube-controller-manager",
            component="endpoint-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch("services"), Watch("pods", lambda pod: services_selecting(self.access, pod))]

    async def reconcile(self, key: ObjectKey) -> float | None:
        service = self.access.get("services", key.namespace, key.name)
        existing = self.access.get("endpoints", key.namespace, key.name)
        if service is None:
            if existing is not None:
                try:
                    await self.access.delete("endpoints", key.namespace, key.name)
                except WriteError as exc:
                    if exc.code != 404:
                        raise
            return None
        if selector_of(service) is None:
            return None
        subsets = endpoint_subsets(service, selected_pods(self.access, service))
        labels = dict(service["metadata"].get("labels") or {})
        if is_headless(service):
            labels[HEADLESS_LABEL] = ""
        if (
            existing is not None
            and (existing.get("subsets") or []) == subsets
            and (existing["metadata"].get("labels") or {}) == labels
        ):
            return None
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": key.name,
                "namespace": key.namespace,
                "annotations": {TRIGGER_TIME: micro_time_text(self.access.clock)},
            },
        }
        if labels:
            body["metadata"]["labels"] = labels
        if subsets:
            body["subsets"] = subsets
        if existing is None:
            await self.access.create("endpoints", body)
        else:
            body["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
            await self.access.update("endpoints", body)
        return None
