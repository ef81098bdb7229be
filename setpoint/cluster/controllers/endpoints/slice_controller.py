"""The EndpointSlice controller: ``discovery.k8s.io/v1`` slices owned by their Service."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

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

SERVICE_NAME_LABEL: Final = "kubernetes.io/service-name"
MANAGED_BY_LABEL: Final = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY: Final = "endpointslice-controller.k8s.io"
HEADLESS_LABEL: Final = "service.kubernetes.io/headless"
TRIGGER_TIME: Final = "endpoints.kubernetes.io/last-change-trigger-time"
MAX_ENDPOINTS_PER_SLICE: Final = 100


def _slice_owner(slice_: Mapping[str, Any]) -> list[ObjectKey]:
    labels = (slice_.get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_BY_LABEL) != MANAGED_BY or SERVICE_NAME_LABEL not in labels:
        return []
    return [ObjectKey(slice_["metadata"].get("namespace") or "", labels[SERVICE_NAME_LABEL])]


def slice_contents(
    service: Mapping[str, Any], pods: list[Mapping[str, Any]]
) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """(ports, endpoints) of each slice the Service needs (one with no endpoints at least)."""
    publish_not_ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    groups: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for pod in pods:
        ports = resolved_ports(service, pod)
        terminating = "deletionTimestamp" in pod["metadata"]
        serving = pod_ready(pod)
        endpoint: dict[str, Any] = {
            "addresses": [pod["status"]["podIP"]],
            "conditions": {
                "ready": publish_not_ready or (serving and not terminating),
                "serving": serving,
                "terminating": terminating,
            },
            "targetRef": target_ref(pod),
        }
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            endpoint["nodeName"] = node
        ports_key = repr(sorted((p.get("name", ""), p["port"], p["protocol"]) for p in ports))
        groups.setdefault(ports_key, (ports, []))[1].append(endpoint)
    contents: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    for ports, endpoints in groups.values():
        for start in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE):
            contents.append((ports, endpoints[start : start + MAX_ENDPOINTS_PER_SLICE]))
    if not contents:
        contents.append(([], []))  # the placeholder slice of a Service without endpoints
    return contents


class EndpointSliceController(Controller):
    """Writes the EndpointSlices of every Service that has a selector."""

    name: ClassVar[str] = "endpointslice"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:endpointslice-controller",
            field_manager="kube-controller-manager",
            component="endpoint-slice-controller",
        )

    def watches(self) -> list[Watch]:
        return [
            Watch("services"),
            Watch("pods", lambda pod: services_selecting(self.access, pod)),
            Watch("discovery.k8s.io/endpointslices", _slice_owner),
        ]

    async def reconcile(self, key: ObjectKey) -> float | None:
        service = self.access.get("services", key.namespace, key.name)
        if service is None or selector_of(service) is None:
            return None  # the garbage collector removes slices of a deleted Service
        existing = [
            s
            for s in self.access.list("discovery.k8s.io/endpointslices", key.namespace)
            if _slice_owner(s) == [key]
            and any(
                ref.get("uid") == service["metadata"]["uid"]
                for ref in s["metadata"].get("ownerReferences") or []
            )
        ]
        existing.sort(key=lambda s: s["metadata"]["name"])
        labels = dict(service["metadata"].get("labels") or {})
        labels[SERVICE_NAME_LABEL] = key.name
        labels[MANAGED_BY_LABEL] = MANAGED_BY
        if is_headless(service):
            labels[HEADLESS_LABEL] = ""
        wanted = slice_contents(service, selected_pods(self.access, service))
        for index, (ports, endpoints) in enumerate(wanted):
            current = existing[index] if index < len(existing) else None
            if (
                current is not None
                and (current.get("endpoints") or []) == endpoints
                and (current.get("ports") or []) == ports
                and current["metadata"].get("labels") == labels
            ):
                continue
            body: dict[str, Any] = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "namespace": key.namespace,
                    "labels": labels,
                    "annotations": {TRIGGER_TIME: micro_time_text(self.access.clock)},
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Service",
                            "name": key.name,
                            "uid": service["metadata"]["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            }
            if current is None:
                body["metadata"]["generateName"] = f"{key.name[:57]}-"
                await self.access.create("discovery.k8s.io/endpointslices", body)
            else:
                body["metadata"]["name"] = current["metadata"]["name"]
                body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                await self.access.update("discovery.k8s.io/endpointslices", body)
        for extra in existing[len(wanted) :]:
            try:
                await self.access.delete(
                    "discovery.k8s.io/endpointslices", key.namespace, extra["metadata"]["name"]
                )
            except WriteError as exc:
                if exc.code != 404:
                    raise
        return None
