"""The mcrouter configuration of a proxy, and the content-addressed name of its ConfigMap.

Pure functions of the backend Service and its Endpoints, so the same pods always give the same
``config.json`` byte for byte, hence the same ConfigMap name: a pod set seen before reuses the
ConfigMap (and the proxy Deployment's ReplicaSet) made for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CONFIG_KEY = "config.json"


class UnknownPort(LookupError):
    """The proxy names a Service port the Service does not have."""


def service_port(service: Mapping[str, Any], port: int | str) -> dict[str, Any]:
    """The Service port that ``port`` names: by number, or by name (a string)."""
    for candidate in (service.get("spec") or {}).get("ports") or []:
        if isinstance(port, int) and candidate.get("port") == port:
            return dict(candidate)
        if isinstance(port, str) and candidate.get("name") == port:
            return dict(candidate)
    name = (service.get("metadata") or {}).get("name")
    raise UnknownPort(f"Service {name} has no port {port!r}")


def servers(endpoints: Mapping[str, Any] | None, port: Mapping[str, Any]) -> list[str]:
    """The ``podIP:port`` of every ready address behind the Service port ``port``.

    The Endpoints controller names each endpoint port after its Service port and resolves the
    target port (a number, or a container port's name) per pod, so the port a server gets is
    its pod's, not the Service's. Sorted, so that the rendering does not depend on their order.
    """
    found: set[str] = set()
    protocol = port.get("protocol") or "TCP"
    for subset in (endpoints or {}).get("subsets") or []:
        for endpoint_port in subset.get("ports") or []:
            if (endpoint_port.get("protocol") or "TCP") != protocol:
                continue
            if (endpoint_port.get("name") or "") != (port.get("name") or ""):
                continue
            for address in subset.get("addresses") or []:
                found.add(f"{address['ip']}:{endpoint_port['port']}")
    return sorted(found, key=_address_key)


def _address_key(server: str) -> tuple[int, ...]:
    host, _, port = server.rpartition(":")
    try:
        return (*(int(part) for part in host.split(".")), int(port))
    except ValueError:  # not IPv4: keep a total order anyway
        return (-1, *server.encode())


def pool_name(namespace: str, service: str, port: Mapping[str, Any]) -> str:
    """One pool per Service port."""
    return f"{namespace}-{service}-{port.get('name') or port.get('port')}"


def route(rule_type: str, pool: str) -> Any:
    """The route of a rule: sharded keys hash over the pool; replicated writes go everywhere."""
    if rule_type == "sharded":
        return f"PoolRoute|{pool}"
    if rule_type == "replicated":
        return {
            "type": "OperationSelectorRoute",
            "default_policy": f"AllSyncRoute|Pool|{pool}",
            "operation_policies": {"delete": f"LatestRoute|Pool|{pool}"},
        }
    raise ValueError(f"unknown rule type {rule_type!r}: expected sharded or replicated")


def render(rule_type: str, pool: str, pool_servers: list[str]) -> str:
    """``config.json``: the pool and its route, in a stable (sorted, indented) form."""
    config = {"pools": {pool: {"servers": pool_servers}}, "route": route(rule_type, pool)}
    return json.dumps(config, indent=2, sort_keys=True) + "\n"


def config_map_name(proxy: str, config: str) -> str:
    """``<proxy>-config-<5 hex digits>`` of the proxy's name and its config."""
    digest = hashlib.sha1(f"{proxy}\n{config}".encode(), usedforsecurity=False).hexdigest()
    return f"{proxy}-config-{digest[2:7]}"
