"""Webhooks in local development: a CA and serving certificate made on the spot, and the
operator's configurations registered against the cluster with ``clientConfig.url`` pointing
at this process — removed again on exit, so no cluster is left with a dead ``Fail`` webhook.

Conversion too: the CRD of each kind the operator converts gets ``spec.conversion`` set to
this process's ``/convert`` (``strategy: Webhook``, the local CA as ``caBundle``) while it
runs, and its previous ``spec.conversion`` back on exit — a CRD left pointing at a stopped
converter would break every read of another version.

This is what ``setpoint run --webhooks-local`` does (``Manager(webhooks_local=True)``): no
cert-manager, no ``ENABLE_WEBHOOKS=false`` (kubebuilder #1501, #2837, #4477).
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
from setpoint.client.errors import NoKindMatch, NotFound
from setpoint.webhook.configurations import (
    ADMISSION_API_VERSION,
    WebhookDeclaration,
    webhook_configurations,
)

log = logging.getLogger(__name__)

#: Local certificates are made per run; a day is longer than any development session.
CERTIFICATE_VALIDITY: Final = datetime.timedelta(days=1)
#: Field manager of the registered configurations.
FIELD_MANAGER: Final = "setpoint-webhooks-local"
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
CRD_KIND: Final = "CustomResourceDefinition"
#: The ConversionReview versions the runtime's ``/convert`` answers, as declared to the CRD.
CONVERSION_REVIEW_VERSIONS: Final = ("v1",)


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
        conversions: Iterable[tuple[str, str, str]] = (),
    ) -> None:
        """``conversions``: ``(path, apiVersion, kind)`` of each kind converted at ``path``."""
        self._client = client
        self._name = name
        self._declarations = list(declarations)
        self._port = port
        self._bundle = base64.b64encode(ca_pem).decode("ascii")
        self._conversions = list(conversions)
        self.registered: list[tuple[str, str]] = []
        #: CRDs pointed at this process, with the ``spec.conversion`` they had before.
        self.converted: list[tuple[str, dict[str, Any]]] = []

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
        for path, api_version, kind in self._conversions:
            await self._point_crd_at(path, api_version, kind)
        return applied

    async def _point_crd_at(self, path: str, api_version: str, kind: str) -> None:
        """Set the CRD of ``kind`` to convert through ``path`` of this process."""
        try:
            info = await self._client.mapper.resource_for(api_version, kind)
        except NoKindMatch:
            log.warning(
                "no CRD serves %s %s: its conversion webhook is not registered", api_version, kind
            )
            return
        group = api_version.rpartition("/")[0]
        name = f"{info.resource}.{group}"
        crd = await self._client.get(CRD_API_VERSION, CRD_KIND, name)
        before = dict((crd.get("spec") or {}).get("conversion") or {"strategy": "None"})
        stanza = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": self._client_config(path),
                "conversionReviewVersions": list(CONVERSION_REVIEW_VERSIONS),
            },
        }
        await self._client.patch(
            CRD_API_VERSION,
            CRD_KIND,
            name,
            {"spec": {"conversion": stanza}},
            patch_type="merge",
            field_manager=FIELD_MANAGER,
        )
        self.converted.append((name, before))
        log.info("CRD %s converts through https://127.0.0.1:%d%s", name, self._port, path)

    async def unregister(self) -> None:
        """Delete what :meth:`register` applied (already gone is fine), and give the CRDs
        their previous ``spec.conversion``."""
        for name, before in reversed(self.converted):
            restored = {**before, "webhook": before.get("webhook")}  # null removes ours
            try:
                await self._client.patch(
                    CRD_API_VERSION,
                    CRD_KIND,
                    name,
                    {"spec": {"conversion": restored}},
                    patch_type="merge",
                    field_manager=FIELD_MANAGER,
                )
            except NotFound:
                pass
            log.info("CRD %s conversion restored (%s)", name, before.get("strategy"))
        self.converted.clear()
        for kind, name in reversed(self.registered):
            await self._client.delete(ADMISSION_API_VERSION, kind, name, missing_ok=True)
            log.info("removed %s %s", kind, name)
        self.registered.clear()
