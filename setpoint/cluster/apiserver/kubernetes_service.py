"""The ``default/kubernetes`` Service: how pods and clients find the API server.

kube-apiserver keeps this Service and its endpoints itself (``pkg/controlplane/controller/
kubernetesservice`` and the endpoints reconciler): a ClusterIP Service on the first address of
the service range, port 443 named ``https`` targeting the secure port, with no selector (so the
endpoints controllers leave it alone), an Endpoints object (``skip-mirror``) and an EndpointSlice
of the same name listing the server's address. Here the address is the loopback address the
server listens on and the target port its HTTPS port (the plain-HTTP port when it serves no
HTTPS), rewritten on every start because a restarted server may listen on another port.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.apiserver.kinds.services import SERVICE_CIDR, empty_status
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.selection import decode

NAMESPACE: Final = "default"
NAME: Final = "kubernetes"
PORT_NAME: Final = "https"
SERVICE_PORT: Final = 443
#: The first address of the service range is reserved for this Service upstream.
CLUSTER_IP: Final = str(SERVICE_CIDR.network_address + 1)
SERVICE_LABELS: Final = {"component": "apiserver", "provider": "kubernetes"}
SERVICE_NAME_LABEL: Final = "kubernetes.io/service-name"
SKIP_MIRROR_LABEL: Final = "endpointslice.kubernetes.io/skip-mirror"


def service(target_port: int) -> dict[str, Any]:
    """The Service as ``createOrUpdateMasterServiceIfNeeded`` writes it."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(SERVICE_LABELS)},
        "spec": {
            "type": "ClusterIP",
            "clusterIP": CLUSTER_IP,
            "ports": [
                {
                    "name": PORT_NAME,
                    "protocol": "TCP",
                    "port": SERVICE_PORT,
                    "targetPort": target_port,
                }
            ],
            "sessionAffinity": "None",
        },
        "status": empty_status(),
    }


def endpoints(address: str, port: int) -> dict[str, Any]:
    """The Endpoints the endpoints reconciler writes."""
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR_LABEL: "true"}},
        "subsets": [
            {
                "addresses": [{"ip": address}],
                "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
            }
        ],
    }


def endpoint_slice(address: str, port: int) -> dict[str, Any]:
    """The EndpointSlice the endpoints adapter derives from the Endpoints."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME_LABEL: NAME}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
    }


async def reconcile(
    registry: ResourceRegistry, operations: ObjectOperations, address: str, port: int
) -> None:
    """Create the three objects, or bring them to ``address:port`` if they exist."""
    wanted = (
        (("", "services"), service(port)),
        (("", "endpoints"), endpoints(address, port)),
        (("discovery.k8s.io", "endpointslices"), endpoint_slice(address, port)),
    )
    for (group, plural), desired in wanted:
        resource = registry.get(group, "v1", plural)
        if resource is None:
            continue
        record = operations.storage.get(resource.storage_key(NAMESPACE, NAME))
        if record is None:
            await operations.create(resource, NAMESPACE, desired, WriteOptions())
            continue
        current = decode(record.value)
        changed = False
        for field in ("subsets", "endpoints", "ports"):
            if field in desired and current.get(field) != desired[field]:
                current[field] = desired[field]
                changed = True
        spec = current.get("spec")
        wanted_ports = desired.get("spec", {}).get("ports")
        if isinstance(spec, dict) and spec.get("ports") != wanted_ports:
            spec["ports"] = wanted_ports
            changed = True
        if changed:
            await operations.update_object(resource, record, current)
