"""CertificateSigningRequests with the real kubectl: create, ``kubectl certificate approve`` /
``deny``, the signer's certificate, and that certificate logging in to the local cluster."""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl

CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _request(user: str, groups: tuple[str, ...]) -> tuple[bytes, bytes]:
    """A PEM certificate request for ``user`` in ``groups`` and its PEM private key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    request = (
        x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return request.public_bytes(serialization.Encoding.PEM), key_pem


def _csr(name: str, request_pem: bytes, usages: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(request_pem).decode(),
            "signerName": CLIENT_SIGNER,
            "expirationSeconds": 86400,
            "usages": usages,
            "username": "someone-else",
        },
    }


def _create(kubectl: Kubectl, tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / f"{document['metadata']['name']}.json"
    path.write_text(json.dumps(document))
    kubectl.run("create", "-f", str(path))


def test_approved_request_is_issued_and_the_certificate_logs_in(
    kubectl: Kubectl, local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    name = f"alice-{secrets.token_hex(3)}"
    request_pem, key_pem = _request(f"user-{name}", ("team-a",))
    _create(kubectl, tmp_path, _csr(name, request_pem, ["digital signature", "client auth"]))

    created = kubectl.json("get", "csr", name)
    # The requester is whoever created it, whatever the spec claimed.
    assert created["spec"]["username"] == "setpoint-admin"
    assert "system:masters" in created["spec"]["groups"]
    assert "status" not in created or not created["status"].get("certificate")
    pending = kubectl.run("get", "csr", name).stdout
    assert "Pending" in pending.splitlines()[1]
    assert CLIENT_SIGNER in pending

    approved = kubectl.run("certificate", "approve", name).stdout
    assert approved.strip() == f"certificatesigningrequest.certificates.k8s.io/{name} approved"
    issued = eventually_sync(
        lambda: kubectl.json("get", "csr", name).get("status", {}).get("certificate"),
        "the signer's certificate",
    )
    assert "Approved,Issued" in kubectl.run("get", "csr", name).stdout
    conditions = kubectl.json("get", "csr", name)["status"]["conditions"]
    assert conditions[0]["type"] == "Approved"
    assert conditions[0]["reason"] == "KubectlApprove"
    certificate = x509.load_pem_x509_certificate(base64.b64decode(issued))
    assert certificate.subject.rfc4514_string() == f"CN=user-{name},O=team-a"

    # The issued certificate authenticates as its subject against the local cluster.
    config = yaml.safe_load(local_cluster.kubeconfig_path.read_text())
    config["users"] = [
        {
            "name": "setpoint",
            "user": {
                "client-certificate-data": issued,
                "client-key-data": base64.b64encode(key_pem).decode(),
            },
        }
    ]
    user_config = tmp_path / "user-kubeconfig"
    user_config.write_text(yaml.safe_dump(config))
    as_user = Kubectl(user_config, tmp_path / "user-cache")
    whoami = as_user.json("auth", "whoami")
    assert whoami["status"]["userInfo"]["username"] == f"user-{name}"
    assert "team-a" in whoami["status"]["userInfo"]["groups"]
    # Authenticated, not authorized: RBAC still decides.
    denied = as_user.run("get", "secrets", "-n", "default", check=False)
    assert denied.returncode != 0
    assert f'User "user-{name}" cannot list resource "secrets"' in denied.stderr


def test_denied_request_is_never_issued(kubectl: Kubectl, tmp_path: Path) -> None:
    name = f"bob-{secrets.token_hex(3)}"
    request_pem, _ = _request(f"user-{name}", ())
    _create(kubectl, tmp_path, _csr(name, request_pem, ["client auth"]))
    denied = kubectl.run("certificate", "deny", name).stdout
    assert denied.strip() == f"certificatesigningrequest.certificates.k8s.io/{name} denied"
    row = kubectl.run("get", "csr", name).stdout.splitlines()[1]
    assert row.split()[-1] == "Denied"
    assert not kubectl.json("get", "csr", name)["status"].get("certificate")


def test_request_with_usages_the_signer_refuses_fails(kubectl: Kubectl, tmp_path: Path) -> None:
    name = f"carol-{secrets.token_hex(3)}"
    request_pem, _ = _request(f"user-{name}", ())
    _create(kubectl, tmp_path, _csr(name, request_pem, ["server auth"]))
    kubectl.run("certificate", "approve", name)
    failed = eventually_sync(
        lambda: [
            c
            for c in kubectl.json("get", "csr", name)["status"]["conditions"]
            if c["type"] == "Failed"
        ],
        "the Failed condition",
    )
    assert failed[0]["reason"] == "SignerValidationFailure"
    assert not kubectl.json("get", "csr", name)["status"].get("certificate")


def test_request_that_is_not_a_certificate_request_is_refused(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    document = _csr(
        "not-a-csr", b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", []
    )
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    result = kubectl.run("create", "-f", str(path), check=False)
    assert result.returncode != 0
    assert "spec.request: Invalid value" in result.stderr
    assert "PEM block type must be CERTIFICATE REQUEST" in result.stderr
    assert "spec.usages: Required value: usages must be provided" in result.stderr

    request_pem, _ = _request("short-lived", ())
    short = _csr("short-lived", request_pem, ["client auth"])
    short["spec"]["expirationSeconds"] = 599
    path.write_text(json.dumps(short))
    result = kubectl.run("create", "-f", str(path), check=False)
    assert (
        "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than "
        "600 seconds (10 minutes)"
    ) in result.stderr


def test_openapi_publishes_the_approval_subresource(kubectl: Kubectl) -> None:
    index = json.loads(kubectl.run("get", "--raw", "/openapi/v3").stdout)
    url = index["paths"]["apis/certificates.k8s.io/v1"]["serverRelativeURL"]
    document = json.loads(kubectl.run("get", "--raw", url).stdout)
    approval = document["paths"][
        "/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval"
    ]
    assert approval["put"]["description"] == (
        "replace approval of the specified CertificateSigningRequest"
    )


def test_no_system_masters_certificates_from_the_client_signer(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    request_pem, _ = _request("mallory", ("system:masters",))
    document = _csr("mallory", request_pem, ["client auth"])
    path = tmp_path / "mallory.json"
    path.write_text(json.dumps(document))
    refused = kubectl.run("create", "-f", str(path), check=False)
    assert refused.returncode != 0
    assert (
        'certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    ) in refused.stderr


def test_approving_needs_approve_on_the_signer(
    kubectl: Kubectl, local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    suffix = secrets.token_hex(3)
    approver = f"approver-{suffix}"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"csr-approver-{suffix}"},
        "rules": [
            {
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests"],
                "verbs": ["get", "list", "watch"],
            },
            {
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests/approval"],
                "verbs": ["update"],
            },
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"csr-approver-{suffix}"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": f"csr-approver-{suffix}",
        },
        "subjects": [{"kind": "User", "name": approver, "apiGroup": "rbac.authorization.k8s.io"}],
    }
    for document in (role, binding):
        _create(kubectl, tmp_path, document)
    name = f"dave-{suffix}"
    request_pem, _ = _request(f"user-{name}", ())
    _create(kubectl, tmp_path, _csr(name, request_pem, ["client auth"]))
    as_approver = Kubectl(
        local_cluster.write_user_kubeconfig(tmp_path / "approver", approver),
        tmp_path / "approver-cache",
    )
    refused = as_approver.run("certificate", "approve", name, check=False)
    assert refused.returncode != 0
    assert (
        f'certificatesigningrequests.certificates.k8s.io "{name}" is forbidden: user not '
        'permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"'
    ) in refused.stderr

    role["rules"].append(
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["signers"],
            "resourceNames": ["kubernetes.io/*"],
            "verbs": ["approve"],
        }
    )
    path = tmp_path / "role.json"
    path.write_text(json.dumps(role))
    kubectl.run("apply", "-f", str(path))
    approved = as_approver.run("certificate", "approve", name).stdout
    assert "approved" in approved
    eventually_sync(
        lambda: kubectl.json("get", "csr", name).get("status", {}).get("certificate"),
        "the signer's certificate",
    )
    for kind, document in (("clusterrolebinding", binding), ("clusterrole", role)):
        kubectl.run("delete", kind, document["metadata"]["name"])
