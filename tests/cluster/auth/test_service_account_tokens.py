"""Service account tokens: the TokenRequest API, and requests authenticated with its tokens."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.kubeconfig_file import write_kubeconfig
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI, raw_api

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
WHOAMI = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}
ISSUER = "https://kubernetes.default.svc.cluster.local"


def _token_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"


async def _create_account(api: RawAPI, namespace: str, name: str) -> dict[str, Any]:
    reply = await api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
    )
    assert reply.status == 201, reply.body
    body: dict[str, Any] = reply.body
    return body


async def _request_token(
    api: RawAPI, namespace: str, name: str, spec: dict[str, Any] | None = None
) -> str:
    reply = await api.request(
        "POST",
        _token_path(namespace, name),
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {}},
    )
    assert reply.status == 201, reply.body
    token: str = reply.body["status"]["token"]
    return token


async def _whoami(url: str, token: str) -> tuple[int, Any]:
    async with raw_api(url, token) as api:
        reply = await api.request("POST", SSR, WHOAMI)
    return reply.status, reply.body


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return decoded


@pytest.fixture
async def fake_cluster() -> AsyncIterator[tuple[LocalCluster, FakeClock]]:
    """A cluster of its own whose clock (tokens' issue and expiry) moves only when told."""
    clock = FakeClock()
    async with LocalCluster(in_memory=True, controllers=False, https_port=None, clock=clock) as c:
        await c._running().create_namespace("team")
        yield c, clock


async def test_token_request_answers_as_upstream(api: RawAPI, namespace: str) -> None:
    account = await _create_account(api, namespace, "builder")
    reply = await api.request(
        "POST",
        _token_path(namespace, "builder"),
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    assert reply.status == 201
    body = reply.body
    assert (body["kind"], body["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    assert body["metadata"]["name"] == "builder"
    assert body["metadata"]["namespace"] == namespace
    assert body["spec"] == {
        "audiences": [ISSUER],
        "expirationSeconds": 3600,
        "boundObjectRef": None,
    }
    claims = _claims(body["status"]["token"])
    assert claims["sub"] == f"system:serviceaccount:{namespace}:builder"
    assert claims["iss"] == ISSUER
    assert claims["aud"] == [ISSUER]
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["nbf"] == claims["iat"]
    assert claims["kubernetes.io"] == {
        "namespace": namespace,
        "serviceaccount": {"name": "builder", "uid": account["metadata"]["uid"]},
    }
    assert body["status"]["expirationTimestamp"].endswith("Z")


async def test_token_request_errors(api: RawAPI, namespace: str) -> None:
    missing = await api.request("POST", _token_path(namespace, "ghost"), {"spec": {}})
    assert (missing.status, missing.body["message"]) == (
        404,
        'serviceaccounts "ghost" not found',
    )
    await _create_account(api, namespace, "short")
    too_short = await api.request(
        "POST", _token_path(namespace, "short"), {"spec": {"expirationSeconds": 599}}
    )
    assert too_short.status == 422
    assert too_short.body["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
        "value: 599: may not specify a duration less than 10 minutes"
    )
    wrong_name = await api.request(
        "POST", _token_path(namespace, "short"), {"metadata": {"name": "other"}, "spec": {}}
    )
    assert wrong_name.status == 422
    assert "must match the service account name if specified" in wrong_name.body["message"]
    bad_kind = await api.request(
        "POST",
        _token_path(namespace, "short"),
        {"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}},
    )
    assert (bad_kind.status, bad_kind.body["message"]) == (
        400,
        "cannot bind token to object of type /v1, Kind=ConfigMap",
    )
    assert (await api.request("GET", _token_path(namespace, "short"))).status == 405


async def test_token_authenticates_as_the_service_account(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    account = await _create_account(api, namespace, "worker")
    token = await _request_token(api, namespace, "worker")
    status, body = await _whoami(local_cluster.url, token)
    assert status == 201
    user = body["status"]["userInfo"]
    assert user["username"] == f"system:serviceaccount:{namespace}:worker"
    assert user["uid"] == account["metadata"]["uid"]
    assert user["groups"] == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{namespace}",
        "system:authenticated",
    ]
    jti = _claims(token)["jti"]
    assert user["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={jti}"]}


async def test_wrong_audience_is_unauthorized(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    await _create_account(api, namespace, "vault-client")
    token = await _request_token(api, namespace, "vault-client", {"audiences": ["vault"]})
    assert _claims(token)["aud"] == ["vault"]
    assert await _whoami(local_cluster.url, token) == (401, UNAUTHORIZED)
    both = await _request_token(api, namespace, "vault-client", {"audiences": ["vault", ISSUER]})
    assert (await _whoami(local_cluster.url, both))[0] == 201


async def test_deleting_the_account_revokes_its_tokens(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    await _create_account(api, namespace, "temp")
    token = await _request_token(api, namespace, "temp")
    assert (await _whoami(local_cluster.url, token))[0] == 201
    deleted = await api.request("DELETE", f"/api/v1/namespaces/{namespace}/serviceaccounts/temp")
    assert deleted.status == 200
    assert await _whoami(local_cluster.url, token) == (401, UNAUTHORIZED)
    # The same name again is another account: the old token stays revoked.
    await _create_account(api, namespace, "temp")
    assert await _whoami(local_cluster.url, token) == (401, UNAUTHORIZED)
    fresh = await _request_token(api, namespace, "temp")
    assert (await _whoami(local_cluster.url, fresh))[0] == 201


async def test_pod_bound_token_ends_with_the_pod(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    await _create_account(api, namespace, "runner")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "runner", "containers": [{"name": "c", "image": "x"}]},
    }
    created = await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert created.status == 201
    uid = created.body["metadata"]["uid"]
    reference = {"kind": "Pod", "apiVersion": "v1", "name": "p"}
    token = await _request_token(api, namespace, "runner", {"boundObjectRef": reference})
    status, body = await _whoami(local_cluster.url, token)
    assert status == 201
    extra = body["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["p"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [uid]
    stale = await api.request(
        "POST",
        _token_path(namespace, "runner"),
        {"spec": {"boundObjectRef": {**reference, "uid": "not-the-uid"}}},
    )
    assert stale.status == 409
    await _create_account(api, namespace, "other")
    mismatch = await api.request(
        "POST", _token_path(namespace, "other"), {"spec": {"boundObjectRef": reference}}
    )
    assert (mismatch.status, mismatch.body["message"]) == (
        400,
        'cannot bind token for serviceaccount "other" to pod running with different '
        "serviceaccount name.",
    )
    gone = await api.request(
        "DELETE",
        f"/api/v1/namespaces/{namespace}/pods/p",
        {"gracePeriodSeconds": 0},
    )
    assert gone.status == 200
    for _ in range(300):  # a pod may linger while its kubelet stops it
        if (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/p")).status == 404:
            break
        await asyncio.sleep(0.1)
    assert await _whoami(local_cluster.url, token) == (401, UNAUTHORIZED)


async def test_tokens_expire_on_the_cluster_clock(
    fake_cluster: tuple[LocalCluster, FakeClock],
) -> None:
    cluster, clock = fake_cluster
    async with raw_api(cluster.url, cluster.token) as admin:
        await _create_account(admin, "team", "bot")
        token = await _request_token(admin, "team", "bot", {"expirationSeconds": 600})
    assert (await _whoami(cluster.url, token))[0] == 201
    clock.advance(timedelta(seconds=600 + 59))  # within upstream's one minute of leeway
    assert (await _whoami(cluster.url, token))[0] == 201
    clock.advance(timedelta(seconds=2))
    assert await _whoami(cluster.url, token) == (401, UNAUTHORIZED)


@pytest.mark.parametrize(
    "header",
    [
        "Bearer garbage",
        "Bearer eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMifQ.",
        "Basic YWRtaW46YWRtaW4=",
        "Bearer",
        "",
    ],
)
async def test_anything_else_is_unauthorized(local_cluster: BackgroundCluster, header: str) -> None:
    headers = {"Authorization": header} if header else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(local_cluster.url + "/api/v1/namespaces", headers=headers) as reply,
    ):
        assert reply.status == 401
        assert json.loads(await reply.read()) == UNAUTHORIZED


async def test_forged_token_is_unauthorized(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    await _create_account(api, namespace, "forged")
    token = await _request_token(api, namespace, "forged")
    header, _, signature = token.split(".")
    claims = _claims(token)
    claims["sub"] = "system:serviceaccount:kube-system:default"  # the signature no longer fits
    tampered = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert await _whoami(local_cluster.url, f"{header}.{tampered}.{signature}") == (
        401,
        UNAUTHORIZED,
    )


def test_kubectl_create_token_and_whoami(
    local_cluster: BackgroundCluster, namespace: str, tmp_path: Path
) -> None:
    admin = Kubectl(local_cluster.kubeconfig_path, tmp_path / "cache")
    admin.run("create", "serviceaccount", "deployer", "-n", namespace)
    token = admin.run("create", "token", "deployer", "-n", namespace).stdout.strip()
    assert token.count(".") == 2
    cluster = local_cluster.cluster
    assert cluster is not None and cluster.certificate_authority_pem is not None
    kubeconfig = write_kubeconfig(
        tmp_path / "sa-kubeconfig",
        local_cluster.https_url,
        token,
        cluster.certificate_authority_pem,
    )
    as_account = Kubectl(kubeconfig, tmp_path / "cache")
    whoami = as_account.json("auth", "whoami")
    user = whoami["status"]["userInfo"]
    assert user["username"] == f"system:serviceaccount:{namespace}:deployer"
    assert f"system:serviceaccounts:{namespace}" in user["groups"]
    timed = admin.run(
        "create", "token", "deployer", "-n", namespace, "--duration", "20m", "--audience", "x"
    ).stdout.strip()
    claims = _claims(timed)
    assert (claims["exp"] - claims["iat"], claims["aud"]) == (1200, ["x"])
    refused = admin.run(
        "create", "token", "deployer", "-n", namespace, "--duration", "5m", check=False
    )
    assert refused.returncode != 0
    assert "may not specify a duration less than 10 minutes" in refused.stderr
    garbage = write_kubeconfig(
        tmp_path / "bad-kubeconfig",
        local_cluster.https_url,
        "garbage",
        cluster.certificate_authority_pem,
    )
    denied = Kubectl(garbage, tmp_path / "cache").run("auth", "whoami", check=False)
    assert denied.returncode != 0
    assert "Unauthorized" in denied.stderr


async def test_tokens_survive_a_restart_on_the_same_data_dir(tmp_path: Path) -> None:
    async with LocalCluster(in_memory=False, data_dir=tmp_path, controllers=False) as first:
        await first._running().create_namespace("team")
        async with raw_api(first.url, first.token) as admin:
            await _create_account(admin, "team", "keeper")
            token = await _request_token(admin, "team", "keeper")
    async with LocalCluster(in_memory=False, data_dir=tmp_path, controllers=False) as second:
        status, body = await _whoami(second.url, token)
        assert status == 201
        assert body["status"]["userInfo"]["username"] == "system:serviceaccount:team:keeper"
    # Another cluster (its own signing key) does not accept it.
    async with LocalCluster(in_memory=True, controllers=False) as other:
        await other._running().create_namespace("team")
        async with raw_api(other.url, other.token) as admin:
            await _create_account(admin, "team", "keeper")
        assert await _whoami(other.url, token) == (401, UNAUTHORIZED)


async def test_discovery_lists_the_token_subresource(api: RawAPI) -> None:
    listed = (await api.request("GET", "/api/v1")).body["resources"]
    entry = next(r for r in listed if r["name"] == "serviceaccounts/token")
    assert entry == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }


async def test_token_review(api: RawAPI, namespace: str) -> None:
    account = await _create_account(api, namespace, "reviewed")
    token = await _request_token(api, namespace, "reviewed", {"audiences": ["vault", ISSUER]})
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    valid = await api.request("POST", path, {**review, "spec": {"token": token}})
    assert valid.status == 201
    assert valid.body["status"]["authenticated"] is True
    assert valid.body["status"]["audiences"] == [ISSUER]
    user = valid.body["status"]["user"]
    assert (user["username"], user["uid"]) == (
        f"system:serviceaccount:{namespace}:reviewed",
        account["metadata"]["uid"],
    )
    for_vault = await api.request(
        "POST", path, {**review, "spec": {"token": token, "audiences": ["vault"]}}
    )
    assert for_vault.body["status"]["audiences"] == ["vault"]
    elsewhere = await api.request(
        "POST", path, {**review, "spec": {"token": token, "audiences": ["db"]}}
    )
    assert elsewhere.status == 201
    assert elsewhere.body["status"] == {
        "user": {},
        "error": f'token audiences ["vault" "{ISSUER}"] is invalid for the target audiences ["db"]',
    }
    garbage = await api.request("POST", path, {**review, "spec": {"token": "garbage"}})
    assert garbage.body["status"] == {"user": {}, "error": "invalid bearer token"}
    empty = await api.request("POST", path, {**review, "spec": {}})
    assert (empty.status, empty.body["message"]) == (
        400,
        "token is required for TokenReview in authentication",
    )


async def test_token_review_of_the_admin_token_honours_audiences(
    api: RawAPI, local_cluster: BackgroundCluster
) -> None:
    # Upstream wraps static tokens as audience-agnostic: valid for the API server's own
    # audiences only, so a review for a foreign audience is not authenticated (no error).
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    token = local_cluster.token
    own = await api.request("POST", path, {**review, "spec": {"token": token}})
    assert own.status == 201
    assert own.body["status"]["authenticated"] is True
    assert own.body["status"]["audiences"] == [ISSUER]
    assert own.body["status"]["user"]["username"] == "setpoint-admin"
    mixed = await api.request(
        "POST", path, {**review, "spec": {"token": token, "audiences": ["vault", ISSUER]}}
    )
    assert mixed.body["status"]["audiences"] == [ISSUER]
    vault = await api.request(
        "POST", path, {**review, "spec": {"token": token, "audiences": ["vault"]}}
    )
    assert vault.status == 201
    assert vault.body["status"] == {"user": {}}


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_kubectl_versions_create_bound_tokens(
    local_cluster: BackgroundCluster, namespace: str, tmp_path: Path, version: str
) -> None:
    binary = f"/usr/lib/google-cloud-sdk/bin/kubectl.{version}"
    if shutil.which(binary) is None:
        pytest.skip(f"kubectl {version} is not installed")
    kubectl = Kubectl(local_cluster.kubeconfig_path, tmp_path / "cache", binary)
    kubectl.run("create", "serviceaccount", "bound", "-n", namespace)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "holder", "namespace": namespace},
        "spec": {"serviceAccountName": "bound", "containers": [{"name": "c", "image": "x"}]},
    }
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(pod))
    token = kubectl.run(
        "create",
        "token",
        "bound",
        "-n",
        namespace,
        "--bound-object-kind",
        "Pod",
        "--bound-object-name",
        "holder",
    ).stdout.strip()
    claims = _claims(token)
    assert claims["kubernetes.io"]["pod"]["name"] == "holder"
    assert claims["sub"] == f"system:serviceaccount:{namespace}:bound"


async def test_legacy_token_secrets(
    local_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    account = await _create_account(api, namespace, "legacy")
    secrets = f"/api/v1/namespaces/{namespace}/secrets"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "legacy-token",
            "annotations": {"kubernetes.io/service-account.name": "legacy"},
        },
        "type": "kubernetes.io/service-account-token",
    }
    assert (await api.request("POST", secrets, secret)).status == 201
    filled: dict[str, Any] = {}
    for _ in range(300):
        filled = (await api.request("GET", f"{secrets}/legacy-token")).body
        if (filled.get("data") or {}).get("token"):
            break
        await asyncio.sleep(0.1)
    data = filled["data"]
    assert set(data) == {"token", "ca.crt", "namespace"}
    assert base64.b64decode(data["namespace"]).decode() == namespace
    annotations = filled["metadata"]["annotations"]
    assert annotations["kubernetes.io/service-account.uid"] == account["metadata"]["uid"]
    token = base64.b64decode(data["token"]).decode()
    assert _claims(token)["iss"] == "kubernetes/serviceaccount"
    status, body = await _whoami(local_cluster.url, token)
    assert status == 201
    assert body["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:legacy"
    # Deleting the Secret revokes the token; deleting the ServiceAccount deletes its Secrets.
    assert (await api.request("DELETE", f"{secrets}/legacy-token")).status == 200
    assert await _whoami(local_cluster.url, token) == (401, UNAUTHORIZED)
    assert (await api.request("POST", secrets, secret)).status == 201
    deleted = await api.request("DELETE", f"/api/v1/namespaces/{namespace}/serviceaccounts/legacy")
    assert deleted.status == 200
    for _ in range(300):
        if (await api.request("GET", f"{secrets}/legacy-token")).status == 404:
            break
        await asyncio.sleep(0.1)
    assert (await api.request("GET", f"{secrets}/legacy-token")).status == 404
