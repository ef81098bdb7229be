"""RBAC through the HTTP API with the real kubectl: ``auth can-i`` (``--as``, ``--list``),
upstream's 403 messages, impersonation, and escalation prevention."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI

pytestmark = pytest.mark.slow


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def sa_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def test_can_i_follows_role_bindings(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "serviceaccount", "robot", "-n", namespace)
    robot = f"--as={sa_user(namespace, 'robot')}"

    def can_i(*args: str) -> str:
        result = kubectl.run("auth", "can-i", *args, "-n", namespace, robot, check=False)
        assert result.returncode == (0 if result.stdout.strip() == "yes" else 1), result
        return result.stdout.strip()

    assert can_i("list", "configmaps") == "no"
    kubectl.run(
        "create",
        "rolebinding",
        "robot-view",
        "--clusterrole=view",
        f"--serviceaccount={namespace}:robot",
        "-n",
        namespace,
    )
    assert can_i("list", "configmaps") == "yes"
    assert can_i("watch", "deployments.apps") == "yes"
    assert can_i("get", "pods", "--subresource=log") == "yes"
    assert can_i("get", "secrets") == "no"  # view never reads secrets
    assert can_i("create", "configmaps") == "no"
    # the binding is namespaced: nothing elsewhere, nothing cluster-wide
    other = kubectl.run("auth", "can-i", "list", "configmaps", "-n", "default", robot, check=False)
    assert (other.returncode, other.stdout.strip()) == (1, "no")
    nodes = kubectl.run("auth", "can-i", "list", "nodes", robot, check=False)
    assert nodes.stdout.strip() == "no"


def test_can_i_as_a_group(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run(
        "create",
        "role",
        "lease-writer",
        "--verb=get,update",
        "--resource=leases.coordination.k8s.io",
        "--resource-name=leader",
        "-n",
        namespace,
    )
    kubectl.run(
        "create",
        "rolebinding",
        "electors",
        "--role=lease-writer",
        "--group=electors",
        "-n",
        namespace,
    )

    def can_i(*args: str) -> str:
        return kubectl.run(
            "auth",
            "can-i",
            *args,
            "-n",
            namespace,
            "--as=someone",
            "--as-group=electors",
            check=False,
        ).stdout.strip()

    assert can_i("update", "leases.coordination.k8s.io/leader") == "yes"
    assert can_i("update", "leases.coordination.k8s.io/other") == "no"
    assert can_i("delete", "leases.coordination.k8s.io/leader") == "no"
    plain = kubectl.run(
        "auth",
        "can-i",
        "update",
        "leases.coordination.k8s.io/leader",
        "-n",
        namespace,
        "--as=someone",
        check=False,
    )
    assert plain.stdout.strip() == "no"


def test_can_i_list(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run(
        "create", "role", "cm-reader", "--verb=get,list", "--resource=configmaps", "-n", namespace
    )
    kubectl.run(
        "create",
        "rolebinding",
        "reader",
        "--role=cm-reader",
        f"--serviceaccount={namespace}:reader",
        "-n",
        namespace,
    )
    listed = kubectl.run(
        "auth", "can-i", "--list", "-n", namespace, f"--as={sa_user(namespace, 'reader')}"
    ).stdout
    rows = [line.split() for line in listed.splitlines()]
    assert ["configmaps", "[]", "[]", "[get", "list]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/version]", "[]", "[get]"] in rows
    assert not any(row and row[0] == "secrets" for row in rows)
    # the admin may do everything
    admin = kubectl.run("auth", "can-i", "--list", "-n", namespace).stdout
    assert ["*.*", "[]", "[]", "[*]"] in [line.split() for line in admin.splitlines()]


def test_forbidden_messages_are_upstreams(kubectl: Kubectl, namespace: str) -> None:
    user = sa_user(namespace, "nobody")
    listed = kubectl.run("get", "configmaps", "-n", namespace, f"--as={user}", check=False)
    assert listed.returncode == 1
    assert listed.stderr.strip() == (
        f'Error from server (Forbidden): configmaps is forbidden: User "{user}" cannot list '
        f'resource "configmaps" in API group "" in the namespace "{namespace}"'
    )
    nodes = kubectl.run("get", "nodes", f"--as={user}", check=False)
    assert nodes.stderr.strip() == (
        f'Error from server (Forbidden): nodes is forbidden: User "{user}" cannot list resource '
        '"nodes" in API group "" at the cluster scope'
    )
    deployment = kubectl.run(
        "get", "deployment.apps", "web", "-n", namespace, f"--as={user}", check=False
    )
    assert deployment.stderr.strip() == (
        'Error from server (Forbidden): deployments.apps "web" is forbidden: User '
        f'"{user}" cannot get resource "deployments" in API group "apps" in the namespace '
        f'"{namespace}"'
    )


async def test_forbidden_status_bodies(api: RawAPI, namespace: str) -> None:
    headers = {"Impersonate-User": "mallory"}
    logs = await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/p/log", headers=headers)
    assert logs.status == 403
    assert logs.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "p" is forbidden: User "mallory" cannot get resource "pods/log" in API '
        f'group "" in the namespace "{namespace}"',
        "reason": "Forbidden",
        "details": {"name": "p", "kind": "pods"},
        "code": 403,
    }
    path = await api.request("GET", "/logs/", headers=headers)
    assert (path.status, path.body["message"]) == (
        403,
        'forbidden: User "mallory" cannot get path "/logs/"',
    )
    # discovery and the review APIs stay open to every authenticated user
    assert (await api.request("GET", "/apis", headers=headers)).status == 200
    review = await api.request(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {"spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}}},
        headers=headers,
    )
    assert (review.status, review.body["status"]) == (201, {"allowed": False})


async def test_a_binding_to_a_missing_role_says_so(api: RawAPI, namespace: str) -> None:
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "dangling"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
        "subjects": [{"kind": "User", "name": "ivan", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    created = await api.request(
        "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", binding
    )
    assert created.status == 201
    reply = await api.request(
        "GET", f"/api/v1/namespaces/{namespace}/secrets", headers={"Impersonate-User": "ivan"}
    )
    assert reply.body["message"] == (
        f'secrets is forbidden: User "ivan" cannot list resource "secrets" in API group "" in '
        f'the namespace "{namespace}": RBAC: role.rbac.authorization.k8s.io "gone" not found'
    )


async def test_subject_access_review(api: RawAPI, namespace: str) -> None:
    sar = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    spec = {
        "user": "judy",
        "groups": ["auditors"],
        "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": namespace},
    }
    denied = await api.request("POST", sar, {"kind": "SubjectAccessReview", "spec": spec})
    assert (denied.status, denied.body["status"]) == (201, {"allowed": False})
    await api.request(
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
        {
            "metadata": {"name": "auditors"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "view",
            },
            "subjects": [
                {"kind": "Group", "name": "auditors", "apiGroup": "rbac.authorization.k8s.io"}
            ],
        },
    )
    allowed = await api.request("POST", sar, {"kind": "SubjectAccessReview", "spec": spec})
    assert allowed.body["status"] == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "auditors/{namespace}" of ClusterRole "view" to '
        'Group "auditors"',
    }
    nobody = await api.request(
        "POST", sar, {"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
    )
    assert (nobody.status, nobody.body["message"]) == (
        422,
        'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": '
        "at least one of user or group must be specified",
    )


def test_escalation_is_prevented(kubectl: Kubectl, namespace: str) -> None:
    # trent may manage roles and bindings in the namespace, and read configmaps, nothing more
    kubectl.run(
        "create",
        "role",
        "rbac-manager",
        "--verb=create,update,get,list",
        "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,configmaps",
        "-n",
        namespace,
    )
    kubectl.run(
        "create", "rolebinding", "trent", "--role=rbac-manager", "--user=trent", "-n", namespace
    )
    as_trent = ("--as=trent", "-n", namespace)
    # granting what trent holds is fine
    kubectl.run("create", "role", "cm-reader", "--verb=get", "--resource=configmaps", *as_trent)
    # granting more is refused, with upstream's message
    refused = kubectl.run(
        "create",
        "role",
        "secret-reader",
        "--verb=get,list",
        "--resource=secrets",
        *as_trent,
        check=False,
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "secret-reader" is '
        'forbidden: user "trent" (groups=["system:authenticated"]) is attempting to grant RBAC '
        "permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'
    )
    # binding a role that holds more than trent is refused too ...
    bind = kubectl.run(
        "create",
        "rolebinding",
        "friend-view",
        "--clusterrole=view",
        "--user=friend",
        *as_trent,
        check=False,
    )
    assert bind.returncode == 1
    assert (
        'rolebindings.rbac.authorization.k8s.io "friend-view" is forbidden: user "trent" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        "currently held:\n" in bind.stderr
    )
    # ... binding one trent holds all of is fine
    kubectl.run(
        "create", "rolebinding", "friend-cm", "--role=cm-reader", "--user=friend", *as_trent
    )
    # with the escalate and bind verbs, both go through
    kubectl.run(
        "create",
        "role",
        "escalator",
        "--verb=escalate,bind",
        "--resource=roles.rbac.authorization.k8s.io,clusterroles.rbac.authorization.k8s.io",
        "-n",
        namespace,
    )
    kubectl.run(
        "create",
        "rolebinding",
        "trent-escalates",
        "--role=escalator",
        "--user=trent",
        "-n",
        namespace,
    )
    kubectl.run(
        "create", "role", "secret-reader", "--verb=get,list", "--resource=secrets", *as_trent
    )
    kubectl.run(
        "create", "rolebinding", "friend-view", "--clusterrole=view", "--user=friend", *as_trent
    )


def test_aggregation_through_the_api(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}-leases-view"
    kubectl.run(
        "create",
        "clusterrole",
        name,
        "--verb=get,list",
        "--resource=leases.coordination.k8s.io",
    )
    try:
        kubectl.run(
            "label", "clusterrole", name, "rbac.authorization.k8s.io/aggregate-to-view=true"
        )
        kubectl.run(
            "create", "rolebinding", "peggy", "--clusterrole=view", "--user=peggy", "-n", namespace
        )
        deadline = time.monotonic() + 30
        answer = ""
        while time.monotonic() < deadline:
            answer = kubectl.run(
                "auth",
                "can-i",
                "list",
                "leases.coordination.k8s.io",
                "-n",
                namespace,
                "--as=peggy",
                check=False,
            ).stdout.strip()
            if answer == "yes":
                break
            time.sleep(0.2)
        assert answer == "yes"
        view = kubectl.json("get", "clusterrole", "admin")
        assert {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["get", "list"],
        } in view["rules"]
    finally:
        kubectl.run("delete", "clusterrole", name, check=False)


async def test_local_subject_access_review(api: RawAPI, namespace: str) -> None:
    lsar = f"/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews"
    attributes = {"verb": "get", "resource": "configmaps", "namespace": namespace}
    reply = await api.request(
        "POST", lsar, {"spec": {"user": "olivia", "resourceAttributes": attributes}}
    )
    assert (reply.status, reply.body["status"]) == (201, {"allowed": False})
    assert reply.body["metadata"]["namespace"] == namespace
    elsewhere = await api.request(
        "POST",
        lsar,
        {"spec": {"user": "olivia", "resourceAttributes": {**attributes, "namespace": "other"}}},
    )
    assert (elsewhere.status, elsewhere.body["message"]) == (
        422,
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
        'spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
    )
    masters = await api.request(
        "POST",
        lsar,
        {"spec": {"groups": ["system:masters"], "resourceAttributes": attributes}},
    )
    assert masters.body["status"] == {"allowed": True}
