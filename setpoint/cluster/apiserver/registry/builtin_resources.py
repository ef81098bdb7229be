"""The built-in resources the local API server serves, with their real names, scopes and verbs.

Names, short names, categories, verbs and subresources are those kube-apiserver 1.32 reports in
discovery; field selectors are the ones its registries support beyond ``metadata.name`` and
``metadata.namespace``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from setpoint.cluster.apiserver.kinds.component_statuses import DEPRECATION_WARNING
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

FieldGetter = Callable[[dict[str, Any]], str]

#: Namespaced-resource verbs without deletecollection (namespaces cannot be bulk-deleted).
_VERBS_NO_COLLECTION: tuple[str, ...] = (
    "create",
    "delete",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


#: Verbs of computed, read-only resources.
_GET_LIST: Final = ("get", "list")


def _path(*segments: str) -> FieldGetter:
    """An extractor of a nested field as the string a field selector compares with."""

    def get(obj: dict[str, Any]) -> str:
        value: Any = obj
        for segment in segments:
            if not isinstance(value, dict):
                return ""
            value = value.get(segment)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _event_source(obj: dict[str, Any]) -> str:
    # Upstream selects on source.component, falling back to reportingComponent.
    component = _path("source", "component")(obj)
    return component or _path("reportingComponent")(obj)


_POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.restartPolicy": _path("spec", "restartPolicy"),
    "spec.schedulerName": _path("spec", "schedulerName"),
    "spec.serviceAccountName": _path("spec", "serviceAccountName"),
    "spec.hostNetwork": lambda obj: (
        "true" if _path("spec", "hostNetwork")(obj) == "true" else "false"
    ),
    "status.phase": _path("status", "phase"),
    "status.podIP": _path("status", "podIP"),
    "status.nominatedNodeName": _path("status", "nominatedNodeName"),
}

_EVENT_FIELDS: dict[str, FieldGetter] = {
    "involvedObject.kind": _path("involvedObject", "kind"),
    "involvedObject.namespace": _path("involvedObject", "namespace"),
    "involvedObject.name": _path("involvedObject", "name"),
    "involvedObject.uid": _path("involvedObject", "uid"),
    "involvedObject.apiVersion": _path("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": _path("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": _path("involvedObject", "fieldPath"),
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _event_source,
    "type": _path("type"),
}

# events.k8s.io/v1 selects on its own field names, read from the stored core/v1 shape.
_EVENTS_V1_FIELDS: dict[str, FieldGetter] = {
    "regarding.kind": _path("involvedObject", "kind"),
    "regarding.namespace": _path("involvedObject", "namespace"),
    "regarding.name": _path("involvedObject", "name"),
    "regarding.uid": _path("involvedObject", "uid"),
    "regarding.apiVersion": _path("involvedObject", "apiVersion"),
    "regarding.resourceVersion": _path("involvedObject", "resourceVersion"),
    "regarding.fieldPath": _path("involvedObject", "fieldPath"),
    "reason": _path("reason"),
    "reportingController": _path("reportingComponent"),
    "type": _path("type"),
}


def builtin_resources() -> list[ServedResource]:
    """Every built-in resource, one entry per served group/version."""
    status = ("status",)
    status_scale = ("status", "scale")
    return [
        # core/v1
        ServedResource(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            "namespace",
            ("ns",),
            verbs=_VERBS_NO_COLLECTION,
            subresources=("status", "finalize"),
            name_rule="label",
            field_selectors={"status.phase": _path("status", "phase")},
        ),
        ServedResource(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            "pod",
            ("po",),
            ("all",),
            subresources=(
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "status",
            ),
            field_selectors=_POD_FIELDS,
        ),
        ServedResource(
            "",
            "v1",
            "services",
            "Service",
            True,
            "service",
            ("svc",),
            ("all",),
            subresources=status,
            name_rule="label",
        ),
        ServedResource("", "v1", "endpoints", "Endpoints", True, "endpoints", ("ep",)),
        ServedResource("", "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",)),
        ServedResource(
            "",
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            True,
            "persistentvolumeclaim",
            ("pvc",),
            subresources=("status",),
        ),
        ServedResource(
            "",
            "v1",
            "secrets",
            "Secret",
            True,
            "secret",
            field_selectors={"type": _path("type")},
        ),
        ServedResource(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            True,
            "serviceaccount",
            ("sa",),
            subresources=("token",),
        ),
        ServedResource(
            "",
            "v1",
            "events",
            "Event",
            True,
            "event",
            ("ev",),
            name_rule="path_segment",
            field_selectors=_EVENT_FIELDS,
        ),
        ServedResource(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            "node",
            ("no",),
            subresources=status,
            field_selectors={"spec.unschedulable": _path("spec", "unschedulable")},
        ),
        # apps/v1
        ServedResource(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            True,
            "deployment",
            ("deploy",),
            ("all",),
            subresources=status_scale,
            tracks_generation=True,
        ),
        ServedResource(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            True,
            "replicaset",
            ("rs",),
            ("all",),
            subresources=status_scale,
            tracks_generation=True,
            field_selectors={"status.replicas": _path("status", "replicas")},
        ),
        ServedResource(
            "apps",
            "v1",
            "statefulsets",
            "StatefulSet",
            True,
            "statefulset",
            ("sts",),
            ("all",),
            subresources=status_scale,
            tracks_generation=True,
        ),
        ServedResource(
            "apps", "v1", "controllerrevisions", "ControllerRevision", True, "controllerrevision"
        ),
        ServedResource(
            "apps",
            "v1",
            "daemonsets",
            "DaemonSet",
            True,
            "daemonset",
            ("ds",),
            ("all",),
            subresources=status,
            tracks_generation=True,
        ),
        # batch/v1
        ServedResource(
            "batch",
            "v1",
            "jobs",
            "Job",
            True,
            "job",
            (),
            ("all",),
            subresources=status,
            tracks_generation=True,
            field_selectors={"status.successful": _path("status", "succeeded")},
        ),
        ServedResource(
            "batch",
            "v1",
            "cronjobs",
            "CronJob",
            True,
            "cronjob",
            ("cj",),
            ("all",),
            subresources=status,
            tracks_generation=True,
        ),
        # coordination.k8s.io/v1
        ServedResource("coordination.k8s.io", "v1", "leases", "Lease", True, "lease"),
        # events.k8s.io/v1: the same store as core/v1 events, converted on the way in and out.
        ServedResource(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            True,
            "event",
            ("ev",),
            name_rule="path_segment",
            field_selectors=_EVENTS_V1_FIELDS,
            storage_group="",
            storage_resource="events",
        ),
        # rbac.authorization.k8s.io/v1
        ServedResource(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            True,
            "role",
            name_rule="path_segment",
        ),
        ServedResource(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            True,
            "rolebinding",
            name_rule="path_segment",
        ),
        ServedResource(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            False,
            "clusterrole",
            name_rule="path_segment",
        ),
        ServedResource(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            False,
            "clusterrolebinding",
            name_rule="path_segment",
        ),
        # apiextensions.k8s.io/v1
        ServedResource(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            "customresourcedefinition",
            ("crd", "crds"),
            ("api-extensions",),
            subresources=status,
            tracks_generation=True,
        ),
        # discovery.k8s.io/v1
        ServedResource(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            "EndpointSlice",
            True,
            "endpointslice",
        ),
        # What the other ``kubectl create`` generators make.
        ServedResource(
            "",
            "v1",
            "resourcequotas",
            "ResourceQuota",
            True,
            "resourcequota",
            ("quota",),
            subresources=status,
        ),
        ServedResource(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            "PriorityClass",
            False,
            "priorityclass",
            ("pc",),
        ),
        ServedResource(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            True,
            "poddisruptionbudget",
            ("pdb",),
            subresources=status,
            tracks_generation=True,
        ),
        ServedResource(
            "networking.k8s.io",
            "v1",
            "ingresses",
            "Ingress",
            True,
            "ingress",
            ("ing",),
            subresources=status,
            tracks_generation=True,
        ),
        # The rest of what kube-apiserver 1.32 serves by default (pkg/controlplane's storage
        # providers, pkg/registry/*/rest): stored generically, validated against the upstream
        # schema; the kinds with behaviour have a KindBehaviour or a controller of their own.
        ServedResource(
            "",
            "v1",
            "replicationcontrollers",
            "ReplicationController",
            True,
            "replicationcontroller",
            ("rc",),
            ("all",),
            subresources=status_scale,
            tracks_generation=True,
            field_selectors={"status.replicas": _path("status", "replicas")},
        ),
        ServedResource("", "v1", "podtemplates", "PodTemplate", True, "podtemplate"),
        # A pod's binding posted to the collection (the older form of pods/binding).
        ServedResource("", "v1", "bindings", "Binding", True, "binding", verbs=("create",)),
        # Computed on every read (see kinds.component_statuses), never stored.
        ServedResource(
            "",
            "v1",
            "componentstatuses",
            "ComponentStatus",
            False,
            "componentstatus",
            ("cs",),
            verbs=("get", "list"),
            deprecated_warning=DEPRECATION_WARNING,
        ),
        ServedResource("", "v1", "limitranges", "LimitRange", True, "limitrange", ("limits",)),
        ServedResource(
            "",
            "v1",
            "persistentvolumes",
            "PersistentVolume",
            False,
            "persistentvolume",
            ("pv",),
            subresources=status,
        ),
        ServedResource(
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            "HorizontalPodAutoscaler",
            True,
            "horizontalpodautoscaler",
            ("hpa",),
            ("all",),
            subresources=status,
        ),
        # autoscaling/v1: the same objects, stored as v2 (kubectl autoscale writes v1).
        ServedResource(
            "autoscaling",
            "v1",
            "horizontalpodautoscalers",
            "HorizontalPodAutoscaler",
            True,
            "horizontalpodautoscaler",
            ("hpa",),
            ("all",),
            subresources=status,
            storage_version="v2",
        ),
        ServedResource(
            "certificates.k8s.io",
            "v1",
            "certificatesigningrequests",
            "CertificateSigningRequest",
            False,
            "certificatesigningrequest",
            ("csr",),
            subresources=("approval", "status"),
            field_selectors={"spec.signerName": _path("spec", "signerName")},
        ),
        ServedResource(
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            "APIService",
            False,
            "apiservice",
            categories=("api-extensions",),
            subresources=status,
            name_rule="path_segment",
        ),
        ServedResource(
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            "NetworkPolicy",
            True,
            "networkpolicy",
            ("netpol",),
            tracks_generation=True,
        ),
        ServedResource(
            "networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, "ingressclass"
        ),
        ServedResource(
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "StorageClass",
            False,
            "storageclass",
            ("sc",),
        ),
        ServedResource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, "csidriver"),
        ServedResource("storage.k8s.io", "v1", "csinodes", "CSINode", False, "csinode"),
        ServedResource(
            "storage.k8s.io",
            "v1",
            "csistoragecapacities",
            "CSIStorageCapacity",
            True,
            "csistoragecapacity",
        ),
        ServedResource(
            "storage.k8s.io",
            "v1",
            "volumeattachments",
            "VolumeAttachment",
            False,
            "volumeattachment",
            subresources=status,
        ),
        ServedResource(
            "node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, "runtimeclass"
        ),
        ServedResource(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "flowschemas",
            "FlowSchema",
            False,
            "flowschema",
            subresources=status,
        ),
        ServedResource(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "prioritylevelconfigurations",
            "PriorityLevelConfiguration",
            False,
            "prioritylevelconfiguration",
            subresources=status,
        ),
        # Reviews: answered at once, never stored (see setpoint.cluster.apiserver.auth).
        ServedResource(
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            False,
            "selfsubjectaccessreview",
            verbs=("create",),
        ),
        ServedResource(
            "authorization.k8s.io",
            "v1",
            "localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            True,
            "localsubjectaccessreview",
            verbs=("create",),
        ),
        ServedResource(
            "authorization.k8s.io",
            "v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
            False,
            "subjectaccessreview",
            verbs=("create",),
        ),
        ServedResource(
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            False,
            "selfsubjectrulesreview",
            verbs=("create",),
        ),
        ServedResource(
            "authentication.k8s.io",
            "v1",
            "selfsubjectreviews",
            "SelfSubjectReview",
            False,
            "selfsubjectreview",
            verbs=("create",),
        ),
        ServedResource(
            "authentication.k8s.io",
            "v1",
            "tokenreviews",
            "TokenReview",
            False,
            "tokenreview",
            verbs=("create",),
        ),
        ServedResource(
            "authentication.k8s.io",
            "v1beta1",
            "selfsubjectreviews",
            "SelfSubjectReview",
            False,
            "selfsubjectreview",
            verbs=("create",),
        ),
        # The resource metrics API (metrics-server's upstream), computed on every read from
        # the kubelet's usage (see kinds.resource_metrics), never stored.
        ServedResource("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, verbs=_GET_LIST),
        ServedResource("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, verbs=_GET_LIST),
    ]
