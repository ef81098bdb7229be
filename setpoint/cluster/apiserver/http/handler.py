"""The HTTP front of the API server: authentication, routing, content negotiation, responses.

One handler serves every path. It splits the path itself (``/x/`` is ``/x``, as upstream),
authenticates the caller (:mod:`..auth.authentication`), answers discovery and health endpoints,
and maps resource requests to the verbs of :class:`ObjectOperations`. Every failure is a
``Status`` body with the upstream code, reason and message; one debug log line is written per
request.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec
from aiohttp import web

from setpoint.api import field_errors as fe
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import crds, status_errors
from setpoint.cluster.apiserver.audit import AuditLog
from setpoint.cluster.apiserver.audit.audit_feed import AUDIT_FEED_PATH, AuditFeed
from setpoint.cluster.apiserver.auth import reviews
from setpoint.cluster.apiserver.auth.authentication import Authenticator
from setpoint.cluster.apiserver.auth.authentication.token_request import create_token
from setpoint.cluster.apiserver.auth.authentication.token_review import (
    is_token_review,
    review_token,
)
from setpoint.cluster.apiserver.auth.authorization.access_control import AccessControl
from setpoint.cluster.apiserver.auth.authorization.unconfined_pods import UnconfinedPodsGate
from setpoint.cluster.apiserver.auth.request_user import request_user
from setpoint.cluster.apiserver.http import request_body
from setpoint.cluster.apiserver.http.body_limits import object_too_large
from setpoint.cluster.apiserver.http.clock_endpoint import CLOCK_PATH, ClockEndpoint
from setpoint.cluster.apiserver.http.duplicate_fields import check_duplicate_fields
from setpoint.cluster.apiserver.http.fault_injection import FaultInjector
from setpoint.cluster.apiserver.http.list_options import (
    parse_list_options,
    parse_resource_version,
    query_dict,
)
from setpoint.cluster.apiserver.http.log_redaction import LogRedactor
from setpoint.cluster.apiserver.http.media_types import (
    JSON_MEDIA_TYPE,
    PRODUCIBLE_MEDIA_TYPES,
    YAML_MEDIA_TYPE,
    MediaTypeCache,
    json_to_yaml,
)
from setpoint.cluster.apiserver.http.pod_endpoints import PodEndpoints
from setpoint.cluster.apiserver.http.request_metrics import RequestMetrics
from setpoint.cluster.apiserver.http.request_options import (
    apply_patch,
    delete_options,
    write_options,
)
from setpoint.cluster.apiserver.http.resource_routes import (
    ResourceTarget,
    RouteMemo,
    group_version_path,
    resource_target,
)
from setpoint.cluster.apiserver.http.table_responses import table_writer
from setpoint.cluster.apiserver.http.version_info import version_document
from setpoint.cluster.apiserver.http.watch_stream import serve_watch
from setpoint.cluster.apiserver.kinds.component_statuses import (
    component_status_list,
    get_component_status,
)
from setpoint.cluster.apiserver.kinds.namespaces import (
    NAMESPACE_FINALIZER,
    delete_namespace,
    finalize_namespace,
)
from setpoint.cluster.apiserver.kinds.pod_binding import bind_pod
from setpoint.cluster.apiserver.kinds.resource_metrics import GROUP as METRICS_GROUP
from setpoint.cluster.apiserver.kinds.resource_metrics import ResourceMetrics
from setpoint.cluster.apiserver.openapi.documents import OpenAPIDocuments
from setpoint.cluster.apiserver.openapi.serving import serve_openapi
from setpoint.cluster.apiserver.patch.patch_request import patch_object
from setpoint.cluster.apiserver.registry.object_operations import (
    ObjectOperations,
    Result,
    list_read_prefix,
)
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.scale_subresource import scale_of, spec_replicas_path
from setpoint.cluster.apiserver.registry.selection import (
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import ValueTooLargeError, Watch
from setpoint.cluster.apiserver.storage.codec import encode_json

log = logging.getLogger("setpoint.cluster.apiserver.requests")

#: Paths anyone may read (upstream grants them to system:public-info-viewer, anonymous too).
PUBLIC_PATHS: Final = frozenset({"healthz", "livez", "readyz", "version"})
HEALTH_PATHS: Final = frozenset({"healthz", "livez", "readyz"})
AGGREGATED_DISCOVERY_AS: Final = "as=APIGroupDiscoveryList"
#: apidiscovery.k8s.io versions served: v2, and v2beta1 for kubectl/client-go before 1.30.
AGGREGATED_DISCOVERY_VERSIONS: Final = ("v2", "v2beta1")
#: Core resources with no storage of their own: computed on read, or written elsewhere.
COMPUTED_CORE_RESOURCES: Final = frozenset({"componentstatuses", "bindings"})

_ENCODER = msgspec.json.Encoder()
_AUDIT_FEED_PARTS: Final = [part for part in AUDIT_FEED_PATH.split("/") if part]
_ROOT_PATHS: Final = (
    "/api",
    "/api/v1",
    "/apis",
    "/healthz",
    "/livez",
    "/metrics",
    "/openapi/v2",
    "/openapi/v3",
    "/readyz",
    "/version",
)


def json_response(code: int, body: bytes, warnings: list[str] | None = None) -> web.Response:
    """A JSON response; ``warnings`` become ``Warning: 299 - "..."`` headers.

    The body ends with a newline, as kube-apiserver's JSON serializer (Go's ``json.Encoder``)
    ends every object, list and Status it writes.
    """
    response = web.Response(status=code, body=body + b"\n", content_type=JSON_MEDIA_TYPE)
    if warnings:
        for text in warnings:
            response.headers.add("Warning", _warning_header(text))
    return response


def _warning_header(text: str) -> str:
    """A ``Warning`` header value as kube-apiserver writes it (RFC 7234, code 299)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def status_response(error: APIError) -> web.Response:
    """The ``Status`` response of a failure (with ``Retry-After`` when it says when to retry,
    as upstream's ``ErrorNegotiated``)."""
    response = json_response(error.code, _ENCODER.encode(error.to_status()))
    retry_after = (error.details or {}).get("retryAfterSeconds")
    if isinstance(retry_after, int) and retry_after > 0:
        response.headers["Retry-After"] = str(retry_after)
    return response


class APIHandler:
    """Serves the Kubernetes API over one aiohttp low-level handler."""

    def __init__(
        self,
        registry: ResourceRegistry,
        operations: ObjectOperations,
        token: str,
        *,
        on_namespace_terminating: Callable[[str], None],
        server_address: Callable[[], str],
        pod_endpoints: PodEndpoints | None = None,
        access: AccessControl | None = None,
        faults: FaultInjector | None = None,
        authenticator: Authenticator | None = None,
        audit: AuditLog | None = None,
        unconfined_pods: Callable[[], UnconfinedPodsGate | None] = lambda: None,
        clock: ClockEndpoint | None = None,
        audit_feed: AuditFeed | None = None,
    ) -> None:
        self._registry = registry
        #: ``/debug/setpoint/clock`` (None: not served).
        self.clock = clock
        #: Set when --run-pods cannot isolate pods (see unconfined_pods).
        self._unconfined_pods = unconfined_pods
        #: Fault injection (off unless rules are set; see fault_injection).
        self.faults = faults or FaultInjector()
        self._operations = operations
        #: Who is calling; without one only the admin token is accepted.
        self.authenticator = authenticator or Authenticator(token)
        self._redact = LogRedactor(token)
        self._on_namespace_terminating = on_namespace_terminating
        self._server_address = server_address
        self.pod_endpoints = pod_endpoints or PodEndpoints(lambda: None)
        self.resource_metrics = ResourceMetrics(
            lambda namespace: self._stored("pods", namespace),
            lambda: self._stored("nodes"),
            self.pod_endpoints.runtime,
        )
        self._access = access or AccessControl(operations)
        #: Where each request is logged (None: no audit log, the default).
        self.audit = audit
        #: The recent mutating requests, served at /debug/setpoint/audit (None: off).
        self.audit_feed = audit_feed
        self._media_types = MediaTypeCache()
        self._routes = RouteMemo(registry)
        self._openapi = OpenAPIDocuments(registry)
        self._watches: dict[Watch, str] = {}
        self._version_body = _ENCODER.encode(version_document())
        self._root_body = _ENCODER.encode({"paths": list(_ROOT_PATHS)})
        self.request_metrics = RequestMetrics()

    def close_watches(self, storage_root: str | None = None) -> None:
        """End the open watch streams (all, or those on one resource's storage root)."""
        for watch, root in list(self._watches.items()):
            if storage_root is None or root == storage_root:
                watch.close()

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        # One coroutine around the whole request (each level costs on every resumption).
        metrics = self.request_metrics
        counted = metrics.begin(request)
        code = 0  # no response: the request ended before one was made
        try:
            debug = log.isEnabledFor(logging.DEBUG)  # the request's log line: its duration
            started = time.perf_counter() if debug else 0.0
            if self.audit is not None:
                self.audit.begin(request)
            feed = self.audit_feed
            recording = feed.begin(request) if feed is not None else None
            try:
                injected = await self.faults.intercept(request) if self.faults.rules else None
                response = injected or await self._dispatch(request)
            except asyncio.CancelledError:
                if self.audit is not None:
                    self.audit.abandoned(request)  # the client left (a watch it stopped reading)
                if recording is not None:
                    AuditFeed.abandon(recording)
                raise
            except APIError as error:
                response = status_response(error)
            except ValueTooLargeError as exc:
                response = status_response(object_too_large(exc))
            except Exception as exc:
                log.exception(
                    "internal error serving %s %s",
                    request.method,
                    self._redact.path(request.path_qs),
                )
                response = status_response(status_errors.internal_error(str(exc) or repr(exc)))
            if self.audit is not None:
                self.audit.complete(request, response)
            if recording is not None:
                assert feed is not None
                feed.complete(request, response, recording)
            if debug:
                log.debug(
                    "%s %s %d %.1fms",
                    request.method,
                    self._redact.path(request.path_qs),
                    response.status,
                    (time.perf_counter() - started) * 1000,
                )
            code = response.status
        finally:
            metrics.end(counted, code)
        return response

    def _dispatch(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        """What answers ``request``. A resource path served before, the registry unchanged
        since, can go to no other route: after what every request goes through, its
        resource's own coroutine is returned to be awaited directly (a level less on every
        resumption); any other path goes through :meth:`_route`."""
        target = self._routes.get(request.path)
        if target is None or target.resource.deprecated_warning:
            return self._route(request)
        self._admit(request, None)
        if self._wants_yaml(request):
            return _yaml_answer(self._serve(request, target))
        return self._serve(request, target)

    async def _route(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path
        target = self._routes.get(path)
        if target is not None:
            # As in _dispatch, with the deprecated version's warning added.
            self._admit(request, None)
            if not self._wants_yaml(request):
                return _deprecation_warned(await self._serve(request, target), target)
            return await _yaml_answer(self._resource(request, target))
        parts = _segments(path)
        head = parts[0] if parts else ""
        if head in PUBLIC_PATHS:
            self.authenticator.authenticate_if_credentials(request)
            return self._public(request, parts)
        self._admit(request, parts)
        if head == "openapi":
            return serve_openapi(request, parts, self._openapi)
        if head == "metrics" and len(parts) == 1:
            return self.request_metrics.serve(request)
        if tuple(parts) == CLOCK_PATH and self.clock is not None:
            return await self.clock.serve(request)
        if parts == _AUDIT_FEED_PARTS and self.audit_feed is not None:
            return await self.audit_feed.serve(request)
        if head not in ("api", "apis"):
            if not parts:
                return web.Response(status=200, body=self._root_body, content_type=JSON_MEDIA_TYPE)
            raise status_errors.path_not_found()
        accept = request.headers.get("Accept")
        if not self._wants_yaml(request):
            return await self._api(request, parts, accept)
        return await _yaml_answer(self._api(request, parts, accept))

    def _admit(self, request: web.BaseRequest, parts: list[str] | None) -> None:
        """Authentication (401 unless the caller is known; then ``request_user(request)`` says
        who it is), impersonation and authorization (or 403), the unconfined-pods gate."""
        self._access.admit(request, self.authenticator.authenticate(request))
        gate = self._unconfined_pods()
        if gate is not None:
            segments = _segments(request.path) if parts is None else parts
            gate.check(request.method, segments, request_user(request))

    def _wants_yaml(self, request: web.BaseRequest) -> bool:
        """Whether the answer is YAML (by the ``Accept`` header); 406 if nothing acceptable."""
        media_type = self._media_types.negotiate(request.headers.get("Accept"))
        if media_type is None:
            raise status_errors.not_acceptable(PRODUCIBLE_MEDIA_TYPES)
        return media_type == YAML_MEDIA_TYPE

    async def _api(
        self, request: web.BaseRequest, parts: list[str], accept: str | None
    ) -> web.StreamResponse:
        located = group_version_path(parts)
        if located is not None:
            return await self._group_version(request, *located)
        if parts[0] == "api":
            aggregated = _aggregated_discovery_version(accept)
            if aggregated:
                listed = self._registry.aggregated_discovery(core=True, version=aggregated)
                return _aggregated(request, listed, aggregated)
            return self._discovery(request, self._registry.api_versions(self._server_address()))
        if len(parts) == 1:
            aggregated = _aggregated_discovery_version(accept)
            if aggregated:
                listed = self._registry.aggregated_discovery(core=False, version=aggregated)
                return _aggregated(request, listed, aggregated)
            return self._discovery(request, self._registry.api_group_list())
        body = self._registry.api_group(parts[1])
        if body is None:
            raise status_errors.path_not_found()
        return self._discovery(request, body)

    def _public(self, request: web.BaseRequest, parts: list[str]) -> web.Response:
        if request.method not in ("GET", "HEAD"):
            raise _method_not_allowed()
        if parts[0] == "version":
            if len(parts) > 1:
                raise status_errors.path_not_found()
            # Written raw upstream (``WriteRawJSON``), not by the serializer: no newline.
            return web.Response(status=200, body=self._version_body, content_type=JSON_MEDIA_TYPE)
        return web.Response(status=200, text="ok", content_type="text/plain")

    def _discovery(self, request: web.BaseRequest, body: bytes) -> web.Response:
        if request.method not in ("GET", "HEAD"):
            raise _method_not_allowed()
        return json_response(200, body)

    async def _group_version(
        self, request: web.BaseRequest, group: str, version: str, rest: list[str]
    ) -> web.StreamResponse:
        if not self._registry.has_group_version(group, version):
            raise status_errors.path_not_found()
        if not rest:
            body = self._registry.resource_list(group, version)
            if body is None:
                raise status_errors.path_not_found()
            return self._discovery(request, body)
        target = resource_target(self._registry, group, version, rest)
        self._routes.put(request.path, target)
        return await self._resource(request, target)

    async def _resource(
        self, request: web.BaseRequest, target: ResourceTarget
    ) -> web.StreamResponse:
        return _deprecation_warned(await self._serve(request, target), target)

    async def _serve(self, request: web.BaseRequest, target: ResourceTarget) -> web.StreamResponse:
        method = request.method
        resource = target.resource
        ops = self._operations
        if not resource.group and resource.plural in COMPUTED_CORE_RESOURCES:
            return await self._computed_core(request, target)
        if resource.group == METRICS_GROUP:
            return self._resource_metrics(request, target)
        if target.watch_path and target.name is not None and not target.subresource:
            # The deprecated /watch/.../NAME form: a watch selecting one object by name.
            if method != "GET":
                raise _method_not_allowed()
            query = query_dict(request.query)
            selector = f"metadata.name={target.name}"
            if query.get("fieldSelector"):
                selector = f"{query['fieldSelector']},{selector}"
            query["fieldSelector"] = selector
            options = parse_list_options(query, watch=True)
            _require_verb(resource, "watch")
            return await serve_watch(
                request, ops, resource, target.namespace, options, self._watches
            )
        if target.name is None:
            if method == "GET":
                query = query_dict(request.query)
                options = parse_list_options(query, watch=target.watch_path)
                tables = table_writer(request, resource)
                if options.watch:
                    _require_verb(resource, "watch")
                    return await serve_watch(
                        request,
                        ops,
                        resource,
                        target.namespace,
                        options,
                        self._watches,
                        tables.event_transform() if tables else None,
                    )
                _require_verb(resource, "list")
                listed = await ops.settled_read(
                    lambda: ops.list_collection(resource, target.namespace, options),
                    list_read_prefix(resource, target.namespace, options),
                )
                return json_response(200, tables.list_body(listed) if tables else listed)
            if method == "POST":
                _require_verb(resource, "create")
                body = await request_body.read_body(request)
                obj = request_body.decode_object_body(request, body)
                if reviews.is_review(resource.group, resource.plural):
                    answer = reviews.answer(
                        resource.group,
                        resource.plural,
                        obj,
                        request_user(request),
                        self._access.authorizer,
                        target.namespace,
                    )
                    return json_response(201, encode_json(answer))
                if is_token_review(resource.group, resource.plural):
                    answer = review_token(obj, self.authenticator)
                    return json_response(201, encode_json(answer))
                duplicates = check_duplicate_fields(request, body, resource, obj)
                result = await ops.create(resource, target.namespace, obj, write_options(request))
                return _result(result, duplicates)
            if method == "DELETE":
                _require_verb(resource, "deletecollection")
                removal = await delete_options(request)
                list_options = parse_list_options(query_dict(request.query))
                result = await ops.delete_collection(
                    resource, target.namespace, list_options, removal
                )
                return _result(result)
            raise _method_not_allowed()
        name = target.name
        if self.pod_endpoints.serves(resource, target.subresource):
            return await self.pod_endpoints.serve(
                request, ops, resource, target.namespace or "", name, target.subresource
            )
        if target.subresource == "token" and resource.plural == "serviceaccounts":
            return await self._token_request(request, target.namespace or "", name)
        if target.subresource == "scale":
            return await self._scale(request, resource, target.namespace, name)
        if target.subresource == "finalize":
            if method != "PUT":
                raise _method_not_allowed()
            return await self._finalize(request, resource, name)
        if method == "GET":
            _require_verb(resource, "get")

            async def read_one() -> bytes:
                return await ops.get(resource, target.namespace, name)

            key = resource.storage_key(target.namespace, name)
            found = await ops.settled_read(read_one, key)
            tables = table_writer(request, resource)
            return json_response(200, tables.object_body(found) if tables else found)
        if method == "PUT":
            _require_verb(resource, "update")
            body = await request_body.read_body(request)
            obj = request_body.decode_object_body(request, body)
            duplicates = check_duplicate_fields(request, body, resource, obj)
            result = await ops.update(
                resource, target.namespace, name, obj, write_options(request), target.subresource
            )
            return _result(result, duplicates)
        if method == "PATCH":
            _require_verb(resource, "patch")
            return await self._patch(request, target)
        if method == "DELETE":
            if target.subresource:
                raise _method_not_allowed()
            _require_verb(resource, "delete")
            removal = await delete_options(request)
            if resource.plural == "namespaces" and not resource.group:
                result = await delete_namespace(
                    ops, resource, name, removal, self._on_namespace_terminating
                )
            else:
                result = await ops.delete(resource, target.namespace, name, removal)
            return _result(result)
        raise _method_not_allowed()

    def _stored(self, plural: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Every stored core ``plural`` object (in ``namespace`` when given), decoded."""
        served = self._registry.get("", "v1", plural)
        assert served is not None
        prefix = served.storage_prefix(namespace)
        return [decode(record.value) for record in self._operations.storage.list(prefix)]

    def _resource_metrics(self, request: web.BaseRequest, target: ResourceTarget) -> web.Response:
        """``metrics.k8s.io`` reads (see :mod:`..kinds.resource_metrics`)."""
        if request.method not in ("GET", "HEAD") or target.watch_path:
            raise _method_not_allowed()
        _require_verb(target.resource, "list" if target.name is None else "get")
        metrics = self.resource_metrics
        nodes = target.resource.plural == "nodes"
        if target.name is not None:
            found = (
                metrics.node(target.name) if nodes else metrics.pod(target.namespace, target.name)
            )
        else:
            options = parse_list_options(query_dict(request.query))
            name = None
            if options.field_selector is not None:
                name = options.field_selector.requires_exact_match("metadata.name")
            selector = options.label_selector
            found = (
                metrics.nodes(selector, name)
                if nodes
                else metrics.pods(target.namespace, selector, name)
            )
        encoded = encode_json(found)
        tables = table_writer(request, target.resource)
        if tables is not None:  # metrics-server's Tables (kubectl get nodes.metrics.k8s.io)
            encoded = (
                tables.list_body(encoded) if target.name is None else tables.object_body(encoded)
            )
        return json_response(200, encoded)

    async def _computed_core(
        self, request: web.BaseRequest, target: ResourceTarget
    ) -> web.StreamResponse:
        """``componentstatuses`` (computed on read) and ``bindings`` (a pod's binding)."""
        resource = target.resource
        if resource.plural == "bindings":
            if request.method != "POST" or target.name is not None:
                raise _method_not_allowed()
            binding = request_body.decode_object_body(
                request, await request_body.read_body(request)
            )
            pods = self._registry.get("", "v1", "pods")
            assert pods is not None
            name = (binding.get("metadata") or {}).get("name") or ""
            result = await bind_pod(self._operations, pods, target.namespace or "", name, binding)
            return _result(result)
        if request.method not in ("GET", "HEAD") or target.watch_path:
            raise _method_not_allowed()
        found = (
            component_status_list() if target.name is None else get_component_status(target.name)
        )
        tables = table_writer(request, resource)
        encoded = encode_json(found)
        if tables is not None:
            encoded = (
                tables.list_body(encoded) if target.name is None else tables.object_body(encoded)
            )
        return json_response(200, encoded)

    async def _patch(self, request: web.BaseRequest, target: ResourceTarget) -> web.Response:
        result = await patch_object(
            self._operations,
            target.resource,
            target.namespace,
            target.name or "",
            target.subresource,
            request,
            write_options(request),
        )
        return _result(result)

    async def _token_request(
        self, request: web.BaseRequest, namespace: str, name: str
    ) -> web.Response:
        tokens = self.authenticator.service_accounts
        if tokens is None:
            raise status_errors.path_not_found()
        if request.method != "POST":
            raise _method_not_allowed()
        body = request_body.decode_object_body(request, await request_body.read_body(request))
        answer = create_token(body, namespace, name, tokens, tokens.lookup)
        return json_response(201, encode_json(answer))

    async def _scale(
        self,
        request: web.BaseRequest,
        resource: ServedResource,
        namespace: str | None,
        name: str,
    ) -> web.Response:
        method = request.method
        ops = self._operations
        if method == "GET":

            async def read_scale() -> bytes:
                record = ops.get_record(resource, namespace, name)
                obj = await ops.present_object(resource, decode(record.value))
                return encode_json(scale_of(resource, obj))

            key = resource.storage_key(namespace, name)
            scale_body = await ops.settled_read(read_scale, key)
            tables = table_writer(request, resource, "scale")
            return json_response(200, tables.object_body(scale_body) if tables else scale_body)
        record = ops.get_record(resource, namespace, name)
        obj = await ops.present_object(resource, decode(record.value))
        scale = scale_of(resource, obj)
        if method not in ("PUT", "PATCH"):
            raise _method_not_allowed()
        body = await request_body.read_body(request)
        if method == "PUT":
            desired = request_body.decode_object_body(request, body)
        else:
            desired = apply_patch(request, resource, scale, body, scale_patch=True)
        desired_meta = desired.get("metadata") if isinstance(desired, dict) else None
        requested_rv = (
            desired_meta.get("resourceVersion") if isinstance(desired_meta, dict) else None
        )
        if requested_rv and parse_resource_version(str(requested_rv)) != record.revision:
            raise status_errors.stale_resource_version(resource.group, resource.plural, name)
        replicas = (
            (desired.get("spec") or {}).get("replicas") if isinstance(desired, dict) else None
        )
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise status_errors.invalid(
                "autoscaling",
                "Scale",
                name,
                [fe.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
            )
        new = copy.deepcopy(obj)
        crds.write_path(new, spec_replicas_path(resource), replicas)
        options = write_options(request)
        options.fields_subresource = "scale"
        result = await ops.update_object(resource, record, new, options)
        if result.code >= 300:
            return _result(result)
        return json_response(200, encode_json(scale_of(resource, decode(result.body))))

    async def _finalize(
        self, request: web.BaseRequest, resource: ServedResource, name: str
    ) -> web.Response:
        ops = self._operations
        body = request_body.decode_object_body(request, await request_body.read_body(request))
        record = ops.get_record(resource, None, name)
        current = decode(record.value)
        metadata = body.get("metadata")
        requested_rv = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
        if requested_rv and parse_resource_version(str(requested_rv)) != record.revision:
            raise status_errors.stale_resource_version("", "namespaces", name)
        spec = body.get("spec")
        finalizers = (spec.get("finalizers") if isinstance(spec, dict) else None) or []
        if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
            raise status_errors.invalid(
                "",
                "Namespace",
                name,
                [fe.invalid("spec.finalizers", finalizers, "must be a list of strings")],
            )
        current_spec = dict(current.get("spec") or {})
        if finalizers:
            current_spec["finalizers"] = list(finalizers)
        else:
            current_spec.pop("finalizers", None)
        current["spec"] = current_spec
        result = await finalize_namespace(ops, resource, record.key, current, record.revision)
        if "deletionTimestamp" in current["metadata"] and NAMESPACE_FINALIZER in finalizers:
            self._on_namespace_terminating(name)
        return _result(result)


def _deprecation_warned(response: web.StreamResponse, target: ResourceTarget) -> web.StreamResponse:
    """``response`` with the warning of a deprecated version, if it has none yet."""
    warning = target.resource.deprecated_warning
    if warning and not response.prepared and "Warning" not in response.headers:
        # Deprecated versions warn on every request, reads included (writes already do).
        response.headers.add("Warning", _warning_header(warning))
    return response


def _segments(path: str) -> list[str]:
    """The non-empty segments of a path (``/x/`` is ``/x``, as upstream)."""
    return [part for part in path.split("/") if part]


async def _yaml_answer(answer: Awaitable[web.StreamResponse]) -> web.StreamResponse:
    """``answer`` (a failure's Status too) re-encoded as YAML."""
    try:
        response = await answer
    except APIError as error:
        response = status_response(error)
    return _as_yaml(response)


def _aggregated_discovery_version(accept: str | None) -> str:
    """The apidiscovery.k8s.io version the client asks for first ('' for legacy discovery).

    kubectl 1.30+ accepts v2 then v2beta1; kubectl 1.27-1.29 (client-go before 0.30) only
    v2beta1. Parameters may come in any order (client-go compares them as a set).
    """
    if not accept or AGGREGATED_DISCOVERY_AS not in accept:
        return ""
    for item in accept.split(","):
        media, *raw_params = (p.strip() for p in item.split(";"))
        params = {p.replace(" ", "") for p in raw_params}
        if media != "application/json" or AGGREGATED_DISCOVERY_AS not in params:
            continue
        if "g=apidiscovery.k8s.io" not in params:
            continue
        for version in AGGREGATED_DISCOVERY_VERSIONS:
            if f"v={version}" in params:
                return version
    return ""


def _aggregated(request: web.BaseRequest, body: bytes, version: str) -> web.Response:
    if request.method not in ("GET", "HEAD"):
        raise _method_not_allowed()
    response = web.Response(status=200, body=body + b"\n")
    # Set verbatim: client-go picks the parser from these parameters.
    response.headers["Content-Type"] = (
        f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
    )
    return response


def _as_yaml(response: web.StreamResponse) -> web.StreamResponse:
    """A JSON answer re-encoded as YAML; streams (watches) and other types are left as they are."""
    if (
        isinstance(response, web.Response)
        and not response.prepared
        and response.content_type == JSON_MEDIA_TYPE
        and isinstance(response.body, bytes)
    ):
        response.body = json_to_yaml(response.body)
        response.content_type = YAML_MEDIA_TYPE
    return response


def _result(result: Result, warnings: list[str] | None = None) -> web.Response:
    if warnings and result.code < 300:
        return json_response(result.code, result.body, [*warnings, *(result.warnings or [])])
    return json_response(result.code, result.body, result.warnings)


def _method_not_allowed() -> APIError:
    return APIError(
        405,
        StatusReason.METHOD_NOT_ALLOWED,
        "the server does not allow this method on the requested resource",
    )


def _require_verb(resource: ServedResource, verb: str) -> None:
    if resource.is_custom:
        # A terminating CRD's resources list fewer verbs in discovery, but only creates are
        # refused: finalizers must still be removable (``customresource_handler.go``).
        if verb == "create" and resource.terminating:
            raise APIError(
                405,
                StatusReason.METHOD_NOT_ALLOWED,
                "create not allowed while custom resource definition is terminating",
                details={"group": resource.group, "kind": resource.plural},
            )
        return
    if verb not in resource.verbs:
        raise _method_not_allowed()
