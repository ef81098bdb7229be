"""Services: cluster IP allocation and its immutability (``pkg/registry/core/service``).

A new Service's status is reset to ``{"loadBalancer": {}}``, as upstream writes it. A Service
of a type other than ExternalName gets a free address from the service range when it
asks for none; ``clusterIP: None`` (headless) is kept. The address, once set, cannot change.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.selection import (
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import Storage

#: kube-apiserver's default ``--service-cluster-ip-range``.
SERVICE_CIDR: Final = ipaddress.ip_network("10.96.0.0/12")
#: The first address is the ``kubernetes`` Service's upstream; start after it.
FIRST_ALLOCATED_OFFSET: Final = 10
HEADLESS: Final = "None"


def empty_status() -> dict[str, Any]:
    """A Service's status as upstream serializes its zero value (``loadBalancer`` is a struct,
    not a pointer, so it is always written): what every create answers."""
    return {"loadBalancer": {}}


class ServiceBehaviour(KindBehaviour):
    """Service rules: allocate ``spec.clusterIP`` on create, keep it on update."""

    def __init__(self, storage: Storage, validator: BuiltinValidator | None = None) -> None:
        super().__init__(validator)
        self._storage = storage
        self._next = FIRST_ALLOCATED_OFFSET

    def _used_addresses(self, root: str) -> set[str]:
        used: set[str] = set()
        for record in self._storage.list(root):
            spec = decode(record.value).get("spec") or {}
            used.update(ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip)
        return used

    def _allocate(self, root: str) -> str:
        used = self._used_addresses(root)
        size = SERVICE_CIDR.num_addresses - 2
        for _ in range(size):
            offset = self._next
            self._next = FIRST_ALLOCATED_OFFSET + (self._next - FIRST_ALLOCATED_OFFSET + 1) % (
                size - FIRST_ALLOCATED_OFFSET
            )
            address = str(SERVICE_CIDR.network_address + offset)
            if address not in used:
                return address
        raise status_errors.internal_error("the service cluster IP range is exhausted")

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        obj["status"] = empty_status()
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        cluster_ip = spec.get("clusterIP")
        if not cluster_ip:
            cluster_ip = spec["clusterIP"] = self._allocate(resource.storage_root)
        if cluster_ip != HEADLESS:
            spec.setdefault("clusterIPs", [cluster_ip])
            spec.setdefault("ipFamilies", ["IPv4"])
        else:
            spec.setdefault("clusterIPs", [HEADLESS])
        spec.setdefault("ipFamilyPolicy", "SingleStack")

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        status = new.get("status")
        if isinstance(status, dict):
            status.setdefault("loadBalancer", {})
        elif status is None:
            new["status"] = empty_status()
        new_spec = new.get("spec")
        old_spec = old.get("spec") or {}
        if not isinstance(new_spec, dict):
            return
        for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not new_spec.get(field) and old_spec.get(field):
                new_spec[field] = old_spec[field]
        if (
            old_spec.get("clusterIP")
            and new_spec.get("type") != "ExternalName"
            and new_spec.get("clusterIP") != old_spec.get("clusterIP")
        ):
            name = (new.get("metadata") or {}).get("name", "")
            addresses = new_spec.get("clusterIPs") or [new_spec.get("clusterIP") or ""]
            shown = fe.GoValue(
                "[]string{" + ", ".join(fe.go_quote(str(a)) for a in addresses) + "}"
            )
            raise status_errors.invalid(
                "",
                "Service",
                name,
                [fe.invalid("spec.clusterIPs[0]", shown, "may not change once set")],
            )
