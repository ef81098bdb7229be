"""The HTTPS server of an operator's webhooks (controller-runtime's ``webhook.Server``).

Listens on port 9443 by default and serves each registered handler at its path. It reads the
serving certificate from ``<tmp>/k8s-webhook-server/serving-certs/tls.crt|tls.key`` unless
told otherwise, and reloads it when the files change. Each request: at most 7 MiB of JSON
(controller-runtime's limit), an AdmissionReview answered in its own version, bounded by the
``timeout`` query parameter the API server adds. Metrics carry controller-runtime's names.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import msgspec
from aiohttp import web
from prometheus_client import Counter, Gauge, Histogram

from setpoint.client.metrics import REGISTRY
from setpoint.webhook.certificates import (
    RELOAD_INTERVAL_SECONDS,
    CertificateWatcher,
    default_certificate_directory,
)
from setpoint.webhook.conversion import Converter, MalformedConversionReview
from setpoint.webhook.handlers import AdmissionHandler, one_line
from setpoint.webhook.review import AdmissionRequest, AdmissionResponse, Denied, MalformedReview

log = logging.getLogger(__name__)

#: kubebuilder's webhook port.
DEFAULT_PORT: Final = 9443
#: controller-runtime reads at most this much of a review (``maxRequestSize``).
MAX_REQUEST_BYTES: Final = 7 * 1024 * 1024
#: Answer before the API server gives up when it sent no ``timeout`` (its default is 10 s).
DEFAULT_TIMEOUT_SECONDS: Final = 10.0
_DECODE: Final = msgspec.json.Decoder().decode
_ENCODE: Final = msgspec.json.Encoder().encode
_DURATION: Final = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m)$")
_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0}

REQUESTS_TOTAL = Counter(
    "controller_runtime_webhook_requests_total",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"],
    registry=REGISTRY,
)
LATENCY_SECONDS = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests",
    ["webhook"],
    registry=REGISTRY,
)
IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"],
    registry=REGISTRY,
)
PANICS_TOTAL = Counter(
    "controller_runtime_webhook_panics_total",
    "Total number of webhook panics",
    registry=REGISTRY,
)


def parse_timeout(text: str | None) -> float:
    """Seconds of a Go duration like ``10s`` (the ``timeout`` query parameter)."""
    match = _DURATION.match(text or "")
    if match is None:
        return DEFAULT_TIMEOUT_SECONDS
    return float(match.group(1)) * _UNITS[match.group(2)]


class WebhookServer:
    """Serves admission handlers over HTTPS; ``ready`` once it listens."""

    def __init__(
        self,
        *,
        host: str = "",
        port: int = DEFAULT_PORT,
        cert_dir: str | Path | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        reload_interval: float = RELOAD_INTERVAL_SECONDS,
    ) -> None:
        self.host = host
        self.port = port
        directory = Path(cert_dir) if cert_dir is not None else default_certificate_directory()
        self.certificates = CertificateWatcher(directory / cert_name, directory / key_name)
        self._reload_interval = reload_interval
        self._handlers: dict[str, AdmissionHandler] = {}
        self._converters: dict[str, Converter] = {}
        self._runner: web.AppRunner | None = None
        self._watch: asyncio.Task[None] | None = None

    @property
    def paths(self) -> list[str]:
        """The registered paths."""
        return sorted([*self._handlers, *self._converters])

    def register_conversion(self, path: str, converter: Converter) -> None:
        """Serve ``converter`` (ConversionReviews) at ``path`` (kubebuilder's: ``/convert``)."""
        if path in self._handlers or path in self._converters:
            raise ValueError(f"a webhook is already registered at {path}")
        self._converters[path] = converter

    def register(self, path: str, handler: AdmissionHandler) -> None:
        """Serve ``handler`` at ``path``; a path serves one handler."""
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with '/'")
        if path in self._handlers:
            raise ValueError(f"a webhook is already registered at {path}")
        self._handlers[path] = handler

    @property
    def ready(self) -> bool:
        """Whether the server listens (the manager's ``/readyz`` fails until then)."""
        return self._runner is not None

    async def start(self) -> None:
        """Load the certificate and listen; ``port`` is then the bound port."""
        self.certificates.load()
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        for path in self._handlers:
            app.router.add_post(path, self._endpoint(path))
        for path in self._converters:
            app.router.add_post(path, self._conversion_endpoint(path))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(
            runner, self.host or None, self.port, ssl_context=self.certificates.context
        )
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        # With port 0 and every interface, IPv4 and IPv6 get different ports: report the
        # IPv4 one (what 127.0.0.1 URLs reach).
        addresses = [a for a in runner.addresses if isinstance(a, tuple)]
        ipv4 = [a for a in addresses if len(a) == 2]
        self.port = int((ipv4 or addresses)[0][1])
        self._watch = asyncio.create_task(self.certificates.watch(self._reload_interval))
        log.info("webhook server listening on port %d, paths %s", self.port, self.paths)

    async def stop(self) -> None:
        """Stop listening."""
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
            self._watch = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _endpoint(self, path: str) -> Callable[[web.Request], Any]:
        handler = self._handlers[path]
        return _measured(path, lambda request: self._serve(path, handler, request))

    def _conversion_endpoint(self, path: str) -> Callable[[web.Request], Any]:
        converter = self._converters[path]
        return _measured(path, lambda request: self._convert(path, converter, request))

    async def _convert(self, path: str, converter: Converter, request: web.Request) -> web.Response:
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text="request entity is too large")
        try:
            sent = _DECODE(body)
            return _json(converter.review(sent))
        except (ValueError, msgspec.DecodeError, MalformedConversionReview) as exc:
            return web.Response(status=400, text=f"couldn't decode the ConversionReview: {exc}")

    async def _serve(
        self, path: str, handler: AdmissionHandler, request: web.Request
    ) -> web.Response:
        if request.content_type != "application/json":
            return _bad_request(f"contentType={request.content_type}, expected application/json")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _bad_request(
                f"request entity is too large; limit is {MAX_REQUEST_BYTES} bytes", code=413
            )
        try:
            review = AdmissionRequest.from_review(_DECODE(body))
        except (ValueError, msgspec.DecodeError, MalformedReview) as exc:
            return _bad_request(f"couldn't decode the AdmissionReview: {exc}")
        timeout = parse_timeout(request.query.get("timeout"))
        try:
            async with asyncio.timeout(timeout):
                answer = await handler(review)
        except Denied as denial:
            answer = AdmissionResponse.denied(denial)
        except TimeoutError:
            answer = AdmissionResponse(
                allowed=False,
                code=500,
                reason="InternalError",
                message=f"the webhook did not answer within {timeout:g}s",
            )
        except Exception as exc:  # any bug of a handler: refused, reported, never a crash
            PANICS_TOTAL.inc()
            log.exception("webhook %s: handler failed on %s", path, review.uid)
            answer = AdmissionResponse(
                allowed=False, code=500, reason="InternalError", message=one_line(exc)
            )
        return _json(answer.to_review(review.uid, review.api_version))


def _measured(
    path: str, serve: Callable[[web.Request], Awaitable[web.Response]]
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``serve`` with controller-runtime's metrics of ``path`` (the labelled series looked up
    once: ``labels()`` on every request costs as much as a small handler)."""
    in_flight = IN_FLIGHT.labels(path)
    latency = LATENCY_SECONDS.labels(path)
    requests: dict[int, Any] = {}

    async def measured(request: web.Request) -> web.Response:
        in_flight.inc()
        started = time.perf_counter()
        try:
            response = await serve(request)
        finally:
            in_flight.dec()
            latency.observe(time.perf_counter() - started)
        counter = requests.get(response.status)
        if counter is None:
            counter = requests[response.status] = REQUESTS_TOTAL.labels(path, str(response.status))
        counter.inc()
        return response

    return measured


def _bad_request(message: str, code: int = 400) -> web.Response:
    review = AdmissionResponse(allowed=False, code=code, message=message).to_review(
        "", "admission.k8s.io/v1"
    )
    return _json(review, status=code)


def _json(document: Any, status: int = 200) -> web.Response:
    # msgspec: several times faster than json.dumps for a review answer.
    return web.Response(body=_ENCODE(document), status=status, content_type="application/json")
