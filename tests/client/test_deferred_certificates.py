"""aiohttp's default TLS contexts, made while setpoint imports aiohttp, load the default CA
certificates on first use instead of at import: verification is unchanged."""

from __future__ import annotations

import base64
import os
import ssl
import subprocess
import sys
from pathlib import Path

import yaml

from setpoint.api.deferred_certificates import (
    DeferredCertificatesContext,
    deferred_default_certificates,
)
from setpoint.testing.background_cluster import BackgroundCluster

CHECK = """
import asyncio, sys
import setpoint.client.transport  # imports aiohttp with the deferral
import aiohttp, aiohttp.connector

async def main() -> None:
    context = aiohttp.connector._SSL_CONTEXT_VERIFIED
    print(type(context).__name__, context.__dict__.get("_certificates_pending"))
    async with aiohttp.ClientSession() as session:  # aiohttp's default verified context
        try:
            async with session.get(sys.argv[1] + "/version") as response:
                print("handshake ok", response.status)
        except aiohttp.ClientConnectorCertificateError as error:
            print("certificate refused", error)
    print(context.__dict__.get("_certificates_pending"))

asyncio.run(main())
"""


def run_check(url: str, ca_file: Path | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    if ca_file is not None:
        env["SSL_CERT_FILE"] = str(ca_file)  # the "system" CAs, as OpenSSL reads them
    completed = subprocess.run(
        [sys.executable, "-c", CHECK, url],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout.splitlines()


def test_default_contexts_verify_with_the_default_certificates_loaded_on_first_use(
    local_cluster: BackgroundCluster, tmp_path: Path
) -> None:
    kubeconfig = yaml.safe_load(local_cluster.kubeconfig_path.read_text())
    ca = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"])
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca)

    trusted = run_check(local_cluster.https_url, ca_file)
    assert trusted[0] == "DeferredCertificatesContext True"  # nothing loaded at import
    assert trusted[1].startswith("handshake ok")  # loaded at the handshake, and trusted
    assert trusted[2] == "False"

    untrusted = run_check(local_cluster.https_url, tmp_path / "no-such-file.pem")
    assert untrusted[1].startswith("certificate refused")  # still verifies


def test_contexts_made_under_the_deferral_load_the_same_certificates() -> None:
    with deferred_default_certificates():
        deferred = ssl.create_default_context()
    assert isinstance(deferred, DeferredCertificatesContext)
    assert isinstance(deferred, ssl.SSLContext)
    assert deferred.verify_mode == ssl.CERT_REQUIRED and deferred.check_hostname
    assert deferred.cert_store_stats() == ssl.create_default_context().cert_store_stats()
    assert deferred.get_ca_certs() == ssl.create_default_context().get_ca_certs()
    # Outside the block, the ssl module is as it was.
    assert "set_default_verify_paths" not in ssl.SSLContext.__dict__
    assert type(ssl.create_default_context()) is ssl.SSLContext
