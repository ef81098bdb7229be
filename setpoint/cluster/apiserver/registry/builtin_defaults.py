"""Defaults kube-apiserver fills into built-in objects (``pkg/apis/*/v1/defaults.go``).

Applied to every create and update body before validation, as upstream's decoding does, so
that ``kubectl get -o yaml`` and the controllers see the same fields as on a real cluster:
pod specs (also inside workload templates), Deployments, ReplicaSets, StatefulSets,
DaemonSets, Jobs, CronJobs, Services, Secrets and RBAC bindings, and (from
:mod:`.platform_defaults`) the storage, policy and autoscaling kinds. Only absent fields are
filled.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Final

from setpoint.cluster.apiserver.registry.platform_defaults import PLATFORM_DEFAULTERS
from setpoint.cluster.apiserver.schema.formats import is_base64, without_line_breaks

#: Where the pod template of each workload kind lives.
_TEMPLATE_PATHS: Final[dict[str, tuple[str, ...]]] = {
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
DEFAULT_TERMINATION_GRACE_SECONDS: Final = 30
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
DEFAULT_PROGRESS_DEADLINE_SECONDS: Final = 600
DEFAULT_BACKOFF_LIMIT: Final = 6
JOB_CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_JOB_CONTROLLER_UID_LABEL: Final = "controller-uid"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
RBAC_GROUP: Final = "rbac.authorization.k8s.io"


def _child(obj: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``obj[key]`` as a dict, created when absent; None when it holds something else."""
    value = obj.get(key)
    if value is None:
        value = obj[key] = {}
    return value if isinstance(value, dict) else None


def _at(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    node: Any = obj
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def _image_pull_policy(image: Any) -> str:
    # Upstream: Always for ":latest" or an untagged image, else IfNotPresent (digests count
    # as tags).
    if not isinstance(image, str):
        return "IfNotPresent"
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def _default_container(container: dict[str, Any]) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("imagePullPolicy", _image_pull_policy(container.get("image")))
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and the container defaults."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_SECONDS)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _default_container(container)


def _default_pod(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        default_pod_spec(spec)


def _default_deployment(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    strategy = _child(spec, "strategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate")
            if rolling is not None:
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT)
    spec.setdefault("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE_SECONDS)


def _default_replica_set(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        spec.setdefault("replicas", 1)


def _default_stateful_set(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _child(spec, "updateStrategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate")
            if rolling is not None:
                rolling.setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT)
    retention = _child(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        retention.setdefault("whenDeleted", "Retain")
        retention.setdefault("whenScaled", "Retain")


def _default_daemon_set(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    strategy = _child(spec, "updateStrategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate")
            if rolling is not None:
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT)


def _default_job_spec(spec: dict[str, Any]) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", DEFAULT_BACKOFF_LIMIT)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podFailurePolicy") is None:
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")


def _default_job(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        _default_job_spec(spec)


def _default_cron_job(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_spec = _at(spec, ("jobTemplate", "spec"))
    if job_spec is not None:
        _default_job_spec(job_spec)


def _default_service(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])


def _canonical_base64(values: Any) -> None:
    """Rewrite base64 values wrapped over lines as one line: upstream decodes ``[]byte`` fields
    with Go's decoder, which skips ``\\r``/``\\n``, and stores and answers the bytes re-encoded."""
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        if isinstance(value, str) and ("\n" in value or "\r" in value):
            unwrapped = without_line_breaks(value)
            if is_base64(unwrapped):  # anything else is left for validation to refuse
                values[key] = unwrapped


def _default_config_map(obj: dict[str, Any]) -> None:
    if "binaryData" in obj:
        _canonical_base64(obj["binaryData"])


def _default_secret(obj: dict[str, Any]) -> None:
    obj.setdefault("type", "Opaque")
    _canonical_base64(obj.get("data"))
    # Decoding merges stringData into data (later keys win) and drops it: it is write-only.
    string_data = obj.get("stringData")
    if isinstance(string_data, dict) and all(isinstance(v, str) for v in string_data.values()):
        del obj["stringData"]
        if string_data:
            data = obj.get("data")
            if not isinstance(data, dict):
                data = obj["data"] = {}
            for key, value in string_data.items():
                data[key] = base64.b64encode(value.encode()).decode()


def _default_role_binding(obj: dict[str, Any]) -> None:
    """``SetDefaults_RoleBinding`` / ``SetDefaults_Subject``: the RBAC group where left out."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC_GROUP
    for subject in obj.get("subjects") or []:
        if (
            isinstance(subject, dict)
            and not subject.get("apiGroup")
            and subject.get("kind") in ("User", "Group")
        ):
            subject["apiGroup"] = RBAC_GROUP


_DEFAULTERS: Final[dict[tuple[str, str], Callable[[dict[str, Any]], None]]] = {
    (f"{RBAC_GROUP}/v1", "RoleBinding"): _default_role_binding,
    (f"{RBAC_GROUP}/v1", "ClusterRoleBinding"): _default_role_binding,
    ("v1", "Pod"): _default_pod,
    ("v1", "Service"): _default_service,
    ("v1", "Secret"): _default_secret,
    ("v1", "ConfigMap"): _default_config_map,
    ("apps/v1", "Deployment"): _default_deployment,
    ("apps/v1", "ReplicaSet"): _default_replica_set,
    ("apps/v1", "StatefulSet"): _default_stateful_set,
    ("apps/v1", "DaemonSet"): _default_daemon_set,
    ("batch/v1", "Job"): _default_job,
    ("batch/v1", "CronJob"): _default_cron_job,
    ("v1", "PodTemplate"): lambda obj: None,
    **PLATFORM_DEFAULTERS,
}


def apply_builtin_defaults(obj: dict[str, Any]) -> None:
    """Fill the defaults of a built-in object in place (no-op for other kinds)."""
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return
    defaulter = _DEFAULTERS.get((api_version, kind))
    if defaulter is None:
        return
    defaulter(obj)
    template_path = _TEMPLATE_PATHS.get(kind)
    if template_path is not None:
        template_spec = _at(obj, template_path)
        if template_spec is not None:
            default_pod_spec(template_spec)


def label_job(obj: dict[str, Any]) -> None:
    """Generate a Job's selector and pod labels from its uid (``job/strategy.go``), unless the
    Job selects its pods itself (``manualSelector: true``)."""
    spec = obj.get("spec")
    metadata = obj.get("metadata") or {}
    uid = metadata.get("uid")
    if not isinstance(spec, dict) or not uid or spec.get("manualSelector") is True:
        return
    labels = {
        JOB_CONTROLLER_UID_LABEL: uid,
        JOB_NAME_LABEL: metadata.get("name", ""),
        LEGACY_JOB_CONTROLLER_UID_LABEL: uid,
        LEGACY_JOB_NAME_LABEL: metadata.get("name", ""),
    }
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": {JOB_CONTROLLER_UID_LABEL: uid}}
    template = _child(spec, "template")
    if template is None:
        return
    template_meta = _child(template, "metadata")
    if template_meta is None:
        return
    template_labels = _child(template_meta, "labels")
    if template_labels is not None:
        for key, value in labels.items():
            template_labels.setdefault(key, value)
