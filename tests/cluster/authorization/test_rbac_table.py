"""The RBAC authorizer against a known policy: who may do what, where (see conftest.py).

Each row is one request's attributes and the decision upstream's RBAC rules give it: verbs,
resources, subresources (``pods/log``, ``*/status``), resourceNames, namespaces, service
accounts, groups, ClusterRole aggregation (default ``view``/``edit`` and a custom one),
non-resource URLs, bindings to missing roles, and ``system:masters``.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.identity import UserInfo
from setpoint.cluster.apiserver.server import APIServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

AUTH = "system:authenticated"


def sa(namespace: str, name: str) -> UserInfo:
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTH),
    )


ALICE = UserInfo("alice", (AUTH,))
BOB = UserInfo("bob", (AUTH,))
CAROL = UserInfo("carol", (AUTH,))
DAVE = UserInfo("dave", (AUTH,))
ERIN = UserInfo("erin", (AUTH,))
FRANK = UserInfo("frank", ("devs", AUTH))
GINA = UserInfo("gina", ("monitoring", AUTH))
ROOT = UserInfo("root", ("system:masters", AUTH))
ZED = UserInfo("zed", (AUTH,))
DEPLOYER = sa("team-a", "deployer")
OTHER_DEPLOYER = sa("team-b", "deployer")
OPERATOR = sa("ops", "operator")


class Case(NamedTuple):
    user: UserInfo
    verb: str
    resource: str  # "group/resource" or "resource"; "path:/x" for a non-resource URL
    namespace: str = ""
    name: str = ""
    allowed: bool = True


def attributes(case: Case) -> Attributes:
    if case.resource.startswith("path:"):
        return Attributes(case.user, case.verb, False, path=case.resource[len("path:") :])
    group, _, rest = case.resource.rpartition(":")
    resource, _, subresource = rest.partition("/")
    return Attributes(
        case.user,
        case.verb,
        True,
        namespace=case.namespace,
        api_group=group,
        resource=resource,
        subresource=subresource,
        name=case.name,
    )


CASES = [
    # a Role bound to a user, in its namespace only
    Case(ALICE, "get", "pods", "team-a", "p1"),
    Case(ALICE, "list", "pods", "team-a"),
    Case(ALICE, "watch", "pods", "team-a"),
    Case(ALICE, "delete", "pods", "team-a", "p1", allowed=False),
    Case(ALICE, "get", "pods", "team-b", "p1", allowed=False),
    Case(ALICE, "list", "pods", "", allowed=False),
    # subresources are separate resources
    Case(ALICE, "get", "pods/log", "team-a", "p1"),
    Case(ALICE, "get", "pods/exec", "team-a", "p1", allowed=False),
    Case(ALICE, "update", "pods/status", "team-a", "p1", allowed=False),
    # resourceNames
    Case(ALICE, "get", "configmaps", "team-a", "app-config"),
    Case(ALICE, "update", "configmaps", "team-a", "app-config"),
    Case(ALICE, "get", "configmaps", "team-a", "other", allowed=False),
    Case(ALICE, "list", "configmaps", "team-a", allowed=False),
    Case(ALICE, "delete", "configmaps", "team-a", "app-config", allowed=False),
    # */status for one group, to a service account named without a namespace
    Case(DEPLOYER, "update", "apps:deployments/status", "team-a", "web"),
    Case(DEPLOYER, "patch", "apps:statefulsets/status", "team-a", "db"),
    Case(DEPLOYER, "update", "apps:deployments", "team-a", "web", allowed=False),
    Case(DEPLOYER, "update", "pods/status", "team-a", "p1", allowed=False),
    Case(DEPLOYER, "update", "apps:deployments/status", "team-b", "web", allowed=False),
    Case(DEPLOYER, "update", "apps:deployments/scale", "team-a", "web", allowed=False),
    Case(OTHER_DEPLOYER, "update", "apps:deployments/status", "team-a", "web", allowed=False),
    # a group bound to the default (aggregated) edit ClusterRole in one namespace
    Case(FRANK, "create", "apps:deployments", "team-b"),
    Case(FRANK, "delete", "secrets", "team-b", "s"),
    Case(FRANK, "get", "pods/log", "team-b", "p1"),
    Case(FRANK, "impersonate", "serviceaccounts", "team-b", "default"),
    Case(FRANK, "create", "rbac.authorization.k8s.io:roles", "team-b", allowed=False),
    Case(FRANK, "update", "pods/status", "team-b", "p1", allowed=False),
    Case(FRANK, "create", "apps:deployments", "team-a", allowed=False),
    Case(FRANK, "list", "example.com:widgets", "team-b"),
    # a ClusterRole bound cluster-wide
    Case(BOB, "list", "nodes"),
    Case(BOB, "get", "nodes", "", "node-1"),
    Case(BOB, "delete", "nodes", "", "node-1", allowed=False),
    Case(BOB, "list", "pods", "", allowed=False),
    # non-resource URLs, with and without a trailing *
    Case(GINA, "get", "path:/metrics"),
    Case(GINA, "get", "path:/logs/kube-apiserver.log"),
    Case(GINA, "get", "path:/logs", allowed=False),
    Case(GINA, "post", "path:/metrics", allowed=False),
    Case(ZED, "get", "path:/api"),
    Case(ZED, "get", "path:/apis/apps/v1"),
    Case(ZED, "get", "path:/version"),
    Case(ZED, "get", "path:/healthz/etcd", allowed=False),
    Case(ZED, "get", "path:/", allowed=False),
    # every authenticated user: system:basic-user
    Case(ZED, "create", "authorization.k8s.io:selfsubjectaccessreviews"),
    Case(ZED, "create", "authentication.k8s.io:selfsubjectreviews"),
    Case(ZED, "create", "authorization.k8s.io:subjectaccessreviews", allowed=False),
    Case(ZED, "list", "namespaces", allowed=False),
    # wildcards: every resource and subresource of one group, everywhere
    Case(OPERATOR, "create", "example.com:widgets", "team-a"),
    Case(OPERATOR, "delete", "example.com:widgets/status", "team-b", "w"),
    Case(OPERATOR, "list", "example.com:widgets", ""),
    Case(OPERATOR, "get", "configmaps", "team-a", "x", allowed=False),
    Case(OPERATOR, "list", "apps:deployments", "", allowed=False),
    # aggregation: a labelled ClusterRole joins view (and so edit and admin) ...
    Case(CAROL, "list", "example.com:widgets", "team-a"),
    Case(CAROL, "get", "pods/log", "team-a", "p"),
    Case(CAROL, "get", "secrets", "team-a", "s", allowed=False),
    Case(CAROL, "delete", "example.com:widgets", "team-a", "w", allowed=False),
    Case(CAROL, "list", "example.com:widgets", "team-b", allowed=False),
    # ... and a custom aggregationRule
    Case(DAVE, "get", "services", "team-b", "svc"),
    Case(DAVE, "list", "services", ""),
    Case(DAVE, "delete", "services", "team-b", "svc", allowed=False),
    # a binding to a role that does not exist grants nothing
    Case(ERIN, "get", "pods", "team-a", "p1", allowed=False),
    # system:masters may do anything
    Case(ROOT, "delete", "nodes", "", "node-1"),
    Case(ROOT, "get", "path:/anything"),
    Case(ROOT, "escalate", "rbac.authorization.k8s.io:clusterroles", "", "cluster-admin"),
]


@pytest.mark.parametrize(
    "case",
    CASES,
    ids=[
        f"{c.user.username.rsplit(':', 1)[-1]}-{c.verb}-{c.resource}-{c.namespace or 'cluster'}"
        f"-{c.name}-{'allow' if c.allowed else 'deny'}"
        for c in CASES
    ],
)
async def test_decision(policy_server: APIServer, case: Case) -> None:
    decision = policy_server.access.authorizer.authorize(attributes(case))
    assert decision.allowed is case.allowed, decision.reason


async def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert sum(not case.allowed for case in CASES) >= 20


async def test_reasons_name_the_binding(policy_server: APIServer) -> None:
    authorizer = policy_server.access.authorizer
    assert authorizer.authorize(attributes(Case(ALICE, "get", "pods", "team-a", "p"))).reason == (
        'RBAC: allowed by RoleBinding "alice-pods/team-a" of Role "pod-reader" to User "alice"'
    )
    assert authorizer.authorize(
        attributes(Case(DEPLOYER, "patch", "apps:deployments/status", "team-a", "d"))
    ).reason == (
        'RBAC: allowed by RoleBinding "deployer/team-a" of Role "status-writer" to '
        'ServiceAccount "deployer/team-a"'
    )
    assert authorizer.authorize(attributes(Case(BOB, "list", "nodes"))).reason == (
        'RBAC: allowed by ClusterRoleBinding "bob-nodes" of ClusterRole "node-viewer" to User "bob"'
    )
    denied = authorizer.authorize(attributes(Case(ERIN, "get", "pods", "team-a", "p")))
    assert denied.reason == 'RBAC: role.rbac.authorization.k8s.io "ghost" not found'
    # system:masters is allowed by its group, before RBAC (no reason)
    assert authorizer.authorize(attributes(Case(ROOT, "get", "pods", "x", "p"))).reason == ""


async def test_aggregated_roles_are_written(policy_server: APIServer) -> None:
    roles = policy_server.access.index.cluster_role_objects
    monitoring = roles["monitoring"]["rules"]
    assert monitoring == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["services"]}]
    widget_rule = {
        "verbs": ["get", "list", "watch"],
        "apiGroups": ["example.com"],
        "resources": ["widgets"],
    }
    for name in ("view", "edit", "admin"):
        assert widget_rule in roles[name]["rules"], name
    # admin holds edit's rules, then its own (upstream orders the selected roles by name)
    assert roles["admin"]["rules"][-1]["resources"] == ["rolebindings", "roles"]
