"""The API proxy between Ansible and the API server: owner references and cached reads.

Each run gets a kubeconfig pointing at this proxy (on the loopback interface) whose user name
is the CR it runs for, encoded (see :mod:`setpoint.ansible.kubeconfig`). The ``kubernetes.core``
modules then talk to the proxy, which, as Operator SDK's does:

- on a **create** (``POST`` of a resource) adds the CR as owner of the new object: an
  ``ownerReference`` when Kubernetes allows one (the CR is cluster-scoped, or both are in one
  namespace), else the annotations ``operator-sdk/primary-resource`` (``namespace/name``) and
  ``operator-sdk/primary-resource-type`` (``Kind.group``); and tells the operator that the CR's
  controller now has dependents of that kind to watch;
- answers **reads** (``GET`` of an object or a list, by label selector) from the operator's
  shared cache when the operator watches the namespace, with the header ``X-Cache: HIT``;
  watches, field selectors, subresources and resources that cannot be listed go to the API
  server;
- sends everything else to the API server with the operator's own credentials (the user
  name is never forwarded).

Unlike Operator SDK's, writes answered by the API server are recorded in the cache, so the
next read in the same run (or the next run) sees them even before the watch delivers them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from setpoint.ansible.kubeconfig import Owner, decode_owner
from setpoint.api.gvk import ResourceInfo
from setpoint.cache.cache import Cache
from setpoint.client.client import Client
from setpoint.client.errors import ApiError, ClientError
from setpoint.client.retry_policy import RetryPolicy

__all__ = [
    "PRIMARY_RESOURCE_ANNOTATION",
    "PRIMARY_RESOURCE_TYPE_ANNOTATION",
    "DependentCreated",
    "OwnerInjectingProxy",
    "RequestInfo",
    "parse_request_path",
]

log = logging.getLogger("setpoint.ansible.proxy")

PRIMARY_RESOURCE_ANNOTATION = "operator-sdk/primary-resource"
PRIMARY_RESOURCE_TYPE_ANNOTATION = "operator-sdk/primary-resource-type"
_CACHEABLE_PARAMETERS = {"labelSelector", "resourceVersion", "pretty", "timeoutSeconds"}
_NO_RETRY = RetryPolicy(0)


@dataclass(frozen=True)
class RequestInfo:
    """What a request path names (apiserver's RequestInfo, for resource requests)."""

    api_version: str
    resource: str
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None


def parse_request_path(path: str) -> RequestInfo | None:
    """``/api/v1/namespaces/ns/pods/x/status`` -> its parts; None for non-resource paths."""
    parts = [part for part in path.split("/") if part]
    if len(parts) >= 2 and parts[0] == "api":
        api_version, rest = parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        api_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
    else:
        return None
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest:
        return None
    return RequestInfo(
        api_version=api_version,
        resource=rest[0],
        namespace=namespace,
        name=rest[1] if len(rest) > 1 else None,
        subresource="/".join(rest[2:]) or None,
    )


@dataclass(frozen=True)
class DependentCreated:
    """A dependent of ``owner`` of kind ``api_version``/``kind`` was created or read.

    ``namespace`` is the dependent's (``""`` for a cluster-scoped one), ``namespaced`` whether
    its kind is namespaced, ``by_owner_reference`` whether it is tied to the owner by an owner
    reference (else by the ``operator-sdk/primary-resource`` annotations).
    """

    owner: Owner
    api_version: str
    kind: str
    by_owner_reference: bool
    namespace: str = ""
    namespaced: bool = True


DependentListener = Callable[[DependentCreated], Awaitable[None]]


class OwnerInjectingProxy:
    """An HTTP server on the loopback interface that Ansible's kubeconfig points at.

    ``namespaces``: the namespaces the operator watches (None: all), which decide where reads
    come from the cache. ``on_dependent`` is awaited for each created (or read) object owned by a
    run's CR, before the answer goes back to Ansible, so the watch exists before the run can
    change the object again. ``owner_injection`` False only forwards (and caches reads).
    """

    def __init__(
        self,
        client: Client,
        cache: Cache,
        *,
        namespaces: Sequence[str] | None = None,
        on_dependent: DependentListener | None = None,
        owner_injection: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.client = client
        self.cache = cache
        self.namespaces = frozenset(namespaces) if namespaces else None
        self.on_dependent = on_dependent
        self.owner_injection = owner_injection
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._ready = asyncio.Event()
        #: Counters for tests and the bench: reads answered from the cache, requests forwarded.
        self.cache_hits = 0
        self.forwarded = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` once started."""
        if self._url is None:
            raise RuntimeError("OwnerInjectingProxy: not started")
        return self._url

    async def wait_ready(self) -> str:
        """Wait until the server listens; returns its URL."""
        await self._ready.wait()
        return self.url

    async def start(self) -> None:
        """Listen (a free port by default)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        port = runner.addresses[0][1] if runner.addresses else self.port
        self._url = f"http://{self.host}:{port}"
        self._ready.set()
        log.info("Ansible API proxy listening on %s", self._url)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- requests ------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        owner = _owner_of(request)
        info = parse_request_path(request.path)
        try:
            if request.method == "GET" and info is not None:
                cached = await self._from_cache(request, info, owner)
                if cached is not None:
                    return cached
            body = await request.read()
            if (
                request.method == "POST"
                and info is not None
                and info.subresource is None
                and info.name is None
                and owner is not None
                and self.owner_injection
            ):
                body = await self._inject_owner(body, info, owner)
            if request.method == "GET" and request.query.get("watch") in ("true", "1"):
                return await self._stream(request)
            return await self._forward(request, body, info, owner)
        except _Reply as reply:
            return reply.response

    async def _resource(self, info: RequestInfo) -> ResourceInfo | None:
        try:
            return await self.client.mapper.resource_for_plural(info.api_version, info.resource)
        except ClientError:
            return None

    def _cached_scope(self, namespace: str | None, namespaced: bool) -> bool:
        if self.namespaces is None:
            return True
        return namespaced and namespace is not None and namespace in self.namespaces

    async def _from_cache(
        self, request: web.Request, info: RequestInfo, owner: Owner | None
    ) -> web.Response | None:
        if info.subresource is not None:
            return None
        if any(parameter not in _CACHEABLE_PARAMETERS for parameter in request.query):
            return None
        resource = await self._resource(info)
        if resource is None or not {"list", "watch"} <= set(resource.verbs):
            return None  # virtual resources (reviews, tokens) are asked of the server
        if resource.namespaced and info.name is not None and info.namespace is None:
            return None
        if not self._cached_scope(info.namespace, resource.namespaced):
            return None
        api_version = info.api_version
        try:
            if info.name is not None:
                obj = await self.cache.get(
                    api_version,
                    resource.kind,
                    info.name,
                    info.namespace if resource.namespaced else None,
                )
                if obj is None:
                    return _status_response(_not_found(resource, info.name))
                await self._recover_dependent_watch(obj, owner)
                payload: dict[str, Any] = obj
            else:
                items = await self.cache.list(
                    api_version,
                    resource.kind,
                    info.namespace if resource.namespaced else None,
                    label_selector=request.query.get("labelSelector") or None,
                )
                payload = {
                    "apiVersion": api_version,
                    "kind": resource.list_kind,
                    "metadata": {"resourceVersion": ""},
                    "items": items,
                }
        except (ClientError, ValueError, LookupError, TimeoutError) as error:
            log.debug(
                "cache cannot answer %s %s (%s); asking the API server",
                request.method,
                request.path,
                error,
            )
            return None
        self.cache_hits += 1
        return web.json_response(payload, headers={"X-Cache": "HIT"})

    async def _inject_owner(self, body: bytes, info: RequestInfo, owner: Owner) -> bytes:
        resource = await self._resource(info)
        if resource is None or not {"get", "list", "watch"} <= set(resource.verbs):
            # Virtual resources (reviews, token requests) are not stored: nothing to own or
            # watch (Operator SDK's IsVirtualResource).
            return body
        try:
            obj = json.loads(body)
        except ValueError:
            raise _Reply(
                _status_response(_bad_request("the request body is not a JSON object"))
            ) from None
        if not isinstance(obj, dict):
            return body
        metadata = obj.setdefault("metadata", {})
        namespace = info.namespace or metadata.get("namespace")
        by_reference = owner.namespace == "" or (
            resource.namespaced and namespace == owner.namespace
        )
        if by_reference:
            references = metadata.setdefault("ownerReferences", [])
            if not any(reference.get("uid") == owner.uid for reference in references):
                references.append(owner.reference())
        else:
            annotations = metadata.setdefault("annotations", {})
            annotations[PRIMARY_RESOURCE_ANNOTATION] = f"{owner.namespace}/{owner.name}"
            annotations[PRIMARY_RESOURCE_TYPE_ANNOTATION] = owner.group_kind
        if self.on_dependent is not None:
            await self.on_dependent(
                DependentCreated(
                    owner,
                    info.api_version,
                    resource.kind,
                    by_reference,
                    namespace=(namespace or "") if resource.namespaced else "",
                    namespaced=resource.namespaced,
                )
            )
        return json.dumps(obj).encode()

    async def _recover_dependent_watch(self, obj: Mapping[str, Any], owner: Owner | None) -> None:
        """A dependent read after a restart gets its watch back (Operator SDK does the same)."""
        if owner is None or self.on_dependent is None:
            return
        metadata = obj.get("metadata") or {}
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return
        namespace = str(metadata.get("namespace") or "")
        # An object without a namespace is of a cluster-scoped kind (reads name theirs).
        namespaced = bool(namespace)
        for reference in metadata.get("ownerReferences") or []:
            if (
                reference.get("apiVersion") == owner.api_version
                and reference.get("kind") == owner.kind
            ):
                await self.on_dependent(
                    DependentCreated(owner, api_version, kind, True, namespace, namespaced)
                )
                return
        annotations = metadata.get("annotations") or {}
        if annotations.get(PRIMARY_RESOURCE_TYPE_ANNOTATION) == owner.group_kind:
            await self.on_dependent(
                DependentCreated(owner, api_version, kind, False, namespace, namespaced)
            )

    async def _forward(
        self, request: web.Request, body: bytes, info: RequestInfo | None, owner: Owner | None
    ) -> web.Response:
        self.forwarded += 1
        content_type = request.headers.get("Content-Type")
        accept = request.headers.get("Accept") or "application/json"
        if "protobuf" in accept:
            accept = "application/json"  # the proxy re-encodes nothing: ask for JSON
        try:
            answer = await self.client.transport.request(
                request.method,
                request.path,
                params=dict(request.query) or None,
                body=body or None,
                content_type=content_type.split(";")[0] if content_type and body else None,
                accept=accept,
                retry=_NO_RETRY if request.method not in ("GET", "HEAD") else None,
            )
        except ApiError as error:
            return _status_response(error.status)
        except ClientError as error:
            return _status_response(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "message": str(error),
                    "reason": "ServiceUnavailable",
                    "code": 503,
                }
            )
        data = answer.body
        if request.method in ("POST", "PUT", "PATCH", "DELETE") and data[:1] == b"{":
            try:
                written = json.loads(data)
            except ValueError:
                written = None
            if isinstance(written, dict) and written.get("kind") not in (None, "Status"):
                self.cache.record_write(written, data)
        elif request.method == "GET" and info is not None and info.name and data[:1] == b"{":
            try:
                read = json.loads(data)
            except ValueError:
                read = None
            if isinstance(read, dict):
                await self._recover_dependent_watch(read, owner)
        return web.Response(
            status=answer.status,
            body=data,
            content_type=(answer.headers.get("Content-Type") or "application/json").split(";")[0],
        )

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        self.forwarded += 1
        try:
            upstream = await self.client.transport.open_stream(
                "GET", request.path, params=dict(request.query)
            )
        except ApiError as error:
            return _status_response(error.status)
        response = web.StreamResponse(status=upstream.status)
        response.content_type = "application/json"
        await response.prepare(request)
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        finally:
            upstream.close()
        await response.write_eof()
        return response


class _Reply(Exception):
    def __init__(self, response: web.Response) -> None:
        super().__init__()
        self.response = response


def _owner_of(request: web.Request) -> Owner | None:
    header = request.headers.get("Authorization")
    if not header or not header.lower().startswith("basic "):
        return None
    try:
        # RFC 7617 credentials; aiohttp deprecates its BasicAuth helper.
        credentials = base64.b64decode(header[6:].strip(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    user, _, _ = credentials.partition(":")
    return decode_owner(user)


def _status_response(status: Mapping[str, Any]) -> web.Response:
    code = status.get("code")
    return web.json_response(dict(status), status=code if isinstance(code, int) and code else 500)


def _not_found(resource: ResourceInfo, name: str) -> dict[str, Any]:
    group = f".{resource.group}" if resource.group else ""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{resource.resource}{group} "{name}" not found',
        "reason": "NotFound",
        "details": {"name": name, "group": resource.group, "kind": resource.resource},
        "code": 404,
    }


def _bad_request(message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "BadRequest",
        "code": 400,
    }
