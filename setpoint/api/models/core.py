"""Core objects besides pods: Service, ConfigMap, Secret, ServiceAccount, Namespace, and the
kinds whose fields are not typed here (every field kept, ``metadata`` typed)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from setpoint.api.models.base import (
    Condition,
    KubeModel,
    KubeObject,
    LocalObjectReference,
    ObjectReference,
)

__all__ = [
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "CustomResourceDefinition",
    "Endpoints",
    "Event",
    "Ingress",
    "Lease",
    "Namespace",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "PersistentVolumeClaim",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
]


class ServicePort(KubeModel):
    """A port of a Service and where it goes (``target_port``: a number or a port name)."""

    port: int
    name: str | None = None
    protocol: str | None = None
    target_port: int | str | None = None
    node_port: int | None = None
    app_protocol: str | None = None


class ServiceSpec(KubeModel):
    """Which pods (``selector``) a Service exposes, on which ports, and how."""

    type: str | None = None
    selector: dict[str, str] = Field(default_factory=dict)
    ports: list[ServicePort] = Field(default_factory=list)
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] = Field(default_factory=list, alias="clusterIPs")
    external_ips: list[str] = Field(default_factory=list, alias="externalIPs")
    external_name: str | None = None
    session_affinity: str | None = None
    load_balancer_ip: str | None = Field(default=None, alias="loadBalancerIP")
    external_traffic_policy: str | None = None
    internal_traffic_policy: str | None = None
    ip_families: list[str] = Field(default_factory=list, alias="ipFamilies")
    ip_family_policy: str | None = Field(default=None, alias="ipFamilyPolicy")
    publish_not_ready_addresses: bool | None = None


class ServiceStatus(KubeModel):
    """Load balancer ingress points and conditions."""

    load_balancer: dict[str, Any] | None = None
    conditions: list[Condition] = Field(default_factory=list)


class Service(KubeObject, api_version="v1", kind="Service"):
    """A Service: a stable address for a set of pods."""

    spec: ServiceSpec = Field(default_factory=ServiceSpec)
    status: ServiceStatus = Field(default_factory=ServiceStatus)


class ConfigMap(KubeObject, api_version="v1", kind="ConfigMap"):
    """A ConfigMap: configuration as string (``data``) or base64 (``binary_data``) values."""

    data: dict[str, str] = Field(default_factory=dict)
    binary_data: dict[str, str] = Field(default_factory=dict)
    immutable: bool | None = None


class Secret(KubeObject, api_version="v1", kind="Secret"):
    """A Secret: ``data`` values are base64; ``string_data`` (write-only) takes plain text."""

    type: str | None = None
    data: dict[str, str] = Field(default_factory=dict)
    string_data: dict[str, str] = Field(default_factory=dict)
    immutable: bool | None = None


class ServiceAccount(KubeObject, api_version="v1", kind="ServiceAccount"):
    """A ServiceAccount: an identity for pods."""

    secrets: list[ObjectReference] = Field(default_factory=list)
    image_pull_secrets: list[LocalObjectReference] = Field(default_factory=list)
    automount_service_account_token: bool | None = None


class NamespaceSpec(KubeModel):
    """The finalizers that must finish before a Namespace is removed."""

    finalizers: list[str] = Field(default_factory=list)


class NamespaceStatus(KubeModel):
    """``Active`` or ``Terminating``."""

    phase: str | None = None
    conditions: list[Condition] = Field(default_factory=list)


class Namespace(KubeObject, api_version="v1", kind="Namespace"):
    """A Namespace."""

    spec: NamespaceSpec = Field(default_factory=NamespaceSpec)
    status: NamespaceStatus = Field(default_factory=NamespaceStatus)


class Event(KubeObject, api_version="events.k8s.io/v1", kind="Event"):
    """An Event (``events.k8s.io/v1``): something that happened to ``regarding``."""

    event_time: str | None = None
    series: dict[str, Any] | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecated_source: dict[str, str] | None = None
    deprecated_first_timestamp: str | None = None
    deprecated_last_timestamp: str | None = None
    deprecated_count: int | None = None


# Kinds with only apiVersion, kind and metadata typed; their other fields are kept as sent
# and readable as attributes (``node.spec``, ``role.rules``).


class Node(KubeObject, api_version="v1", kind="Node"):
    """A Node (``spec`` and ``status`` kept as sent)."""


class Endpoints(KubeObject, api_version="v1", kind="Endpoints"):
    """Endpoints (``subsets`` kept as sent)."""


class PersistentVolumeClaim(KubeObject, api_version="v1", kind="PersistentVolumeClaim"):
    """A PersistentVolumeClaim (``spec`` and ``status`` kept as sent)."""


class Ingress(KubeObject, api_version="networking.k8s.io/v1", kind="Ingress"):
    """An Ingress (``spec`` and ``status`` kept as sent)."""


class Lease(KubeObject, api_version="coordination.k8s.io/v1", kind="Lease"):
    """A Lease (``spec`` kept as sent)."""


class Role(KubeObject, api_version="rbac.authorization.k8s.io/v1", kind="Role"):
    """A Role (``rules`` kept as sent)."""


class RoleBinding(KubeObject, api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding"):
    """A RoleBinding (``roleRef`` and ``subjects`` kept as sent)."""


class ClusterRole(KubeObject, api_version="rbac.authorization.k8s.io/v1", kind="ClusterRole"):
    """A ClusterRole (``rules`` kept as sent)."""


class ClusterRoleBinding(
    KubeObject, api_version="rbac.authorization.k8s.io/v1", kind="ClusterRoleBinding"
):
    """A ClusterRoleBinding (``roleRef`` and ``subjects`` kept as sent)."""


class CustomResourceDefinition(
    KubeObject, api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
):
    """A CustomResourceDefinition (``spec`` and ``status`` kept as sent)."""
