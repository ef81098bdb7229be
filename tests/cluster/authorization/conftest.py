"""An API server (no HTTP clients, no controllers) with a known RBAC policy, for the tables."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from setpoint.cluster.apiserver.registry.object_operations import WriteOptions
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage

RBAC = "rbac.authorization.k8s.io"


def role(name: str, namespace: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "rules": list(rules)}


def cluster_role(
    name: str,
    *rules: dict[str, Any],
    labels: dict[str, str] | None = None,
    aggregate: dict[str, str] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}, "rules": list(rules)}
    if aggregate is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": aggregate}]}
    return obj


def rule(verbs: str, groups: str, resources: str, names: str = "") -> dict[str, Any]:
    """A rule from comma-separated lists ("" is the core group when alone in ``groups``)."""
    made: dict[str, Any] = {
        "verbs": verbs.split(","),
        "apiGroups": groups.split(","),
        "resources": resources.split(","),
    }
    if names:
        made["resourceNames"] = names.split(",")
    return made


def urls(verbs: str, paths: str) -> dict[str, Any]:
    return {"verbs": verbs.split(","), "nonResourceURLs": paths.split(",")}


def subject(kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    made = {"kind": kind, "name": name}
    if kind != "ServiceAccount":
        made["apiGroup"] = RBAC
    if namespace:
        made["namespace"] = namespace
    return made


def binding(
    name: str, namespace: str, role_kind: str, role_name: str, *subjects: dict[str, Any]
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role_name},
        "subjects": list(subjects),
    }
    if namespace:
        obj["metadata"]["namespace"] = namespace
    return obj


#: The policy the tables are checked against.
ROLES = [
    role(
        "pod-reader",
        "team-a",
        rule("get,list,watch", "", "pods"),
        rule("get", "", "pods/log"),
    ),
    role("cm-one", "team-a", rule("get,update", "", "configmaps", "app-config")),
    role("status-writer", "team-a", rule("update,patch", "apps", "*/status")),
]
CLUSTER_ROLES = [
    cluster_role("node-viewer", rule("get,list", "", "nodes")),
    cluster_role("metrics-reader", urls("get", "/metrics,/logs/*")),
    cluster_role("widgets-admin", rule("*", "example.com", "*")),
    cluster_role(
        "widgets-view",
        rule("get,list,watch", "example.com", "widgets"),
        labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"},
    ),
    cluster_role("monitoring", aggregate={"example.com/aggregate-to-monitoring": "true"}),
    cluster_role(
        "monitoring-services",
        rule("get,list", "", "services"),
        labels={"example.com/aggregate-to-monitoring": "true"},
    ),
]
ROLE_BINDINGS = [
    binding("alice-pods", "team-a", "Role", "pod-reader", subject("User", "alice")),
    binding("alice-cm", "team-a", "Role", "cm-one", subject("User", "alice")),
    binding("deployer", "team-a", "Role", "status-writer", subject("ServiceAccount", "deployer")),
    binding("devs-edit", "team-b", "ClusterRole", "edit", subject("Group", "devs")),
    binding("carol-view", "team-a", "ClusterRole", "view", subject("User", "carol")),
    binding("erin-ghost", "team-a", "Role", "ghost", subject("User", "erin")),
]
CLUSTER_ROLE_BINDINGS = [
    binding("bob-nodes", "", "ClusterRole", "node-viewer", subject("User", "bob")),
    binding("monitoring-urls", "", "ClusterRole", "metrics-reader", subject("Group", "monitoring")),
    binding(
        "operator-widgets",
        "",
        "ClusterRole",
        "widgets-admin",
        subject("ServiceAccount", "operator", "ops"),
    ),
    binding("dave-monitoring", "", "ClusterRole", "monitoring", subject("User", "dave")),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def policy_server() -> AsyncIterator[APIServer]:
    """A started API server (plain HTTP only) holding the policy above."""
    storage = MemoryStorage()
    server = APIServer(storage, https_port=None)
    await server.start()
    try:
        for namespace in ("team-a", "team-b", "ops"):
            await server.create_namespace(namespace)
        for plural, objects in (
            ("roles", ROLES),
            ("clusterroles", CLUSTER_ROLES),
            ("rolebindings", ROLE_BINDINGS),
            ("clusterrolebindings", CLUSTER_ROLE_BINDINGS),
        ):
            resource = server.registry.get(RBAC, "v1", plural)
            assert resource is not None
            for obj in objects:
                namespace = obj["metadata"].get("namespace")
                await server.operations.create(resource, namespace, obj, WriteOptions())
        await server.access.settle()
        yield server
    finally:
        await server.stop()
        await storage.close()
