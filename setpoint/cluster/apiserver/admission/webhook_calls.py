"""Calling one admission webhook: the AdmissionReview sent, the answer checked.

Upstream: ``admission/plugin/webhook/request/admissionreview.go`` (the review and the checks
on its answer) and ``webhook/{validating,mutating}/dispatcher.go`` (the call). A call that
cannot be made or answers nonsense raises :class:`WebhookCallError`, whose message is
upstream's ``failed calling webhook "<name>": …``; the chain then applies the webhook's
``failurePolicy``. The client is aiohttp on the server's event loop: a slow webhook holds its
request for at most ``timeoutSeconds`` and nothing else.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
import msgspec

from setpoint.cluster.apiserver.admission.webhooks import ServiceReference, Webhook

#: AdmissionReview versions this server sends, in the order it prefers them.
SUPPORTED_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
#: Bytes of a webhook's answer read at most (upstream's webhook client limit is larger; an
#: admission answer of megabytes is a broken webhook).
MAX_ANSWER_BYTES: Final = 3 * 1024 * 1024

_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder()


class WebhookCallError(Exception):
    """The webhook could not be called, or its answer is invalid (``ErrCallingWebhook``)."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f"failed calling webhook {_go_quote(webhook)}: {reason}")
        self.webhook = webhook
        self.reason = reason


class WebhookTransportError(Exception):
    """A review could not be posted, or the answer is an HTTP error (client-go's text)."""

    def __init__(self, description: str, *, called: bool = False) -> None:
        super().__init__(description)
        #: What went wrong, as client-go reports it (``Post "https://…": …``).
        self.description = description
        #: Admission prefixes a failure once the request was attempted (``failed to call
        #: webhook: …``); a client that could not be built is reported without it.
        self.called = called

    @property
    def reason(self) -> str:
        """The admission form of the failure (what follows ``failed calling webhook "x": ``)."""
        return f"failed to call webhook: {self.description}" if self.called else self.description


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(slots=True)
class WebhookAnswer:
    """The checked ``response`` of an AdmissionReview."""

    allowed: bool
    status: dict[str, Any] = field(default_factory=dict)
    #: The decoded RFC 6902 operations (None: no patch).
    patch: bytes | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where to send a review: the URL as upstream prints it, where to connect, which name
    the certificate must carry."""

    url: str
    connect_url: str
    server_name: str | None = None


def review_version(webhook: Webhook) -> str | None:
    """The first of the webhook's ``admissionReviewVersions`` this server speaks."""
    for version in webhook.review_versions:
        if version in SUPPORTED_REVIEW_VERSIONS:
            return version
    return None


def review_body(version: str, request: dict[str, Any]) -> bytes:
    """The JSON AdmissionReview of ``request`` in ``admission.k8s.io/<version>``."""
    return _ENCODER.encode(
        {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": request}
    )


def with_timeout(url: str, seconds: int) -> str:
    """``url`` with the ``timeout`` query parameter upstream adds (``?timeout=10s``)."""
    return f"{url}{'&' if '?' in url else '?'}timeout={seconds}s"


class WebhookClient:
    """Sends AdmissionReviews over HTTPS; one connection pool for every webhook."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes | None, ssl.SSLContext] = {}

    def _ssl(self, ca_bundle: bytes | None) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            if ca_bundle is None:
                context = ssl.create_default_context()
            else:
                context = ssl.create_default_context(cadata=ca_bundle.decode("ascii", "replace"))
            self._contexts[ca_bundle] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # limit=0: concurrent calls to one webhook are upstream's normal case.
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        return self._session

    async def close(self) -> None:
        """Close the connection pool."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def call(
        self, webhook: Webhook, endpoint: Endpoint, body: bytes, uid: str
    ) -> WebhookAnswer:
        """POST ``body`` to ``endpoint``; the checked answer, or :class:`WebhookCallError`."""
        try:
            payload = await self.post(endpoint, body, webhook.ca_bundle, webhook.timeout_seconds)
        except WebhookTransportError as exc:
            raise WebhookCallError(webhook.name, exc.reason) from None
        return parse_answer(webhook.name, payload, uid)

    async def post(
        self, endpoint: Endpoint, body: bytes, ca_bundle: bytes | None, timeout_seconds: int
    ) -> bytes:
        """POST a JSON review to a webhook: the answer's body (2xx only), else
        :class:`WebhookTransportError` with client-go's description of what went wrong.

        Shared by admission webhooks and CRD conversion webhooks (one pool, one TLS setup).
        """
        shown = with_timeout(endpoint.url, timeout_seconds)
        target = with_timeout(endpoint.connect_url, timeout_seconds)
        try:
            context = self._ssl(ca_bundle)
        except ssl.SSLError as exc:
            raise WebhookTransportError(f"could not get REST client: {exc}") from None
        try:
            async with asyncio.timeout(timeout_seconds):
                async with self._client().post(
                    target,
                    data=body,
                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                    ssl=context,
                    server_hostname=endpoint.server_name,
                ) as response:
                    payload = await _read_capped(response)
                    code = response.status
        except TimeoutError:
            raise WebhookTransportError(
                f'Post "{shown}": context deadline exceeded', called=True
            ) from None
        except aiohttp.ClientConnectorCertificateError as exc:
            raise WebhookTransportError(
                f'Post "{shown}": tls: failed to verify certificate: '
                f"x509: {_certificate_problem(exc)}",
                called=True,
            ) from None
        except aiohttp.ClientConnectorError as exc:
            host = urlsplit(endpoint.connect_url)
            raise WebhookTransportError(
                f'Post "{shown}": dial tcp {host.hostname}:'
                f"{host.port or 443}: connect: {_connect_problem(exc)}",
                called=True,
            ) from None
        except (aiohttp.ClientError, ssl.SSLError, OSError) as exc:
            raise WebhookTransportError(f'Post "{shown}": {exc}', called=True) from None
        if len(payload) > MAX_ANSWER_BYTES:
            raise WebhookTransportError("the response is too large", called=True)
        if not 200 <= code < 300:
            raise WebhookTransportError(_http_error(code, payload), called=True)
        return payload


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    """The whole body (read to the end, so that the connection is kept for the next call), or
    ``MAX_ANSWER_BYTES + 1`` bytes of it when it is larger."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            break
    return b"".join(chunks)


def _certificate_problem(exc: aiohttp.ClientConnectorCertificateError) -> str:
    text = str(exc.certificate_error)
    unknown = ("unable to get local issuer", "self-signed", "self signed", "signature failure")
    if any(words in text for words in unknown):
        return "certificate signed by unknown authority"
    if "hostname mismatch" in text or "IP address mismatch" in text:
        return f"certificate is not valid for the requested name ({text})"
    return text


def _connect_problem(exc: aiohttp.ClientConnectorError) -> str:
    if isinstance(exc.os_error, ConnectionRefusedError):
        return "connection refused"
    return str(exc.os_error.strerror or exc.os_error).lower()


def _http_error(code: int, payload: bytes) -> str:
    # client-go: a Status body is the error; anything else becomes a generic message.
    try:
        document = _DECODER.decode(payload)
    except msgspec.DecodeError:
        document = None
    if isinstance(document, dict) and document.get("kind") == "Status" and document.get("message"):
        return str(document["message"])
    text = payload.decode("utf-8", "replace").strip()
    return (
        f"an error on the server ({_go_quote(text[:1024])}) has prevented the request from "
        f"succeeding"
    )


def parse_answer(webhook: str, payload: bytes, uid: str) -> WebhookAnswer:
    """The ``response`` of an AdmissionReview answer, checked as ``VerifyAdmissionResponse``."""
    try:
        document = _DECODER.decode(payload)
    except msgspec.DecodeError as exc:
        raise WebhookCallError(webhook, f"failed to call webhook: {exc}") from None
    if not isinstance(document, dict):
        raise WebhookCallError(webhook, "received invalid webhook response: not an object")
    api_version = document.get("apiVersion")
    if document.get("kind") != "AdmissionReview" or api_version not in (
        "admission.k8s.io/v1",
        "admission.k8s.io/v1beta1",
    ):
        raise WebhookCallError(
            webhook,
            "received invalid webhook response: expected webhook response of "
            f"admission.k8s.io/v1, Kind=AdmissionReview, got {api_version}, "
            f"Kind={document.get('kind')}",
        )
    response = document.get("response")
    if not isinstance(response, dict):
        raise WebhookCallError(webhook, "received invalid webhook response: response was absent")
    got = response.get("uid", "")
    if got != uid:
        raise WebhookCallError(
            webhook,
            f"received invalid webhook response: expected response.uid={_go_quote(uid)}, "
            f"got {_go_quote(str(got))}",
        )
    patch = response.get("patch")
    patch_type = response.get("patchType")
    patch_bytes: bytes | None = None
    if patch is not None:
        if patch_type is None:
            raise WebhookCallError(
                webhook,
                "received invalid webhook response: webhook returned response.patch but not "
                "response.patchType",
            )
        if patch_type != "JSONPatch":
            raise WebhookCallError(
                webhook,
                "received invalid webhook response: webhook returned invalid "
                f"response.patchType of {_go_quote(str(patch_type))}",
            )
        try:
            patch_bytes = base64.b64decode(str(patch), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise WebhookCallError(webhook, f"received invalid webhook response: {exc}") from None
    elif patch_type is not None and api_version == "admission.k8s.io/v1":
        raise WebhookCallError(
            webhook,
            "received invalid webhook response: webhook returned response.patchType but not "
            "response.patch",
        )
    warnings = response.get("warnings")
    annotations = response.get("auditAnnotations")
    status = response.get("status")
    return WebhookAnswer(
        allowed=response.get("allowed") is True,
        status=status if isinstance(status, dict) else {},
        patch=patch_bytes,
        warnings=[w for w in warnings if isinstance(w, str)] if isinstance(warnings, list) else [],
        audit_annotations=(
            {str(k): str(v) for k, v in annotations.items()}
            if isinstance(annotations, dict)
            else {}
        ),
    )


def service_endpoint(reference: ServiceReference, address: str, port: int) -> Endpoint:
    """The endpoint of a webhook served behind a Service, reached at ``address:port``.

    The certificate must name the service (``<name>.<namespace>.svc``), as upstream checks.
    """
    host = f"{reference.name}.{reference.namespace}.svc"
    path = reference.path or "/"
    return Endpoint(
        url=f"https://{host}:{reference.port}{path}",
        connect_url=f"https://{address}:{port}{path}",
        server_name=host,
    )
