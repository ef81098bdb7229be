"""Escalation prevention inside the registry: the checks upstream's RBAC storage makes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from setpoint.cluster.apiserver.auth.identity import UserInfo
from setpoint.cluster.apiserver.auth.request_user import acting_user
from setpoint.cluster.apiserver.registry.object_operations import WriteOptions
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.status_errors import APIError
from tests.cluster.authorization.conftest import RBAC, binding, cluster_role, role, rule, subject

pytestmark = pytest.mark.asyncio(loop_scope="module")

FRANK = UserInfo("frank", ("devs", "system:authenticated"))  # edit in team-b


@contextmanager
def acting_as(user: UserInfo) -> Iterator[None]:
    token = acting_user.set(user)
    try:
        yield
    finally:
        acting_user.reset(token)


async def create(server: APIServer, plural: str, obj: dict[str, Any]) -> None:
    resource = server.registry.get(RBAC, "v1", plural)
    assert resource is not None
    namespace = obj["metadata"].get("namespace")
    await server.operations.create(resource, namespace, obj, WriteOptions())


async def test_a_role_may_hold_only_what_its_author_holds(policy_server: APIServer) -> None:
    held = role(
        "frank-held", "team-b", rule("get,list", "", "pods"), rule("create", "apps", "deployments")
    )
    with acting_as(FRANK):
        await create(policy_server, "roles", held)
        with pytest.raises(APIError) as refused:
            await create(
                policy_server,
                "roles",
                role(
                    "frank-more",
                    "team-b",
                    rule("get", "", "pods"),
                    rule("create,delete", "", "nodes"),
                    rule("get", "", "configmaps", "a,b"),
                ),
            )
    assert refused.value.code == 403
    assert refused.value.message == (
        'roles.rbac.authorization.k8s.io "frank-more" is forbidden: user "frank" '
        '(groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not '
        "currently held:\n"
        '{APIGroups:[""], Resources:["nodes"], Verbs:["create" "delete"]}'
    )
    # what frank holds in team-b (edit) is not his in team-a
    with acting_as(FRANK), pytest.raises(APIError):
        await create(policy_server, "roles", role("frank-a", "team-a", rule("get", "", "pods")))


async def test_aggregation_rules_need_cluster_admin(policy_server: APIServer) -> None:
    with acting_as(FRANK), pytest.raises(APIError) as refused:
        await create(policy_server, "clusterroles", cluster_role("frank-agg", aggregate={"x": "y"}))
    assert refused.value.message == (
        'clusterroles.rbac.authorization.k8s.io "frank-agg" is forbidden: must have '
        "cluster-admin privileges to use the aggregationRule"
    )


async def test_bindings_need_the_roles_rules_or_bind(policy_server: APIServer) -> None:
    to_missing = binding("b1", "team-b", "Role", "nope", subject("User", "x"))
    with acting_as(FRANK), pytest.raises(APIError) as missing:
        await create(policy_server, "rolebindings", to_missing)
    assert missing.value.message == (
        'rolebindings.rbac.authorization.k8s.io "b1" is forbidden: '
        'role.rbac.authorization.k8s.io "nope" not found'
    )
    to_admin = binding("b2", "team-b", "ClusterRole", "admin", subject("User", "x"))
    with acting_as(FRANK), pytest.raises(APIError) as admin:
        await create(policy_server, "rolebindings", to_admin)
    assert "is attempting to grant RBAC permissions not currently held:\n" in admin.value.message
    assert '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:[' in (
        admin.value.message
    )
    # edit is all frank holds in team-b, so he may hand it on there
    to_edit = binding("b3", "team-b", "ClusterRole", "edit", subject("User", "x"))
    with acting_as(FRANK):
        await create(policy_server, "rolebindings", to_edit)


async def test_the_server_and_system_masters_are_exempt(policy_server: APIServer) -> None:
    everything = cluster_role("all-of-it", rule("*", "*", "*"))
    await create(policy_server, "clusterroles", everything)  # no acting user: the server
    root = UserInfo("root", ("system:masters",))
    with acting_as(root):
        await create(
            policy_server,
            "clusterrolebindings",
            binding("root-all", "", "ClusterRole", "all-of-it", subject("User", "someone")),
        )
