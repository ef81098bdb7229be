"""A server restarted on the same data directory is the same cluster to its clients."""

from __future__ import annotations

import base64
import ssl
import stat
from pathlib import Path

import aiohttp
import pytest
import yaml

from setpoint.cluster.identity import IdentityError, load_or_create_identity
from setpoint.cluster.local_cluster import LocalCluster


async def _namespaces(url: str, token: str, authority_pem: bytes) -> int:
    context = ssl.create_default_context(cadata=authority_pem.decode())
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.get(url + "/api/v1/namespaces", ssl=context) as response,
    ):
        return response.status


async def test_restart_keeps_token_authority_and_ports(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    async with LocalCluster(
        in_memory=False, data_dir=tmp_path / "data", kubeconfig_path=kubeconfig
    ) as first:
        token, https_url = first.token, first.https_url
        authority = first.certificate_authority_pem
        assert authority is not None
        first_config = kubeconfig.read_text()
    async with LocalCluster(
        in_memory=False, data_dir=tmp_path / "data", kubeconfig_path=kubeconfig
    ) as second:
        assert second.token == token
        assert second.certificate_authority_pem == authority
        assert second.https_url == https_url  # the old port was free again
        assert kubeconfig.read_text() == first_config
        # A client configured against the first server works, unchanged, against the second.
        assert await _namespaces(https_url, token, authority) == 200


async def test_identity_files_are_private(tmp_path: Path) -> None:
    async with LocalCluster(in_memory=False, data_dir=tmp_path):
        pass
    assert stat.S_IMODE((tmp_path / "pki").stat().st_mode) == 0o700
    for name in (
        "admin.token",
        "serving.json",
        "pki/ca.crt",
        "pki/ca.key",
        "pki/apiserver.crt",
        "pki/apiserver.key",
        "pki/sa.key",
    ):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


async def test_in_memory_clusters_are_new_each_time() -> None:
    async with LocalCluster(in_memory=True) as first:
        token, authority = first.token, first.certificate_authority_pem
    async with LocalCluster(in_memory=True) as second:
        assert second.token != token
        assert second.certificate_authority_pem != authority


async def test_kubeconfig_trusts_the_authority_not_the_leaf(tmp_path: Path) -> None:
    async with LocalCluster(
        in_memory=False, data_dir=tmp_path, kubeconfig_path=tmp_path / "kc"
    ) as cluster:
        config = yaml.safe_load((tmp_path / "kc").read_text())
        trusted = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
        assert trusted == (tmp_path / "pki" / "ca.crt").read_bytes()
        assert trusted == cluster.certificate_authority_pem


def test_a_missing_serving_certificate_is_reissued_by_the_same_authority(tmp_path: Path) -> None:
    first = load_or_create_identity(tmp_path)
    (tmp_path / "pki" / "apiserver.crt").unlink()
    second = load_or_create_identity(tmp_path)
    assert second.certificate.certificate_pem != first.certificate.certificate_pem
    assert second.certificate.trusted_pem == first.certificate.trusted_pem
    assert second.token == first.token


def test_unreadable_certificates_are_a_clear_error(tmp_path: Path) -> None:
    load_or_create_identity(tmp_path)
    (tmp_path / "pki" / "apiserver.crt").write_text("not a certificate")
    with pytest.raises(IdentityError, match="remove that directory to make new ones"):
        load_or_create_identity(tmp_path)
