"""A scriptable HTTPS admission webhook for the tests: each path answers as a test says.

Runs on the test's event loop; the local cluster (on its own thread) calls it over real TLS
with a certificate from a test CA, which the configurations carry as their ``caBundle``.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from setpoint.cluster.apiserver.http.serving_certificate import (
    CertificateAuthority,
    ServingCertificate,
)

#: Given the AdmissionReview ``request``, the ``response`` fields (uid is added).
Responder = Callable[[dict[str, Any]], Any]


def allow(**extra: Any) -> Responder:
    """A responder that allows, with ``extra`` response fields."""
    return lambda request: {"allowed": True, **extra}


def deny(message: str, code: int = 403, reason: str = "") -> Responder:
    """A responder that denies with ``message``."""
    status: dict[str, Any] = {"code": code, "message": message}
    if reason:
        status["reason"] = reason
    return lambda request: {"allowed": False, "status": status}


def patch(*operations: dict[str, Any]) -> Responder:
    """A responder that allows with a JSON patch of ``operations``."""
    encoded = base64.b64encode(json.dumps(list(operations)).encode()).decode()
    return lambda request: {"allowed": True, "patchType": "JSONPatch", "patch": encoded}


@dataclass
class WebhookServer:
    """The server: ``responders`` by path; every review received, by path."""

    authority: CertificateAuthority
    port: int = 0
    responders: dict[str, Responder] = field(default_factory=dict)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    raw: dict[str, bytes] = field(default_factory=dict)
    #: The client address of each review received, in order (a kept connection keeps it).
    peers: list[Any] = field(default_factory=list)

    @property
    def ca_bundle(self) -> str:
        """The base64 PEM of the CA that signed the serving certificate."""
        return base64.b64encode(self.authority.certificate_pem).decode()

    def url(self, path: str) -> str:
        """The HTTPS URL of ``path``."""
        return f"https://127.0.0.1:{self.port}{path}"

    def client_config(self, path: str) -> dict[str, Any]:
        """A ``clientConfig`` with the URL of ``path`` and the CA bundle."""
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def requests(self, path: str) -> list[dict[str, Any]]:
        """The AdmissionReview requests ``path`` received."""
        return [review["request"] for review in self.received.get(path, [])]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in self.raw:
            return web.Response(body=self.raw[path], content_type="application/json")
        review = await request.json()
        self.received.setdefault(path, []).append(review)
        self.peers.append(
            request.transport.get_extra_info("peername") if request.transport else None
        )
        responder = self.responders.get(path, allow())
        answer = responder(review["request"])
        if asyncio.iscoroutine(answer):
            answer = await answer
        response = {"uid": review["request"]["uid"], **answer}
        return web.json_response(
            {"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}
        )


def serving_certificate(
    authority: CertificateAuthority, dns_names: tuple[str, ...]
) -> ServingCertificate:
    """A certificate from ``authority`` for 127.0.0.1 and ``dns_names`` (a Service's
    ``<name>.<namespace>.svc``, say)."""
    key = ec.generate_private_key(ec.SECP256R1())
    issuer = x509.load_pem_x509_certificate(authority.certificate_pem)
    authority_key = serialization.load_pem_private_key(authority.key_pem, None)
    assert isinstance(authority_key, ec.EllipticCurvePrivateKey)
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    names.extend(x509.DNSName(name) for name in dns_names)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook")]))
        .issuer_name(issuer.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(authority_key, hashes.SHA256())
    )
    return ServingCertificate(
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        authority.certificate_pem,
    )


@asynccontextmanager
async def webhook_server(dns_names: tuple[str, ...] = ()) -> AsyncIterator[WebhookServer]:
    """A started :class:`WebhookServer` on 127.0.0.1 (any free port), its certificate valid
    for 127.0.0.1 and ``dns_names``."""
    authority = CertificateAuthority.generate()
    certificate = serving_certificate(authority, dns_names)
    server = WebhookServer(authority)
    app = web.Application()
    app.router.add_post("/{tail:.*}", server._handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=certificate.server_context())
    await site.start()
    server.port = runner.addresses[0][1]
    try:
        yield server
    finally:
        await runner.cleanup()
