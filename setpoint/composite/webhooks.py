"""Calling a hook over HTTP, as Metacontroller does.

A webhook is named by ``url``, or by ``service`` (``name``, ``namespace``, ``port`` 80,
``protocol`` http) plus ``path``. A service is resolved to the addresses of its Endpoints when
it has ready ones (so a hook server running outside the cluster, behind a selector-less Service
with hand-written Endpoints, is reached on the local cluster too), else to the in-cluster name
``name.namespace:port``. ``timeout`` is a Go duration (default 10s). ``caBundle``,
``clientTLS``, ``authorization`` and ``basicAuth`` (or the controller's ``endpointConfigs``)
are read once, when the controller is built (see :mod:`.endpoint_config`). With
``etag.enabled`` the last answer per object is kept, sent as ``If-None-Match``, and reused when
the server answers 304 or 412.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import aiohttp

from setpoint.client import json_codec
from setpoint.client.client import Client
from setpoint.client.errors import NotFound
from setpoint.composite.endpoint_config import Connection, resolve_connection
from setpoint.composite.hook_wire import HookError, parse_duration

log = logging.getLogger("setpoint.composite")

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "FunctionHook", "Hook", "WebhookHook", "make_hook"]

#: Metacontroller's default webhook timeout.
DEFAULT_TIMEOUT_SECONDS = 10.0
#: How long a service's resolution to an endpoint is reused (two GETs saved per call).
SERVICE_RESOLUTION_SECONDS = 10.0
#: ETag answers kept per hook at most (one per parent); the oldest go first.
MAX_ETAG_ENTRIES = 100_000
#: How long an ETag answer is kept when ``cacheTimeoutSeconds`` is not set.
DEFAULT_ETAG_CACHE_SECONDS = 600.0


class Hook(Protocol):
    """Something that answers a hook request (an HTTP webhook or a Python function)."""

    name: str
    version: str
    strict: bool

    async def call(self, request: dict[str, Any], *, root_uid: str) -> Any: ...

    async def close(self) -> None: ...


class FunctionHook:
    """A Python function as a hook: called with the request dict, in-process."""

    def __init__(self, name: str, fn: Callable[[dict[str, Any]], Any], version: str = "v1"):
        self.name = name
        self.fn = fn
        self.version = version
        self.strict = False

    async def call(self, request: dict[str, Any], *, root_uid: str) -> Any:
        try:
            result = self.fn(request)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            # Reported like a webhook's failure (Event, condition, backoff); the traceback
            # goes to the log, where the hook's author looks for it.
            log.warning("%s hook raised", self.name, exc_info=True)
            raise HookError(
                f"{self.name} hook raised {type(error).__name__}: {_one_line(error)}"
            ) from error
        return result

    async def close(self) -> None:
        return None


class WebhookHook:
    """A hook served over HTTP(S); see the module docs for how it is found and called."""

    def __init__(
        self,
        name: str,
        spec: Mapping[str, Any],
        client: Client,
        endpoint_configs: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        webhook = spec.get("webhook")
        if not isinstance(webhook, Mapping):
            raise ValueError(f"hooks.{name}.webhook: Required value")
        version = spec.get("version") or "v1"
        if version not in ("v1", "v2"):
            raise ValueError(f"hooks.{name}.version: Unsupported value: {version!r}: v1 or v2")
        self.name = name
        self.version = str(version)
        mode = webhook.get("responseUnMarshallMode") or ("strict" if version == "v2" else "loose")
        if mode not in ("loose", "strict"):
            raise ValueError(
                f"hooks.{name}.webhook.responseUnMarshallMode: Unsupported value: {mode!r}"
            )
        self.strict = mode == "strict"
        self._webhook = webhook
        self._client = client
        self.timeout = (
            parse_duration(str(webhook["timeout"]), field_name=f"hooks.{name}.webhook.timeout")
            if webhook.get("timeout")
            else DEFAULT_TIMEOUT_SECONDS
        )
        if not webhook.get("url") and not isinstance(webhook.get("service"), Mapping):
            raise ValueError(f"hooks.{name}.webhook: one of url or service is required")
        etag = webhook.get("etag") or {}
        self.etag_enabled = bool(etag.get("enabled"))
        self.etag_ttl = float(etag.get("cacheTimeoutSeconds") or DEFAULT_ETAG_CACHE_SECONDS)
        self._etags: dict[str, tuple[str, Any, float]] = {}
        self._session: aiohttp.ClientSession | None = None
        #: A service's resolved host and until when it is used (see `_url`).
        self._resolved: tuple[str, float] | None = None
        self._endpoint_configs = list(endpoint_configs)
        self._connection: Connection | None = None

    async def _url(self) -> str:
        webhook = self._webhook
        if webhook.get("url"):
            return str(webhook["url"])
        service = webhook["service"]
        name, namespace = service.get("name"), service.get("namespace")
        if not name or not namespace:
            raise HookError(f"{self.name} hook: webhook.service needs name and namespace")
        port = int(service.get("port") or 80)
        protocol = service.get("protocol") or "http"
        path = str(webhook.get("path") or "")
        now = time.monotonic()
        if self._resolved is not None and self._resolved[1] > now:
            host = self._resolved[0]
        else:
            host = (
                await self._endpoint_of(str(namespace), str(name), port)
                or f"{name}.{namespace}:{port}"
            )
            self._resolved = (host, now + SERVICE_RESOLUTION_SECONDS)
        return f"{protocol}://{host}{path}"

    async def _endpoint_of(self, namespace: str, name: str, port: int) -> str | None:
        """``ip:port`` of the Service's first ready endpoint, or None."""
        try:
            service = await self._client.get("v1", "Service", name, namespace=namespace)
            endpoints = await self._client.get("v1", "Endpoints", name, namespace=namespace)
        except NotFound:
            return None
        service_ports = (service.get("spec") or {}).get("ports") or []
        port_name = next((p.get("name") for p in service_ports if p.get("port") == port), None)
        for subset in endpoints.get("subsets") or []:
            addresses = subset.get("addresses") or []
            ports = subset.get("ports") or []
            target = next(
                (p for p in ports if port_name is None or p.get("name") == port_name),
                ports[0] if ports else None,
            )
            if addresses and target is not None:
                return f"{addresses[0]['ip']}:{target['port']}"
        return None

    async def resolve(self) -> None:
        """Read the connection settings (caBundle, clientTLS, authorization, basicAuth, or the
        matching ``endpointConfigs`` entry) once; ValueError naming the problem."""
        try:
            self._connection = await resolve_connection(
                self._client, self._webhook, self._endpoint_configs
            )
        except ValueError as error:
            raise ValueError(f"hooks.{self.name}.webhook: {error}") from None

    async def call(self, request: dict[str, Any], *, root_uid: str) -> Any:
        url = await self._url()
        if self._connection is None:
            try:
                await self.resolve()
            except ValueError as error:
                raise HookError(f"{self.name} hook: {error}") from None
        assert self._connection is not None
        ssl_context = self._connection.ssl_context
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {"Content-Type": "application/json"}
        if self._connection.authorization:
            headers["Authorization"] = self._connection.authorization
        cached = self._etags.get(root_uid) if self.etag_enabled else None
        now = time.monotonic()
        if cached is not None and now - cached[2] > self.etag_ttl:
            cached = None
            self._etags.pop(root_uid, None)
        if cached is not None:
            headers["If-None-Match"] = cached[0]
        try:
            async with self._session.post(
                url,
                data=json_codec.encode(request),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                ssl=ssl_context if ssl_context is not None else True,
            ) as response:
                body = await response.read()
                status = response.status
                etag = response.headers.get("ETag")
        except TimeoutError:
            raise HookError(
                f"{self.name} hook: no response from {url} within {self.timeout:g}s"
            ) from None
        except aiohttp.ClientError as error:
            self._resolved = None  # the endpoints may have moved: resolve again next time
            raise HookError(f"{self.name} hook: cannot call {url}: {_one_line(error)}") from None
        if cached is not None and status in (304, 412):
            return cached[1]
        if not 200 <= status < 300:
            raise HookError(
                f"{self.name} hook: {url} answered HTTP {status}: {_one_line(body[:200])}"
            )
        try:
            answer = json_codec.decode(body)
        except Exception as error:  # msgspec's DecodeError, or a bad encoding
            raise HookError(f"{self.name} hook: the response is not JSON ({error})") from None
        if self.etag_enabled and etag:
            self._etags.pop(root_uid, None)  # re-inserted last: the dict stays oldest-first
            self._etags[root_uid] = (etag, answer, now)
            if len(self._etags) > MAX_ETAG_ENTRIES:
                del self._etags[next(iter(self._etags))]
        return answer

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _one_line(value: Any) -> str:
    text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return " ".join(text.split()) or "(empty body)"


def make_hook(
    name: str, spec: Any, client: Client, endpoint_configs: Sequence[Mapping[str, Any]] = ()
) -> Hook | None:
    """The hook of ``hooks.<name>``; None when it is not declared."""
    if spec is None:
        return None
    if isinstance(spec, FunctionHook | WebhookHook):
        return spec
    if not isinstance(spec, Mapping):
        raise ValueError(f"hooks.{name}: must be an object")
    return WebhookHook(name, spec, client, endpoint_configs)
