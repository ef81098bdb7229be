"""A two-version CRD with webhook conversion and the webhooks that convert it, for the tests
of CRD conversion in the local cluster.

kubebuilder's multi-version tutorial: ``spec.schedule`` is a cron string in ``v1`` and an
object of fields in ``v2``. Two converters serve it: the runtime's own
(:class:`setpoint.webhook.WebhookServer` with a :class:`setpoint.webhook.Converter`) and a raw
aiohttp handler the test scripts (it counts reviews and can answer badly).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from setpoint.cluster.apiserver.http.serving_certificate import (
    CertificateAuthority,
    ServingCertificate,
    generate_serving_certificate,
)
from setpoint.webhook import Converter, WebhookServer
from tests.cluster.admission.webhook_server import serving_certificate
from tests.cluster.raw_api import RawAPI
from tests.webhook.cronjob_versions import GROUP, CronJobV1, CronJobV2

CRD_NAME = f"cronjobs.{GROUP}"
CRD_PATH = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"

_V1_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"schedule": {"type": "string"}, "suspend": {"type": "boolean"}},
        }
    },
}
_FIELD = {"type": "string"}
_V2_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "schedule": {
                    "type": "object",
                    "properties": dict.fromkeys(
                        ("minute", "hour", "dayOfMonth", "month", "dayOfWeek"), _FIELD
                    ),
                },
                "suspend": {"type": "boolean"},
            },
        }
    },
}


def cronjob_crd(
    client_config: dict[str, Any] | None,
    *,
    storage: str = "v1",
    review_versions: tuple[str, ...] = ("v1",),
) -> dict[str, Any]:
    """The CRD: v1 and v2 served, ``storage`` stored, converted by ``client_config``'s webhook
    (``strategy: None`` when it is None)."""
    conversion: dict[str, Any] = {"strategy": "None"}
    if client_config is not None:
        conversion = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": client_config,
                "conversionReviewVersions": list(review_versions),
            },
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "cronjobs", "singular": "cronjob", "kind": "CronJob"},
            "conversion": conversion,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": storage == "v1",
                    "schema": {"openAPIV3Schema": _V1_SCHEMA},
                    "subresources": {"status": {}},
                },
                {
                    "name": "v2",
                    "served": True,
                    "storage": storage == "v2",
                    "schema": {"openAPIV3Schema": _V2_SCHEMA},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Minute", "type": "string", "jsonPath": ".spec.schedule.minute"}
                    ],
                },
            ],
        },
    }


async def install_crd(api: RawAPI, crd: dict[str, Any], *, fresh: bool = False) -> dict[str, Any]:
    """Create the CRD, or replace the one there (``fresh``: delete it and its objects first).

    The answer is the stored CRD; its endpoints are served when the write returns.
    """
    current = await api.request("GET", CRD_PATH)
    if current.status == 200 and fresh:
        await api.request("DELETE", CRD_PATH)
        current = await api.request("GET", CRD_PATH)
        while current.status == 200:  # its custom resources are deleted first
            current = await api.request("GET", CRD_PATH)
    if current.status == 404:
        reply = await api.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
        )
        assert reply.status == 201, reply.body
        return dict(reply.body)
    crd = {
        **crd,
        "metadata": {
            **crd["metadata"],
            "resourceVersion": current.body["metadata"]["resourceVersion"],
        },
    }
    reply = await api.request("PUT", CRD_PATH, crd)
    assert reply.status == 200, reply.body
    return dict(reply.body)


def cronjobs_path(version: str, namespace: str, name: str = "") -> str:
    """The URL path of the cronjobs (or one) in ``version``."""
    path = f"/apis/{GROUP}/{version}/namespaces/{namespace}/cronjobs"
    return f"{path}/{name}" if name else path


def cronjob_v1(name: str, schedule: str, **metadata: Any) -> dict[str, Any]:
    """A v1 CronJob."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronJob",
        "metadata": {"name": name, **metadata},
        "spec": {"schedule": schedule},
    }


def cronjob_v2(name: str, minute: str, hour: str = "*", **metadata: Any) -> dict[str, Any]:
    """A v2 CronJob (``schedule`` as fields)."""
    schedule = {"minute": minute, "hour": hour, "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}
    return {
        "apiVersion": f"{GROUP}/v2",
        "kind": "CronJob",
        "metadata": {"name": name, **metadata},
        "spec": {"schedule": schedule},
    }


def write_certificate(directory: Path, certificate: ServingCertificate) -> None:
    """``tls.crt``/``tls.key`` in ``directory`` (where the runtime's server reads them)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(certificate.certificate_pem)
    (directory / "tls.key").write_bytes(certificate.key_pem)


@asynccontextmanager
async def runtime_converter(directory: Path) -> AsyncIterator[dict[str, Any]]:
    """The runtime's webhook server serving ``/convert`` with the tutorial's Converter; the
    ``clientConfig`` that reaches it."""
    certificate = generate_serving_certificate()
    write_certificate(directory, certificate)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=directory)
    server.register_conversion("/convert", Converter(CronJobV1, [CronJobV2]))
    await server.start()
    try:
        yield {
            "url": f"https://127.0.0.1:{server.port}/convert",
            "caBundle": base64.b64encode(certificate.trusted_pem).decode(),
        }
    finally:
        await server.stop()


def convert_schedule(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """The tutorial's conversion, written out (for the raw handler)."""
    spec = dict(obj.get("spec") or {})
    schedule = spec.get("schedule")
    if desired.endswith("/v2") and isinstance(schedule, str):
        parts = schedule.split()
        names = ("minute", "hour", "dayOfMonth", "month", "dayOfWeek")
        spec["schedule"] = dict(zip(names, parts, strict=True))
    elif desired.endswith("/v1") and isinstance(schedule, dict):
        names = ("minute", "hour", "dayOfMonth", "month", "dayOfWeek")
        spec["schedule"] = " ".join(schedule.get(n) or "*" for n in names)
    return {**obj, "apiVersion": desired, "spec": spec}


#: Given the ConversionReview received, the JSON document answered.
Answerer = Callable[[dict[str, Any]], Any]


def converting(review: dict[str, Any]) -> dict[str, Any]:
    """A correct answer: every object converted, in order."""
    request = review["request"]
    return {
        "apiVersion": review["apiVersion"],
        "kind": "ConversionReview",
        "response": {
            "uid": request["uid"],
            "result": {"status": "Success"},
            "convertedObjects": [
                convert_schedule(obj, request["desiredAPIVersion"]) for obj in request["objects"]
            ],
        },
    }


@dataclass
class RawConverter:
    """A raw aiohttp HTTPS conversion webhook: ``answer`` decides each answer; ``reviews``
    holds every ConversionReview received."""

    authority: CertificateAuthority
    port: int = 0
    answer: Answerer = converting
    reviews: list[dict[str, Any]] = field(default_factory=list)

    @property
    def client_config(self) -> dict[str, Any]:
        """The ``clientConfig`` that reaches ``/convert``."""
        return {
            "url": f"https://127.0.0.1:{self.port}/convert",
            "caBundle": base64.b64encode(self.authority.certificate_pem).decode(),
        }

    async def _handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review)
        return web.Response(body=json.dumps(self.answer(review)), content_type="application/json")


@asynccontextmanager
async def raw_converter(dns_names: tuple[str, ...] = ()) -> AsyncIterator[RawConverter]:
    """A started :class:`RawConverter` on 127.0.0.1 (its certificate also valid for
    ``dns_names``: a Service's ``<name>.<namespace>.svc``)."""
    authority = CertificateAuthority.generate()
    certificate = serving_certificate(authority, dns_names)
    converter = RawConverter(authority)
    app = web.Application()
    app.router.add_post("/convert", converter._handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=certificate.server_context())
    await site.start()
    converter.port = runner.addresses[0][1]
    try:
        yield converter
    finally:
        await runner.cleanup()
