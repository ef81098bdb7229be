"""The default ClusterRoles and ClusterRoleBindings a 1.32 cluster starts with.

The user-facing roles (``cluster-admin``; ``admin``, ``edit`` and ``view``, which are
aggregated from the ``system:aggregate-to-*`` roles and from one another through their
``rbac.authorization.k8s.io/aggregate-to-*`` labels) and the roles every authenticated user
holds (``system:discovery``, ``system:basic-user``, ``system:public-info-viewer``), and
``system:monitoring`` (health and metrics URLs, for the group of that name), with
upstream's labels, annotation and bindings. The rules are upstream's bootstrap policy
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``). They are created at every start when
missing and never overwritten: upstream also adds back rules and subjects removed from a
default marked ``autoupdate``; here an edited default stays edited.
"""

from __future__ import annotations

from typing import Any, Final

RBAC_API_VERSION: Final = "rbac.authorization.k8s.io/v1"
BOOTSTRAP_LABELS: Final = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE_ANNOTATION: Final = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO_ADMIN: Final = "rbac.authorization.k8s.io/aggregate-to-admin"
AGGREGATE_TO_EDIT: Final = "rbac.authorization.k8s.io/aggregate-to-edit"
AGGREGATE_TO_VIEW: Final = "rbac.authorization.k8s.io/aggregate-to-view"

_READ: Final = ["get", "list", "watch"]
_WRITE: Final = ["create", "delete", "deletecollection", "patch", "update"]
_READ_WRITE: Final = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
]


def _rule(verbs: list[str], groups: list[str], resources: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _role(
    name: str,
    rules: list[dict[str, Any]] | None,
    *,
    labels: dict[str, str] | None = None,
    aggregate_from: str | None = None,
) -> dict[str, Any]:
    role: dict[str, Any] = {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE_ANNOTATION),
        },
    }
    if aggregate_from is not None:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {aggregate_from: "true"}}]
        }
        role["rules"] = []
    else:
        role["rules"] = rules or []
    return role


def _binding(name: str, groups: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": dict(BOOTSTRAP_LABELS),
            "annotations": dict(AUTOUPDATE_ANNOTATION),
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
            for group in groups
        ],
    }


_VIEW_RULES: Final = [
    _rule(
        _READ,
        [""],
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
        ],
    ),
    _rule(
        _READ,
        [""],
        [
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ],
    ),
    _rule(_READ, [""], ["namespaces"]),
    _rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(
        _READ,
        ["apps"],
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
    ),
    _rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    _rule(_READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    _rule(
        _READ,
        ["extensions"],
        [
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
        ],
    ),
    _rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    _rule(_READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
]

_EDIT_RULES: Final = [
    _rule(
        _READ,
        [""],
        ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"],
    ),
    _rule(["impersonate"], [""], ["serviceaccounts"]),
    _rule(_WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(
        _WRITE,
        [""],
        [
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
    ),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(
        _WRITE,
        ["apps"],
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
    ),
    _rule(_WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    _rule(_WRITE, ["batch"], ["cronjobs", "jobs"]),
    _rule(
        _WRITE,
        ["extensions"],
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "ingresses",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
        ],
    ),
    _rule(_WRITE, ["policy"], ["poddisruptionbudgets"]),
    _rule(_WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    _rule(_READ_WRITE, ["coordination.k8s.io"], ["leases"]),
]

_ADMIN_RULES: Final = [
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    _rule(_READ_WRITE, ["rbac.authorization.k8s.io"], ["rolebindings", "roles"]),
]

_DISCOVERY_URLS: Final = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_MONITORING_URLS: Final = [
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/*",
]
_PUBLIC_INFO_URLS: Final = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

AUTHENTICATED: Final = "system:authenticated"
UNAUTHENTICATED: Final = "system:unauthenticated"


def cluster_roles() -> list[dict[str, Any]]:
    """The default ClusterRoles (fresh copies)."""
    return [
        _role("admin", None, aggregate_from=AGGREGATE_TO_ADMIN),
        _role(
            "cluster-admin",
            [
                _rule(["*"], ["*"], ["*"]),
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _role("edit", None, labels={AGGREGATE_TO_ADMIN: "true"}, aggregate_from=AGGREGATE_TO_EDIT),
        _role("system:aggregate-to-admin", _ADMIN_RULES, labels={AGGREGATE_TO_ADMIN: "true"}),
        _role("system:aggregate-to-edit", _EDIT_RULES, labels={AGGREGATE_TO_EDIT: "true"}),
        _role("system:aggregate-to-view", _VIEW_RULES, labels={AGGREGATE_TO_VIEW: "true"}),
        _role(
            "system:auth-delegator",
            [
                _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
                _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
            ],
        ),
        _role(
            "system:basic-user",
            [
                _rule(
                    ["create"],
                    ["authorization.k8s.io"],
                    ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
            ],
        ),
        _role("system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]),
        _role("system:monitoring", [{"nonResourceURLs": _MONITORING_URLS, "verbs": ["get"]}]),
        _role(
            "system:public-info-viewer",
            [{"nonResourceURLs": _PUBLIC_INFO_URLS, "verbs": ["get"]}],
        ),
        _role("view", None, labels={AGGREGATE_TO_EDIT: "true"}, aggregate_from=AGGREGATE_TO_VIEW),
    ]


def cluster_role_bindings() -> list[dict[str, Any]]:
    """The default ClusterRoleBindings (fresh copies)."""
    return [
        _binding("cluster-admin", ["system:masters"]),
        _binding("system:basic-user", [AUTHENTICATED]),
        _binding("system:discovery", [AUTHENTICATED]),
        _binding("system:monitoring", ["system:monitoring"]),
        _binding("system:public-info-viewer", [AUTHENTICATED, UNAUTHENTICATED]),
    ]
