"""Which message a protobuf body of each kind carries: ``(apiVersion, kind)`` → table name."""

from __future__ import annotations

from typing import Final

#: The kinds whose protobuf bodies this server decodes.
KIND_MESSAGES: Final[dict[tuple[str, str], str]] = {
    ("v1", "Namespace"): "core.v1.Namespace",
    ("v1", "ConfigMap"): "core.v1.ConfigMap",
    ("v1", "Secret"): "core.v1.Secret",
    ("v1", "ServiceAccount"): "core.v1.ServiceAccount",
    ("v1", "Service"): "core.v1.Service",
    ("v1", "ResourceQuota"): "core.v1.ResourceQuota",
    ("v1", "Pod"): "core.v1.Pod",
    ("apps/v1", "Deployment"): "apps.v1.Deployment",
    ("apps/v1", "StatefulSet"): "apps.v1.StatefulSet",
    ("apps/v1", "DaemonSet"): "apps.v1.DaemonSet",
    ("apps/v1", "ReplicaSet"): "apps.v1.ReplicaSet",
    ("coordination.k8s.io/v1", "Lease"): "coordination.v1.Lease",
    ("v1", "Event"): "core.v1.Event",
    ("events.k8s.io/v1", "Event"): "events.v1.Event",
    ("batch/v1", "Job"): "batch.v1.Job",
    ("batch/v1", "CronJob"): "batch.v1.CronJob",
    ("rbac.authorization.k8s.io/v1", "Role"): "rbac.v1.Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "rbac.v1.RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "rbac.v1.ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "rbac.v1.ClusterRoleBinding",
    ("scheduling.k8s.io/v1", "PriorityClass"): "scheduling.v1.PriorityClass",
    ("policy/v1", "PodDisruptionBudget"): "policy.v1.PodDisruptionBudget",
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "autoscaling.v1.HorizontalPodAutoscaler",
    ("networking.k8s.io/v1", "Ingress"): "networking.v1.Ingress",
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): (
        "certificates.v1.CertificateSigningRequest"
    ),
    ("authentication.k8s.io/v1", "TokenRequest"): "authentication.v1.TokenRequest",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "authentication.v1.SelfSubjectReview",
    # v1beta1 and v1alpha1 declare the same fields with the same numbers (kubectl 1.27 and
    # older clients ask those versions first).
    ("authentication.k8s.io/v1beta1", "SelfSubjectReview"): "authentication.v1.SelfSubjectReview",
    ("authentication.k8s.io/v1alpha1", "SelfSubjectReview"): "authentication.v1.SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): (
        "authorization.v1.SelfSubjectRulesReview"
    ),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): (
        "authorization.v1.SelfSubjectAccessReview"
    ),
}
