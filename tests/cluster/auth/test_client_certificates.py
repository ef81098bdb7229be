"""Client certificates: CN is the user, O the groups, when signed by the client CA."""

from __future__ import annotations

import base64
import json
import ssl
import stat
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from click.testing import CliRunner

from setpoint.cli.cluster import cluster as cluster_command
from setpoint.cluster.apiserver.auth.authentication.client_certificates import (
    ClientCertificate,
    issue_client_certificate,
)
from setpoint.cluster.apiserver.http.serving_certificate import CertificateAuthority
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
WHOAMI = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _client_context(
    trusted_pem: bytes, certificate: ClientCertificate | None, directory: Path
) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=trusted_pem.decode())
    if certificate is not None:
        (directory / "tls.crt").write_bytes(certificate.certificate_pem)
        (directory / "tls.key").write_bytes(certificate.key_pem)
        context.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    return context


async def _whoami_over_tls(url: str, context: ssl.SSLContext) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + SSR, json=WHOAMI, ssl=context) as reply,
    ):
        return reply.status, json.loads(await reply.read())


def test_kubectl_with_a_user_certificate(local_cluster: BackgroundCluster, tmp_path: Path) -> None:
    cluster = local_cluster.cluster
    assert cluster is not None
    kubeconfig = cluster.write_user_kubeconfig(tmp_path / "alice", "alice", ("dev", "ops"))
    user = Kubectl(kubeconfig, tmp_path / "cache").json("auth", "whoami")["status"]["userInfo"]
    assert user == {"username": "alice", "groups": ["dev", "ops", "system:authenticated"]}


async def test_certificate_signed_by_the_cluster_ca(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    cluster = local_cluster.cluster
    assert cluster is not None and cluster.server is not None
    authority = cluster.server.authority
    assert authority is not None and cluster.certificate_authority_pem is not None
    certificate = issue_client_certificate(
        authority.certificate_pem, authority.key_pem, "bob", ["system:masters"]
    )
    context = _client_context(cluster.certificate_authority_pem, certificate, tmp_path)
    status, body = await _whoami_over_tls(local_cluster.https_url, context)
    assert status == 201
    assert body["status"]["userInfo"] == {
        "username": "bob",
        "groups": ["system:masters", "system:authenticated"],
    }
    # No certificate and no token: the TLS listener only asked for one.
    anonymous = _client_context(cluster.certificate_authority_pem, None, tmp_path)
    status, body = await _whoami_over_tls(local_cluster.https_url, anonymous)
    assert (status, body["reason"], body["message"]) == (401, "Unauthorized", "Unauthorized")


async def test_client_ca_option(tmp_path: Path) -> None:
    own = CertificateAuthority.generate()
    (tmp_path / "client-ca.crt").write_bytes(own.certificate_pem)
    async with LocalCluster(
        in_memory=True, controllers=False, client_ca=tmp_path / "client-ca.crt"
    ) as cluster:
        trusted = cluster.certificate_authority_pem
        assert trusted is not None
        carol = issue_client_certificate(own.certificate_pem, own.key_pem, "carol", ["qa"])
        status, body = await _whoami_over_tls(
            cluster.https_url, _client_context(trusted, carol, tmp_path)
        )
        assert (status, body["status"]["userInfo"]["username"]) == (201, "carol")
        # The cluster's own CA no longer vouches for clients, and cannot sign for another CA.
        server = cluster.server
        assert server is not None and server.authority is not None
        mallory = issue_client_certificate(
            server.authority.certificate_pem, server.authority.key_pem, "mallory"
        )
        with pytest.raises(aiohttp.ClientError):
            await _whoami_over_tls(cluster.https_url, _client_context(trusted, mallory, tmp_path))
        with pytest.raises(ValueError, match="--client-ca"):
            cluster.write_user_kubeconfig(tmp_path / "k", "dave")


async def test_user_kubeconfig_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    runner = CliRunner()
    data.mkdir()
    empty = runner.invoke(
        cluster_command, ["user-kubeconfig", "--data-dir", str(data), "--user", "x", "-o", "k"]
    )
    assert empty.exit_code == 1
    assert "no cluster has run with --data-dir" in empty.output
    async with LocalCluster(in_memory=False, data_dir=data, controllers=False) as cluster:
        output = tmp_path / "frank.kubeconfig"
        result = runner.invoke(
            cluster_command,
            [
                "user-kubeconfig",
                "--data-dir",
                str(data),
                "--user",
                "frank",
                "--group",
                "a",
                "--group",
                "b",
                "-o",
                str(output),
            ],
        )
        assert result.exit_code == 0, result.output
        assert stat.S_IMODE(output.stat().st_mode) == 0o600
        config = yaml.safe_load(output.read_text())
        assert config["clusters"][0]["cluster"]["server"] == cluster.https_url
        user_entry = config["users"][0]["user"]
        certificate = ClientCertificate(
            base64.b64decode(user_entry["client-certificate-data"]),
            base64.b64decode(user_entry["client-key-data"]),
        )
        trusted = cluster.certificate_authority_pem
        assert trusted is not None
        status, body = await _whoami_over_tls(
            cluster.https_url, _client_context(trusted, certificate, tmp_path)
        )
        assert status == 201
        assert body["status"]["userInfo"] == {
            "username": "frank",
            "groups": ["a", "b", "system:authenticated"],
        }
