"""Pods and their parts: containers, environment, ports, resources, probes, volumes, status."""

from __future__ import annotations

from pydantic import Field

from setpoint.api.models.base import (
    Condition,
    KubeModel,
    KubeObject,
    LocalObjectReference,
    Metadata,
    ObjectMeta,
    Quantity,
)

__all__ = [
    "ConfigMapEnvSource",
    "ConfigMapKeySelector",
    "ConfigMapVolumeSource",
    "Container",
    "ContainerPort",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "EmptyDirVolumeSource",
    "EnvFromSource",
    "EnvVar",
    "EnvVarSource",
    "ExecAction",
    "GRPCAction",
    "HTTPGetAction",
    "HTTPHeader",
    "HostPathVolumeSource",
    "KeyToPath",
    "ObjectFieldSelector",
    "PersistentVolumeClaimVolumeSource",
    "Pod",
    "PodIP",
    "PodSecurityContext",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "Probe",
    "ResourceFieldSelector",
    "ResourceRequirements",
    "SecretEnvSource",
    "SecretKeySelector",
    "SecretVolumeSource",
    "SecurityContext",
    "TCPSocketAction",
    "Toleration",
    "Volume",
    "VolumeMount",
]


# -- environment ---------------------------------------------------------------------------------


class ConfigMapKeySelector(KubeModel):
    """A key of a ConfigMap."""

    key: str
    name: str | None = None
    optional: bool | None = None


class SecretKeySelector(KubeModel):
    """A key of a Secret."""

    key: str
    name: str | None = None
    optional: bool | None = None


class ObjectFieldSelector(KubeModel):
    """A field of the pod (``metadata.name``, ``status.podIP`` ...)."""

    field_path: str
    api_version: str | None = None


class ResourceFieldSelector(KubeModel):
    """A resource limit or request of a container (``limits.cpu``)."""

    resource: str
    container_name: str | None = None
    divisor: Quantity | None = None


class EnvVarSource(KubeModel):
    """Where an environment variable's value comes from."""

    config_map_key_ref: ConfigMapKeySelector | None = None
    secret_key_ref: SecretKeySelector | None = None
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None


class EnvVar(KubeModel):
    """An environment variable: a ``value``, or ``value_from`` a ConfigMap, Secret or field."""

    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


class ConfigMapEnvSource(KubeModel):
    """Every key of a ConfigMap as environment variables."""

    name: str | None = None
    optional: bool | None = None


class SecretEnvSource(KubeModel):
    """Every key of a Secret as environment variables."""

    name: str | None = None
    optional: bool | None = None


class EnvFromSource(KubeModel):
    """Environment variables from a whole ConfigMap or Secret."""

    prefix: str | None = None
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


# -- ports, resources, probes, security ----------------------------------------------------------


class ContainerPort(KubeModel):
    """A port a container listens on."""

    container_port: int
    name: str | None = None
    protocol: str | None = None
    host_port: int | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")


class ResourceRequirements(KubeModel):
    """CPU, memory ... a container requests and may not exceed (``{"cpu": "100m"}``)."""

    limits: dict[str, Quantity] = Field(default_factory=dict)
    requests: dict[str, Quantity] = Field(default_factory=dict)


class ExecAction(KubeModel):
    """Run a command in the container."""

    command: list[str] = Field(default_factory=list)


class HTTPHeader(KubeModel):
    """A header of an HTTP probe."""

    name: str
    value: str


class HTTPGetAction(KubeModel):
    """An HTTP GET to the container."""

    port: int | str
    path: str | None = None
    host: str | None = None
    scheme: str | None = None
    http_headers: list[HTTPHeader] = Field(default_factory=list)


class TCPSocketAction(KubeModel):
    """A TCP connection to the container."""

    port: int | str
    host: str | None = None


class GRPCAction(KubeModel):
    """A gRPC health check of the container."""

    port: int
    service: str | None = None


class Probe(KubeModel):
    """A liveness, readiness or startup probe: one action and its timing."""

    exec_: ExecAction | None = Field(default=None, alias="exec")
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initial_delay_seconds: int | None = None
    timeout_seconds: int | None = None
    period_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None
    termination_grace_period_seconds: int | None = None


class SecurityContext(KubeModel):
    """A container's security settings (the common ones; others are kept as sent)."""

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    read_only_root_filesystem: bool | None = None
    allow_privilege_escalation: bool | None = None
    privileged: bool | None = None
    capabilities: dict[str, list[str]] | None = None
    seccomp_profile: dict[str, str] | None = None


class PodSecurityContext(KubeModel):
    """A pod's security settings (the common ones; others are kept as sent)."""

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    fs_group: int | None = None
    supplemental_groups: list[int] = Field(default_factory=list)
    seccomp_profile: dict[str, str] | None = None


# -- volumes -------------------------------------------------------------------------------------


class VolumeMount(KubeModel):
    """Where a volume appears in a container."""

    name: str
    mount_path: str
    sub_path: str | None = None
    read_only: bool | None = None
    mount_propagation: str | None = None


class KeyToPath(KubeModel):
    """A key of a ConfigMap or Secret projected to a file path."""

    key: str
    path: str
    mode: int | None = None


class ConfigMapVolumeSource(KubeModel):
    """A ConfigMap's keys as files."""

    name: str | None = None
    items: list[KeyToPath] = Field(default_factory=list)
    default_mode: int | None = None
    optional: bool | None = None


class SecretVolumeSource(KubeModel):
    """A Secret's keys as files."""

    secret_name: str | None = None
    items: list[KeyToPath] = Field(default_factory=list)
    default_mode: int | None = None
    optional: bool | None = None


class EmptyDirVolumeSource(KubeModel):
    """A scratch directory that lives as long as the pod."""

    medium: str | None = None
    size_limit: Quantity | None = None


class PersistentVolumeClaimVolumeSource(KubeModel):
    """A PersistentVolumeClaim's volume."""

    claim_name: str
    read_only: bool | None = None


class HostPathVolumeSource(KubeModel):
    """A directory of the node."""

    path: str
    type: str | None = None


class Volume(KubeModel):
    """A volume of a pod: one source (other sources are kept as sent)."""

    name: str
    config_map: ConfigMapVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None


# -- containers and pods -------------------------------------------------------------------------


class Container(KubeModel):
    """A container of a pod."""

    name: str
    image: str | None = None
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    working_dir: str | None = None
    ports: list[ContainerPort] = Field(default_factory=list)
    env: list[EnvVar] = Field(default_factory=list)
    env_from: list[EnvFromSource] = Field(default_factory=list)
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    volume_mounts: list[VolumeMount] = Field(default_factory=list)
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    image_pull_policy: str | None = None
    security_context: SecurityContext | None = None
    restart_policy: str | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    stdin: bool | None = None
    tty: bool | None = None


class Toleration(KubeModel):
    """A taint the pod tolerates."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class PodSpec(KubeModel):
    """What a pod runs and where."""

    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    volumes: list[Volume] = Field(default_factory=list)
    restart_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    dns_policy: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    service_account_name: str | None = None
    automount_service_account_token: bool | None = None
    node_name: str | None = None
    host_network: bool | None = None
    hostname: str | None = None
    subdomain: str | None = None
    scheduler_name: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    tolerations: list[Toleration] = Field(default_factory=list)
    security_context: PodSecurityContext | None = None
    image_pull_secrets: list[LocalObjectReference] = Field(default_factory=list)
    enable_service_links: bool | None = None


class PodTemplateSpec(KubeModel):
    """The pods a workload makes: their metadata (labels) and spec."""

    metadata: Metadata = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class ContainerStateWaiting(KubeModel):
    """Not running yet (``ContainerCreating``, ``CrashLoopBackOff`` ...)."""

    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(KubeModel):
    """Running since ``started_at``."""

    started_at: str | None = None


class ContainerStateTerminated(KubeModel):
    """Exited with ``exit_code``."""

    exit_code: int
    signal: int | None = None
    reason: str | None = None
    message: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class ContainerState(KubeModel):
    """One of waiting, running, terminated."""

    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(KubeModel):
    """What the kubelet reports about a container."""

    name: str
    ready: bool | None = None
    started: bool | None = None
    restart_count: int | None = None
    image: str | None = None
    image_id: str | None = Field(default=None, alias="imageID")
    container_id: str | None = Field(default=None, alias="containerID")
    state: ContainerState | None = None
    last_state: ContainerState | None = None


class PodIP(KubeModel):
    """One of a pod's (or host's) IP addresses."""

    ip: str | None = None


class PodStatus(KubeModel):
    """Where a pod is in its life (``phase``), its conditions and its containers."""

    phase: str | None = None
    conditions: list[Condition] = Field(default_factory=list)
    message: str | None = None
    reason: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    host_ips: list[PodIP] = Field(default_factory=list, alias="hostIPs")
    pod_ip: str | None = Field(default=None, alias="podIP")
    pod_ips: list[PodIP] = Field(default_factory=list, alias="podIPs")
    start_time: str | None = None
    container_statuses: list[ContainerStatus] = Field(default_factory=list)
    init_container_statuses: list[ContainerStatus] = Field(default_factory=list)
    qos_class: str | None = None
    nominated_node_name: str | None = None


class Pod(KubeObject, api_version="v1", kind="Pod"):
    """A Pod: one or more containers scheduled together on a node."""

    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)
