"""The HTTP layer: one aiohttp session per client, auth, rate limiting, retries, metrics, warnings.

Everything above this module deals in paths, query parameters and bytes; everything below is
aiohttp. A request goes: rate limiter -> credentials -> send -> metrics and warnings -> maybe
retry (see :mod:`setpoint.client.retry_policy`) -> bytes, or a typed
:class:`~setpoint.client.errors.ApiError`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import msgspec
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from setpoint.api.deferred_certificates import deferred_default_certificates
from setpoint.client.config import ClientConfig

with deferred_default_certificates():  # aiohttp's own TLS contexts are not used here
    import aiohttp
from setpoint.client.credentials import AuthInfo, fixed_credentials
from setpoint.client.errors import ConnectionFailed, error_from_response
from setpoint.client.metrics import (
    RATE_LIMITER_DURATION,
    REQUEST_RETRIES,
    REQUESTS_TOTAL,
    RequestMetrics,
)
from setpoint.client.rate_limit import TokenBucket
from setpoint.client.request_url import RequestUrls
from setpoint.client.retry_policy import RetryPolicy, is_idempotent_method, parse_retry_after
from setpoint.client.server_warnings import WarningHandler

__all__ = ["JSON", "RawResponse", "Transport", "TransportOptions", "iter_lines", "watch_lines"]

LOGGER = logging.getLogger("setpoint.client")

JSON = "application/json"
# Large enough for the largest object etcd can store (1.5 MiB) plus the watch envelope; aiohttp's
# default (64 KiB buffer, ~512 KiB lines) breaks on big ConfigMaps and CRDs.
READ_BUFSIZE = 2 * 1024 * 1024
# Fail connects fast: a server that does not accept within this time is down or unreachable.
DEFAULT_CONNECT_TIMEOUT = 10.0
# A non-watch response that sends no byte for this long is treated as a dead connection; large
# lists keep streaming, so this does not cap their total time.
DEFAULT_READ_TIMEOUT = 60.0
# Extra read slack for a watch beyond its timeoutSeconds before declaring the stream dead.
WATCH_READ_GRACE = 30.0
# Label client-go uses for requests that got no HTTP status.
ERROR_CODE_LABEL = "<error>"


@dataclass(frozen=True, slots=True)
class TransportOptions:
    """Tuning of the transport; every field has a safe default."""

    qps: float | None = None  # None or <= 0: no client-side rate limit (controller-runtime >= 0.21)
    burst: int = 10  # client-go's DefaultBurst; only used when qps is set
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    # 0 = unlimited: every watch holds a connection, and HTTP/1.1 cannot multiplex them.
    max_connections: int = 0


class RawResponse(msgspec.Struct, frozen=True, gc=False):
    """A successful (2xx) answer: status, headers and the whole body."""

    # A frozen struct, not a frozen dataclass: one is built per request, and a frozen
    # dataclass's __init__ sets each field through object.__setattr__.
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes


class _ConnectionProblem(Exception):
    """Internal: a transport failure with whether the request may have reached the server."""

    def __init__(self, cause: BaseException, *, sent: bool, retryable: bool = True) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.sent = sent
        self.retryable = retryable


def _classify(exc: BaseException) -> _ConnectionProblem:
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return _ConnectionProblem(exc, sent=False, retryable=False)
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return _ConnectionProblem(exc, sent=False)
    if isinstance(exc, ssl.SSLError):
        return _ConnectionProblem(exc, sent=False, retryable=False)
    return _ConnectionProblem(exc, sent=True)


_TRANSPORT_ERRORS = (aiohttp.ClientError, TimeoutError, OSError)


def _is_safe(method: str, idempotent: bool | None) -> bool:
    """Whether a request may be repeated after an unknown outcome."""
    return is_idempotent_method(method) if idempotent is None else idempotent


# Distinct header sets kept for reuse; more only with credentials that keep changing.
_MAX_CACHED_HEADERS = 64


class Transport:
    """Sends requests to one API server. Create with :meth:`open` inside a running loop."""

    def __init__(self, config: ClientConfig, options: TransportOptions | None = None) -> None:
        self.config = config
        self.options = options or TransportOptions()
        qps = self.options.qps
        self.rate_limiter = TokenBucket(qps, self.options.burst) if qps and qps > 0 else None
        self.warnings = WarningHandler()
        self.host = config.host
        self._urls = RequestUrls(config.server)
        # Headers every request carries: the session sends them, unless a request overrides one.
        self._session_headers: list[tuple[str, str]] = [
            ("User-Agent", config.user_agent),
            ("Accept", JSON),
            *config.impersonation_headers(),
        ]
        if config.disable_compression:
            self._session_headers.append(("Accept-Encoding", "identity"))
        # (accept, content type, authorization) -> the request's own headers; the same few
        # combinations repeat for every request.
        self._headers: dict[tuple[str, str | None, str | None], CIMultiDictProxy[str]] = {}
        self._session: aiohttp.ClientSession | None = None
        # method -> its metrics: prometheus_client's labels() costs more than the observation
        # itself, and every request makes four of them.
        self._metrics: dict[str, RequestMetrics] = {}
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=self.options.connect_timeout,
            sock_read=self.options.read_timeout,
        )
        # Options of every request that do not depend on its credentials.
        self._send_options: dict[str, Any] = {"allow_redirects": False}
        if config.uses_tls and config.tls_server_name:
            self._send_options["server_hostname"] = config.tls_server_name
        if config.proxy_url:
            self._send_options["proxy"] = config.proxy_url
        self._uses_tls = config.uses_tls
        # Credentials that never change need no asking (an await) per request.
        self._fixed_auth = fixed_credentials(config.credentials)

    def _method_metrics(self, method: str) -> RequestMetrics:
        metrics = self._metrics.get(method)
        if metrics is None:
            metrics = self._metrics[method] = RequestMetrics(method, self.host)
        return metrics

    def _request_headers(
        self, accept: str, content_type: str | None, authorization: str | None
    ) -> CIMultiDictProxy[str]:
        """The headers a request adds to the session's (read-only: they are shared)."""
        key = (accept, content_type, authorization)
        headers = self._headers.get(key)
        if headers is None:
            built: CIMultiDict[str] = CIMultiDict()
            if accept != JSON:
                built["Accept"] = accept
            if content_type:
                built["Content-Type"] = content_type
            if authorization:
                built["Authorization"] = authorization
            if len(self._headers) >= _MAX_CACHED_HEADERS:
                self._headers.clear()
            headers = self._headers[key] = CIMultiDictProxy(built)
        return headers

    async def open(self) -> None:
        """Create the HTTP session (must run inside the event loop that will use it)."""
        if self._session is not None:
            return
        if self.config.uses_tls:
            self.config.ssl_context()  # fail now, naming the file, if a CA or cert is unusable
        connector = aiohttp.TCPConnector(limit=self.options.max_connections)
        self._session = aiohttp.ClientSession(
            connector=connector,
            read_bufsize=READ_BUFSIZE,
            headers=CIMultiDict(self._session_headers),
            timeout=self._timeout,
            trust_env=False,  # proxies come from the kubeconfig only, never from the environment
        )

    async def close(self) -> None:
        """Close the session and all pooled connections."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (or :meth:`open` never was)."""
        return self._session is None

    def _require_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("the client is closed (or was not opened with Client.from_...)")
        return self._session

    def _ssl_for(self, auth: AuthInfo | None) -> ssl.SSLContext | bool:
        if not self.config.uses_tls:
            return True  # aiohttp's default for plain http (ignored)
        dynamic = None
        if auth is not None and auth.client_cert_pem and auth.client_key_pem:
            dynamic = (auth.client_cert_pem, auth.client_key_pem)
        return self.config.ssl_context(dynamic)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
        idempotent: bool | None = None,
        retry: RetryPolicy | None = None,
    ) -> Coroutine[Any, Any, RawResponse]:
        """Send one request (with retries) and return the 2xx answer; raises typed errors.

        Await it, as a coroutine function (it hands out the coroutine that does the work, one
        coroutine fewer per request). ``retry`` overrides the transport's policy for this
        request (e.g. ``RetryPolicy(0)`` for a caller that runs its own retry loop).
        """
        return self._perform(
            method,
            path,
            params,
            body,
            content_type,
            accept,
            idempotent,
            None,
            stream=False,
            retry=retry,
        )

    async def open_stream(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        accept: str = JSON,
    ) -> aiohttp.ClientResponse:
        """Start a streaming request; returns the 2xx response, whose body the caller reads.

        Retries apply only until the response headers arrive. The caller must ``release()`` or
        ``close()`` the response.
        """
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.options.connect_timeout, sock_read=read_timeout
        )
        return await self._perform(
            method, path, params, None, None, accept, True, timeout, stream=True
        )

    @overload
    async def _perform(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        accept: str,
        idempotent: bool | None,
        client_timeout: aiohttp.ClientTimeout | None,
        *,
        stream: Literal[False],
        retry: RetryPolicy | None = None,
    ) -> RawResponse: ...

    @overload
    async def _perform(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        accept: str,
        idempotent: bool | None,
        client_timeout: aiohttp.ClientTimeout | None,
        *,
        stream: Literal[True],
        retry: RetryPolicy | None = None,
    ) -> aiohttp.ClientResponse: ...

    async def _perform(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        accept: str,
        idempotent: bool | None,
        client_timeout: aiohttp.ClientTimeout | None,
        *,
        stream: bool,
        retry: RetryPolicy | None = None,
    ) -> RawResponse | aiohttp.ClientResponse:
        """The request with its retries: the whole answer, or a 2xx one to stream from."""
        session = self._session if self._session is not None else self._require_session()
        method = method.upper()
        # Lookups inlined (the helpers build what is missing): every request makes them.
        metrics = self._metrics.get(method) or self._method_metrics(method)
        credentials = self.config.credentials
        retries = 0
        reauthenticated = False
        while True:
            if self.rate_limiter is not None:
                waited = await self.rate_limiter.acquire()
                RATE_LIMITER_DURATION.labels(method, self.host).observe(waited)
            auth = self._fixed_auth or (await credentials.get() if credentials else None)
            authorization = auth.authorization if auth is not None else None
            headers = self._headers.get(
                (accept, content_type, authorization)
            ) or self._request_headers(accept, content_type, authorization)
            request_size = len(body) if body is not None else None
            started = time.monotonic()
            try:
                try:
                    response = await self._send(
                        session, method, path, params, body, headers, auth, client_timeout
                    )
                except BaseException:
                    metrics.unanswered(request_size)
                    raise
                code = response.status
                seconds = time.monotonic() - started
                received: int | None = None
                try:
                    if "Warning" in response.headers:
                        self.warnings.handle(response.headers.getall("Warning"))
                    if stream and 200 <= code < 300:
                        return response
                    try:
                        data = await response.read()
                    finally:
                        response.release()
                    received = len(data)
                finally:
                    metrics.answered(request_size, code, seconds, received)
            except _TRANSPORT_ERRORS as exc:
                url = self.config.server + path
                if isinstance(exc, aiohttp.InvalidURL):
                    raise ConnectionFailed(
                        f"invalid URL {url}: {exc}", method=method, url=url
                    ) from exc
                problem = _classify(exc)
                REQUESTS_TOTAL.labels(ERROR_CODE_LABEL, method, self.host).inc()
                policy = retry or self.options.retry
                may_retry = problem.retryable and policy.should_retry_connection_error(
                    sent=problem.sent, idempotent=_is_safe(method, idempotent)
                )
                if may_retry and retries < policy.max_retries:
                    retries += 1
                    REQUEST_RETRIES.labels(ERROR_CODE_LABEL, method, self.host).inc()
                    wait = policy.backoff(retries)
                    LOGGER.debug(
                        "%s %s failed (%s); retry %d in %.2fs", method, url, exc, retries, wait
                    )
                    await asyncio.sleep(wait)
                    continue
                raise ConnectionFailed(
                    f"{method} {url}: {type(exc).__name__}: {exc or 'connection failed'}",
                    method=method,
                    url=url,
                ) from exc
            if 200 <= code < 300:
                return RawResponse(code, response.headers, data)
            if (
                code == 401
                and not reauthenticated
                and self.config.credentials is not None
                and self.config.credentials.invalidate(auth)
            ):
                reauthenticated = True  # fresh credentials once; a second 401 is final
                REQUEST_RETRIES.labels(str(code), method, self.host).inc()
                continue
            url = self.config.server + path
            policy = retry or self.options.retry
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if retries < policy.max_retries and policy.should_retry_status(
                code,
                has_retry_after=retry_after is not None,
                idempotent=_is_safe(method, idempotent),
            ):
                retries += 1
                REQUEST_RETRIES.labels(str(code), method, self.host).inc()
                wait = policy.backoff(retries, retry_after)
                LOGGER.debug("%s %s got %d; retry %d in %.2fs", method, url, code, retries, wait)
                await asyncio.sleep(wait)
                continue
            raise error_from_response(code, data, method=method, url=url)

    def _send(
        self,
        session: aiohttp.ClientSession,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: bytes | None,
        headers: CIMultiDictProxy[str],
        auth: AuthInfo | None,
        client_timeout: aiohttp.ClientTimeout | None,
    ) -> Awaitable[aiohttp.ClientResponse]:
        options = self._send_options
        target: str | URL | None = self._urls.url(path, params)
        if target is None:
            target = self.config.server + path  # aiohttp parses it and adds the params
        else:
            params = None  # in the URL already
        if client_timeout is not None or self._uses_tls:
            options = dict(options)
            if client_timeout is not None:
                options["timeout"] = client_timeout
            if self._uses_tls:
                options["ssl"] = self._ssl_for(auth)
        return session.request(method, target, params=params, data=body, headers=headers, **options)


async def iter_lines(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """Split a streamed body into lines (without the newline), whatever their length.

    Splitting our own chunks instead of ``readline()`` has no line-length limit and hands out all
    complete lines of a chunk at once.
    """
    partial: list[bytes] = []  # pieces of a line that spans chunks, joined once it ends
    async for chunk in response.content.iter_any():
        start = 0
        end = chunk.find(b"\n")
        if end < 0:
            partial.append(chunk)
            continue
        if partial:
            partial.append(chunk[:end])
            line = b"".join(partial).rstrip(b"\r")
            partial.clear()
            if line:
                yield line
            start = end + 1
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if end > start:
                line = chunk[start:end].rstrip(b"\r")
                if line:
                    yield line
            start = end + 1
        if start < len(chunk):
            partial.append(chunk[start:])
    tail = b"".join(partial).strip()
    if tail:
        yield tail


async def watch_lines(response: aiohttp.ClientResponse, path: str) -> AsyncIterator[bytes]:
    """Lines of a watch stream; transport failures mid-stream become ``ConnectionFailed``."""
    try:
        async for line in iter_lines(response):
            yield line
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise ConnectionFailed(
            f"watch {path}: stream broken: {type(exc).__name__}: {exc}", method="GET", url=path
        ) from exc
