"""Webhooks in local development: a CA and serving certificate made on the spot, and the
operator's configurations registered against the cluster with ``clientConfig.url`` pointing
at this process — removed again on exit, so no cluster is left with a dead ``Fail`` webhook.

This is what ``setpoint run --webhooks-local`` does (``Manager(webhooks_local=True)``): no
cert-manager, no ``ENABLE_WEBHOOKS=false`` (kubebuilder #1501, #2837, #4477). The CRDs of the
kinds the operator converts get ``spec.conversion`` pointing here too, put back to
``strategy: None`` on exit.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import logging
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from setpoint.client.client import Client
from setpoint.client.errors import NotFound
from setpoint.webhook.configurations import (
    ADMISSION_API_VERSION,
    WebhookDeclaration,
    webhook_configurations,
)
from setpoint.webhook.paths import CONVERT_PATH

log = logging.getLogger(__name__)

#: Local certificates are made per run; a day is longer than any development session.
CERTIFICATE_VALIDITY: Final = datetime.timedelta(days=1)
#: Field manager of the registered configurations.
FIELD_MANAGER: Final = "setpoint-webhooks-local"
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_local_certificates(directory: Path) -> bytes:
    """Write ``tls.crt``/``tls.key`` for 127.0.0.1 and localhost into ``directory``, signed by
    a new CA; return the CA's PEM (the configurations' ``caBundle``)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "setpoint-webhooks-local-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + CERTIFICATE_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + CERTIFICATE_VALIDITY)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path = directory / "tls.key"
    key_path.touch(mode=0o600)
    key_path.write_bytes(_pem(key))
    return ca.public_bytes(serialization.Encoding.PEM)


def local_certificate_directory(name: str) -> Path:
    """``<tmp>/setpoint-webhooks-<name>``: where a local run keeps its certificates."""
    return Path(tempfile.gettempdir()) / f"setpoint-webhooks-{name}"


class LocalWebhookRegistration:
    """Registers an operator's webhook configurations for a server on 127.0.0.1:``port``."""

    def __init__(
        self,
        client: Client,
        name: str,
        declarations: Iterable[WebhookDeclaration],
        port: int,
        ca_pem: bytes,
        converted_crds: Iterable[str] = (),
    ) -> None:
        self._client = client
        self._name = name
        self._declarations = list(declarations)
        self._port = port
        self._bundle = base64.b64encode(ca_pem).decode("ascii")
        self._converted_crds = list(converted_crds)
        self.registered: list[tuple[str, str]] = []
        #: The CRDs whose conversion was pointed at this process (and is put back on exit).
        self.converting: list[str] = []

    def _client_config(self, path: str) -> dict[str, Any]:
        return {"url": f"https://127.0.0.1:{self._port}{path}", "caBundle": self._bundle}

    async def register(self) -> list[dict[str, Any]]:
        """Apply the configurations; the applied objects."""
        plurals: dict[tuple[str, str], str] = {}
        for declaration in self._declarations:
            if declaration.kind:
                key = (declaration.api_version, declaration.kind)
                info = await self._client.mapper.resource_for(*key)
                plurals[key] = info.resource
        configurations = webhook_configurations(
            self._name,
            self._declarations,
            lambda api_version, kind: plurals[(api_version, kind)],
            self._client_config,
        )
        applied = []
        for configuration in configurations:
            applied.append(
                await self._client.apply(configuration, field_manager=FIELD_MANAGER, force=True)
            )
            self.registered.append((configuration["kind"], configuration["metadata"]["name"]))
            log.info(
                "registered %s %s for https://127.0.0.1:%d",
                configuration["kind"],
                configuration["metadata"]["name"],
                self._port,
            )
        for crd in self._converted_crds:
            await self._set_conversion(crd, self._webhook_conversion())
        return applied

    def _webhook_conversion(self) -> dict[str, Any]:
        return {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": self._client_config(CONVERT_PATH),
                "conversionReviewVersions": ["v1"],
            },
        }

    async def _set_conversion(self, crd: str, conversion: dict[str, Any]) -> None:
        """Merge-patch ``spec.conversion`` of the CRD ``crd`` (absent: said, and skipped)."""
        try:
            await self._client.patch(
                CRD_API_VERSION,
                "CustomResourceDefinition",
                crd,
                {"spec": {"conversion": conversion}},
            )
        except NotFound:
            log.warning("CRD %s is not installed: its conversion webhook is not registered", crd)
            return
        if conversion.get("strategy") == "Webhook":
            self.converting.append(crd)
            log.info(
                "CRD %s converts through https://127.0.0.1:%d%s", crd, self._port, CONVERT_PATH
            )
        else:
            log.info("CRD %s converts no more through this process", crd)

    async def unregister(self) -> None:
        """Delete what :meth:`register` applied (already gone is fine), and give the CRDs it
        pointed here back ``strategy: None`` (a conversion webhook that is gone breaks every
        read of the kind in another version)."""
        for kind, name in reversed(self.registered):
            await self._client.delete(ADMISSION_API_VERSION, kind, name, missing_ok=True)
            log.info("removed %s %s", kind, name)
        self.registered.clear()
        converting, self.converting = self.converting, []
        for crd in converting:
            await self._set_conversion(crd, {"strategy": "None", "webhook": None})
