"""Where a webhook behind a Service listens, for admission and CRD conversion webhooks alike.

An ``ExternalName`` Service names its host; any other is reached at one of its ready
endpoints (the local cluster has no service network, so endpoints are dialled directly). The
TLS name checked is still the Service's (``<name>.<namespace>.svc``), as upstream checks it.
"""

from __future__ import annotations

from typing import Any

from setpoint.cluster.apiserver.admission.webhook_calls import (
    Endpoint,
    WebhookTransportError,
    service_endpoint,
    with_timeout,
)
from setpoint.cluster.apiserver.admission.webhooks import ServiceReference
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.storage import Storage


def resolve_service(
    storage: Storage, reference: ServiceReference, timeout_seconds: int
) -> Endpoint:
    """The endpoint of the webhook ``reference`` names; :class:`WebhookTransportError` when
    the Service, its port or a ready endpoint is missing (the URL in the message carries the
    ``?timeout=`` of the call, as client-go prints the request it could not send)."""
    shown = with_timeout(service_endpoint(reference, "", 0).url, timeout_seconds)
    record = storage.get(f"/core/services/{reference.namespace}/{reference.name}")
    if record is None:
        raise WebhookTransportError(
            f'Post "{shown}": service {_quote(reference.name)} not found', called=True
        )
    spec = decode(record.value).get("spec") or {}
    if spec.get("type") == "ExternalName" and spec.get("externalName"):
        return service_endpoint(reference, str(spec["externalName"]), reference.port)
    port_name = ""
    target: Any = reference.port
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and port.get("port") == reference.port:
            port_name = str(port.get("name") or "")
            target = port.get("targetPort", reference.port)
            break
    else:
        raise WebhookTransportError(
            f'Post "{shown}": no service port {reference.port} found for service '
            f"{_quote(reference.name)}",
            called=True,
        )
    endpoints = storage.get(f"/core/endpoints/{reference.namespace}/{reference.name}")
    subsets = (decode(endpoints.value).get("subsets") if endpoints is not None else None) or []
    for subset in subsets:
        addresses = subset.get("addresses") or [] if isinstance(subset, dict) else []
        for port in subset.get("ports") or []:
            if not isinstance(port, dict):
                continue
            if (port.get("name") or "") == port_name or len(subset.get("ports")) == 1:
                for address in addresses:
                    if isinstance(address, dict) and address.get("ip"):
                        return service_endpoint(
                            reference, str(address["ip"]), int(port.get("port") or target)
                        )
    raise WebhookTransportError(
        f'Post "{shown}": no endpoints available for service {_quote(reference.name)}',
        called=True,
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
