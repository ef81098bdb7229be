"""A started :class:`WebhookServer` with a certificate from a test CA, and a client trusting it."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from setpoint.cluster.apiserver.http.serving_certificate import (
    ServingCertificate,
    generate_serving_certificate,
)
from setpoint.webhook import WebhookServer


def write_certificate(directory: Path) -> ServingCertificate:
    """A fresh self-signed certificate for 127.0.0.1 as ``tls.crt``/``tls.key`` in ``directory``."""
    certificate = generate_serving_certificate()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(certificate.certificate_pem)
    (directory / "tls.key").write_bytes(certificate.key_pem)
    return certificate


def review(uid: str = "u1", version: str = "v1", **request: Any) -> dict[str, Any]:
    """An AdmissionReview request."""
    return {
        "apiVersion": f"admission.k8s.io/{version}",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", **request},
    }


class Caller:
    """POSTs to the server over HTTPS, trusting its certificate."""

    def __init__(self, server: WebhookServer, certificate: ServingCertificate) -> None:
        self.server = server
        self.context = ssl.create_default_context(cadata=certificate.trusted_pem.decode())

    async def post(
        self,
        path: str,
        body: Any,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        data = raw if raw is not None else json.dumps(body).encode()
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                f"https://127.0.0.1:{self.server.port}{path}",
                data=data,
                headers={"Content-Type": content_type},
                ssl=self.context,
            ) as response,
        ):
            text = await response.text()
            return response.status, json.loads(text) if text.startswith("{") else text


@asynccontextmanager
async def serving(server: WebhookServer, certificate: ServingCertificate) -> AsyncIterator[Caller]:
    """``server`` started (and stopped after)."""
    await server.start()
    try:
        yield Caller(server, certificate)
    finally:
        await server.stop()
