"""Fixtures of the composite tests: the Metacontroller CRDs, a parent CRD, a hook server and a
running `Metacontroller` confined to the test's namespace and its own controllers."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import json
import ssl
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import setpoint
from setpoint.client import Client
from setpoint.composite import Metacontroller, metacontroller_crds
from setpoint.testing import install_crds

GROUP = "composite.setpoint.dev"
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

THING_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"things.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {
            "kind": "Thing",
            "listKind": "ThingList",
            "plural": "things",
            "singular": "thing",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": _OPEN, "status": _OPEN},
                    }
                },
            }
        ],
    },
}

#: A hook handler: the request JSON -> the answer (a dict, or (HTTP status, body bytes)).
Handler = Callable[[dict[str, Any]], Any]


@dataclass
class HookServer:
    """An HTTP hook server on a free loopback port; records every request per path."""

    url: str = ""
    port: int = 0
    handlers: dict[str, Handler] = field(default_factory=dict)
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    headers: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.calls.setdefault(request.path, []).append(body)
        self.headers.setdefault(request.path, []).append(dict(request.headers))
        answer = self.handlers[request.path](body)
        if asyncio.iscoroutine(answer):
            answer = await answer
        if isinstance(answer, web.StreamResponse):
            return answer
        if isinstance(answer, tuple):
            status, raw = answer
            return web.Response(status=status, body=raw)
        return web.Response(body=json.dumps(answer), content_type="application/json")


@contextlib.asynccontextmanager
async def serving_hooks(ssl_context: ssl.SSLContext | None = None) -> AsyncIterator[HookServer]:
    """A HookServer on a free loopback port (HTTPS with ``ssl_context``) for the block."""
    server = HookServer()
    app = web.Application()
    app.router.add_post("/{path:.*}", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await site.start()
    server.port = runner.addresses[0][1]
    server.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{server.port}"
    try:
        yield server
    finally:
        await runner.cleanup()


@pytest.fixture
async def hooks() -> AsyncIterator[HookServer]:
    async with serving_hooks() as server:
        yield server


@pytest.fixture
async def crds(client: Client) -> None:
    await install_crds(client, *metacontroller_crds(), THING_CRD)


@dataclass
class RunningMetacontroller:
    operator: setpoint.Operator
    runner: Metacontroller
    label: dict[str, str]
    client: Client

    async def declare(self, kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Create a CompositeController/DecoratorController run by this test's instance only."""
        obj = {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": kind,
            "metadata": {"name": name, "labels": self.label},
            "spec": spec,
        }
        created: dict[str, Any] = await self.client.create(obj)
        return created

    def stats(self, kind: str, name: str) -> Any:
        (stats,) = self.runner.sync_stats(kind, name)
        return stats


@pytest.fixture
async def metacontroller(
    client: Client, kubeconfig: str, namespace: str, crds: None
) -> AsyncIterator[RunningMetacontroller]:
    label = {"composite-test": uuid.uuid4().hex[:12]}
    operator = setpoint.Operator("metacontroller", kubeconfig=kubeconfig, namespaces=[namespace])
    runner = Metacontroller(
        operator, target_label_selector=f"composite-test={label['composite-test']}"
    )
    operator.add(runner)
    try:
        async with operator:
            yield RunningMetacontroller(operator, runner, label, client)
    finally:
        for kind in ("CompositeController", "DecoratorController"):
            for obj in await client.list("metacontroller.k8s.io/v1alpha1", kind):
                if (obj["metadata"].get("labels") or {}) == label:
                    await client.delete(obj, missing_ok=True)


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _issue(
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    subject: str,
    *,
    ca: bool = False,
    ip: str | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for ``subject`` signed by ``issuer_key`` (self-signed when it is the
    subject's own key), valid for an hour."""
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    key = issuer_key if ca else ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name if ca else issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
    )
    if ca:
        builder = builder.add_extension(
            x509.BasicConstraints(ca=True, path_length=None), critical=True
        )
    if ip is not None:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256()), key


def _certificate_authority(name: str) -> tuple[str, x509.Name, ec.EllipticCurvePrivateKey]:
    """A new CA: its PEM, name and key."""
    key = ec.generate_private_key(ec.SECP256R1())
    certificate, _ = _issue(x509.Name([]), key, name, ca=True)
    return certificate.public_bytes(serialization.Encoding.PEM).decode(), certificate.subject, key


def self_signed_ca_and_server(host: str = "127.0.0.1") -> tuple[str, ssl.SSLContext]:
    """A CA (PEM) and a server SSL context with a certificate for ``host`` that it signed."""
    ca_pem, ca_name, ca_key = _certificate_authority("composite-test-ca")
    cert, key = _issue(ca_name, ca_key, host, ip=host)
    directory = Path(tempfile.mkdtemp(prefix="composite-tls-"))
    (directory / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(_pem(key))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    return ca_pem, context


def client_certificate() -> tuple[str, str, str]:
    """A CA (PEM), and a client certificate it signed and its key (PEM), for mutual TLS."""
    ca_pem, ca_name, ca_key = _certificate_authority("composite-client-ca")
    cert, key = _issue(ca_name, ca_key, "metacontroller")
    return ca_pem, cert.public_bytes(serialization.Encoding.PEM).decode(), _pem(key).decode()


@pytest.fixture
async def tls_hooks() -> AsyncIterator[tuple[HookServer, str]]:
    """A hook server over HTTPS, and the PEM of the CA that signed its certificate."""
    ca_pem, context = self_signed_ca_and_server()
    async with serving_hooks(context) as server:
        yield server, ca_pem
