"""Python clients with their default calls, authenticated as a ServiceAccount or a certificate."""

from __future__ import annotations

from pathlib import Path

import kr8s.asyncio
import pytest
from kubernetes import client, config

from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.kubeconfig_file import write_kubeconfig
from setpoint.testing.background_cluster import BackgroundCluster


def _sa_kubeconfig(local_cluster: BackgroundCluster, namespace: str, path: Path) -> Path:
    api = config.new_client_from_config(config_file=str(local_cluster.kubeconfig_path))
    try:
        core = client.CoreV1Api(api)
        core.create_namespaced_service_account(namespace, {"metadata": {"name": "py"}})
        answer = core.create_namespaced_service_account_token(
            "py", namespace, {"spec": {"expirationSeconds": 1200}}
        )
    finally:
        api.close()
    cluster = local_cluster.cluster
    assert cluster is not None and cluster.certificate_authority_pem is not None
    return write_kubeconfig(
        path, local_cluster.https_url, answer.status.token, cluster.certificate_authority_pem
    )


async def _settled(local_cluster: BackgroundCluster) -> None:
    cluster = local_cluster.cluster
    assert cluster is not None and cluster.server is not None
    await cluster.server.access.settle()


async def test_kr8s_whoami_with_a_service_account_token(
    local_cluster: BackgroundCluster, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = _sa_kubeconfig(local_cluster, namespace, tmp_path / "sa")
    api = await kr8s.asyncio.api(kubeconfig=str(kubeconfig))
    # kr8s asks with a TokenReview, which RBAC grants through system:auth-delegator only.
    with pytest.raises(kr8s.ServerError, match='cannot create resource "tokenreviews"'):
        await api.whoami()
    admin = config.new_client_from_config(config_file=str(local_cluster.kubeconfig_path))
    try:
        client.RbacAuthorizationV1Api(admin).create_cluster_role_binding(
            {
                "metadata": {"name": f"{namespace}-py-auth-delegator"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "system:auth-delegator",
                },
                "subjects": [{"kind": "ServiceAccount", "name": "py", "namespace": namespace}],
            }
        )
    finally:
        admin.close()
    local_cluster.run(_settled(local_cluster))
    assert await api.whoami() == f"system:serviceaccount:{namespace}:py"


def test_official_client_with_a_client_certificate(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    cluster = local_cluster.cluster
    assert cluster is not None
    kubeconfig = cluster.write_user_kubeconfig(tmp_path / "erin", "erin", ("auditors",))
    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
    finally:
        api.close()
    assert review.status.user_info.username == "erin"
    assert review.status.user_info.groups == ["auditors", "system:authenticated"]


def test_service_account_kubeconfig_helper(
    local_cluster: BackgroundCluster, namespace: str, tmp_path: Path
) -> None:
    with pytest.raises(APIError, match='serviceaccounts "helper" not found'):
        local_cluster.write_service_account_kubeconfig(tmp_path / "k", namespace, "helper")
    api = config.new_client_from_config(config_file=str(local_cluster.kubeconfig_path))
    try:
        client.CoreV1Api(api).create_namespaced_service_account(
            namespace, {"metadata": {"name": "helper"}}
        )
    finally:
        api.close()
    kubeconfig = local_cluster.write_service_account_kubeconfig(tmp_path / "k", namespace, "helper")
    as_helper = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        review = client.AuthenticationV1Api(as_helper).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
    finally:
        as_helper.close()
    assert review.status.user_info.username == f"system:serviceaccount:{namespace}:helper"
