"""The API client: :class:`Client`.

One ``Client`` talks to one API server through one aiohttp session::

    async with Client.from_kubeconfig() as client:      # closed on exit
        ...
    client = await Client.from_environment()            # in a pod: the service account
    ...
    await client.close()

(also ``Client.in_cluster()`` and ``Client.from_config(config)``).

Addressing objects: every call names the type by ``apiVersion`` and ``kind`` (discovery finds
the URL), or takes an object (dict or pydantic model) that carries them::

    cm = await client.get("v1", "ConfigMap", "settings", namespace="prod")
    cm["data"]["mode"] = "fast"
    cm = await client.update(cm)
    await client.patch("apps/v1", "Deployment", "web", {"spec": {"replicas": 3}}, namespace="prod")
    await client.apply(desired, field_manager="my-operator", force=True)
    async for event in client.watch("v1", "ConfigMap", namespace="prod"):
        print(event.type, event.object["metadata"]["name"])

Namespaces: for namespaced kinds, single-object calls use the ``namespace`` argument, else the
object's ``metadata.namespace``, else ``client.default_namespace`` (the kubeconfig context's or
the pod's namespace). ``list`` and ``watch`` without ``namespace`` cover all namespaces, as in
controller-runtime; ``delete_collection`` uses the default namespace (the API has no
all-namespaces delete). Cluster-scoped kinds ignore namespaces.

Watches hold a connection until the loop ends; to stop early and release it at once, wrap the
iterator: ``async with contextlib.aclosing(client.watch(...)) as events: async for ...``.

Objects go in and come out as dicts; pass a pydantic model instance (or, for ``get``, ``list``
and ``watch``, a model class) to get model instances back (see
:mod:`setpoint.client.typed_objects`).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from setpoint.api.gvk import ResourceInfo
from setpoint.api.meta import is_model, is_model_class
from setpoint.client import json_codec
from setpoint.client.answer_capture import ANSWER_CAPTURE
from setpoint.client.client_opening import ClientOpening
from setpoint.client.config import ClientConfig
from setpoint.client.errors import (
    ConfigError,
    ConnectionFailed,
    Gone,
    InvalidResponse,
    NotFound,
    error_from_status,
)
from setpoint.client.object_list import ObjectList
from setpoint.client.query_params import (
    Selector,
    check_path_segment,
    field_selector_param,
    is_path_segment,
    label_selector_param,
)
from setpoint.client.request_options import (
    FieldValidation,
    PatchType,
    Preconditions,
    PropagationPolicy,
    delete_options_body,
    write_params,
)
from setpoint.client.rest_mapper import RESTMapper
from setpoint.client.retry_policy import RetryPolicy
from setpoint.client.server_warnings import WarningHandler
from setpoint.client.transport import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    WATCH_READ_GRACE,
    Transport,
    TransportOptions,
    watch_lines,
)
from setpoint.client.typed_objects import (
    ObjectLike,
    as_dict,
    model_type_of,
    static_type_fields,
    to_model,
)
from setpoint.client.watch_event import WatchEvent, WatchEventType

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["DEFAULT_PAGE_SIZE", "Client", "ClientOpening", "ObjectList"]

LOGGER = logging.getLogger("setpoint.client")

# Page size for transparent pagination: what kubectl and client-go's pager use.
DEFAULT_PAGE_SIZE = 500
# Field manager for server-side apply when neither the call nor the client names one
# (the server requires one for apply).
DEFAULT_APPLY_FIELD_MANAGER = "setpoint"
# Pause before wait_for resumes an ended or broken watch: short for the caller, but a server
# that keeps closing watches at once is not hammered.
WAIT_FOR_RESUME_DELAY = 0.2
# client-go's DefaultBurst; only used when a qps is given.
DEFAULT_BURST = 10

ModelT = TypeVar("ModelT", bound="BaseModel")


@dataclass(slots=True)  # not frozen: a frozen __init__ costs more, and each call makes one
class _Target:
    api_version: str
    kind: str
    name: str | None
    namespace: str | None
    model: type[BaseModel] | None
    body: dict[str, Any] | None


def _metadata(body: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = body.get("metadata")
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValueError("metadata: must be an object")
    return metadata


def _decode_object(data: bytes) -> dict[str, Any]:
    decoded = json_codec.decode(data)
    if not isinstance(decoded, dict):
        raise InvalidResponse(
            f"the server answered with JSON that is not an object: {type(decoded).__name__}"
        )
    return decoded


class Client:
    """An async client for one Kubernetes API server (see the module docs for the tour)."""

    def __init__(
        self,
        config: ClientConfig,
        transport: Transport,
        *,
        field_manager: str | None = None,
    ) -> None:
        """Internal; use ``await Client.from_config(...)`` and friends, which open the session."""
        self.config = config
        self.default_namespace = config.namespace
        self.field_manager = field_manager
        self.transport = transport
        self.mapper = RESTMapper(transport)
        # (apiVersion, kind, namespace) -> the path of that collection, while the mapper's
        # discovery is that of generation _paths_generation.
        self._paths: dict[tuple[str, str, str | None], str] = {}
        self._paths_generation = -1

    def __repr__(self) -> str:
        return f"<Client {self.config.server} namespace={self.default_namespace!r}>"

    # --- construction and lifetime ------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        config: ClientConfig,
        *,
        namespace: str | None = None,
        qps: float | None = None,
        burst: int = DEFAULT_BURST,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        field_manager: str | None = None,
        user_agent: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        on_warning: Callable[[str], None] | None = None,
        impersonate_user: str | None = None,
        impersonate_groups: Sequence[str] = (),
    ) -> ClientOpening[Client]:
        """Open a client for ``config``: ``await Client.from_config(c)`` or ``async with ...``.

        ``qps``/``burst``: client-side token bucket (off unless ``qps`` > 0). ``retry`` or
        ``max_retries``: retry policy for 429/5xx/connection errors (``max_retries=0`` disables).
        ``field_manager``: default ``fieldManager`` of writes. ``namespace`` overrides the
        config's default namespace. ``user_agent`` replaces ``setpoint/<version>``.
        ``on_warning`` receives every server warning text (default: log each text once).
        ``impersonate_user`` / ``impersonate_groups``: act as that user (and groups) with the
        ``Impersonate-User`` / ``Impersonate-Group`` headers, as ``kubectl --as``/``--as-group``
        (the credentials' user must be allowed to ``impersonate``); they replace the
        kubeconfig's ``as``/``as-groups``.
        """
        if impersonate_user is None and impersonate_groups:
            raise ConfigError("impersonate_groups: requires impersonate_user (as kubectl --as)")

        async def open_client() -> Client:
            opened = config
            if impersonate_user is not None:
                opened = dataclasses.replace(
                    opened,
                    impersonate_user=impersonate_user,
                    impersonate_groups=tuple(impersonate_groups),
                    impersonate_uid=None,
                    impersonate_extra={},
                )
            if namespace:
                opened = opened.with_namespace(namespace)
            if user_agent:
                opened = opened.with_user_agent(user_agent)
            policy = retry or RetryPolicy()
            if max_retries is not None:
                policy = RetryPolicy(max_retries, policy.initial_backoff, policy.max_backoff)
            options = TransportOptions(
                qps=qps,
                burst=burst,
                retry=policy,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
            )
            transport = Transport(opened, options)
            if on_warning is not None:
                transport.warnings = WarningHandler(sink=on_warning)
            await transport.open()
            return cls(opened, transport, field_manager=field_manager)

        return ClientOpening(open_client)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        **options: Any,
    ) -> ClientOpening[Client]:
        """Open a client from a kubeconfig: ``path``, else ``$KUBECONFIG``, else ``~/.kube/config``.

        ``options`` are those of :meth:`from_config`.
        """

        async def open_client() -> Client:
            config = ClientConfig.from_kubeconfig(path, context=context)
            return await cls.from_config(config, **options)

        return ClientOpening(open_client)

    @classmethod
    def in_cluster(cls, **options: Any) -> ClientOpening[Client]:
        """Open a client with the pod's service account (see :meth:`ClientConfig.in_cluster`)."""

        async def open_client() -> Client:
            return await cls.from_config(ClientConfig.in_cluster(), **options)

        return ClientOpening(open_client)

    @classmethod
    def from_environment(cls, **options: Any) -> ClientOpening[Client]:
        """In a pod, the service account; elsewhere the kubeconfig (as controller-runtime does)."""
        if os.environ.get("KUBERNETES_SERVICE_HOST") and not os.environ.get("KUBECONFIG"):
            return cls.in_cluster(**options)
        return cls.from_kubeconfig(**options)

    async def close(self) -> None:
        """Close the HTTP session. Open watches end."""
        await self.transport.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: builtins.type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- raw access (the cache's hot path: no decoding) ---------------------------------------

    async def list_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> bytes:
        """One LIST request; returns the raw JSON body (one page when ``limit`` is set)."""
        params: dict[str, str] = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if limit is not None:
            params["limit"] = str(int(limit))
        if continue_token:
            params["continue"] = continue_token
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if resource_version_match:
            params["resourceVersionMatch"] = resource_version_match
        path = resource.path(namespace if resource.namespaced else None)
        response = await self.transport.request("GET", path, params=params)
        return response.body

    async def watch_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
        timeout_seconds: int | None = None,
        send_initial_events: bool = False,
        announce_open: bool = False,
    ) -> AsyncGenerator[bytes, None]:
        """Stream raw watch event lines (bytes without the newline), one per event.

        ``announce_open`` first yields one empty line as soon as the server has accepted the
        watch, so that a caller can tell "connected, nothing happened yet" from "connecting".

        Raises :class:`~setpoint.client.errors.ApiError` (e.g. ``Gone``) if the server refuses
        the watch, and :class:`~setpoint.client.errors.ConnectionFailed` if the connection
        breaks mid-stream. Ends when the server closes the stream. A 410 ``ERROR`` event line is
        yielded as is.
        """
        params: dict[str, str] = {"watch": "true"}
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if allow_bookmarks or send_initial_events:
            params["allowWatchBookmarks"] = "true"
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(int(timeout_seconds))
        if send_initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        read_timeout = timeout_seconds + WATCH_READ_GRACE if timeout_seconds else None
        path = resource.path(namespace if resource.namespaced else None)
        response = await self.transport.open_stream(
            "GET", path, params=params, read_timeout=read_timeout
        )
        finished = False
        try:
            if announce_open:
                yield b""
            async for line in watch_lines(response, path):
                yield line
            finished = True
        finally:
            if finished:
                response.release()
            else:
                response.close()  # abandoned mid-stream: do not return the connection to the pool

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        """Escape hatch: any request by path; encodes ``body`` and decodes the JSON answer."""
        data = json_codec.encode(body) if body is not None else None
        response = await self.transport.request(
            method, path, params=params, body=data, content_type=content_type if data else None
        )
        return json_codec.decode(response.body) if response.body else None

    async def server_version(self) -> dict[str, Any]:
        """``GET /version``: ``{"major", "minor", "gitVersion", ...}``."""
        result = await self.request_json("GET", "/version")
        return result if isinstance(result, dict) else {}

    # --- resolving what a call talks about ----------------------------------------------------

    def _target(
        self,
        first: str | ObjectLike | builtins.type[BaseModel],
        kind: str | None,
        name: str | None,
        namespace: str | None,
        *,
        need_name: bool,
    ) -> _Target:
        if type(first) is dict:  # the common case first, without the ABC checks below
            # Not copied: the body is only read (encoded), never changed or kept.
            return self._object_target(first, None, namespace, need_name=need_name)
        if isinstance(first, str):
            if not kind:
                raise ValueError(f"kind: required after apiVersion {first!r}")
            if need_name and not name:
                raise ValueError(f"name: required to address one {kind}")
            return _Target(first, kind, name, namespace, None, None)
        if is_model_class(first):
            model_api_version, model_kind = static_type_fields(first)
            # With a model class the second positional argument is the name.
            obj_name = kind if name is None else name
            if need_name and not obj_name:
                raise ValueError(f"name: required to address one {model_kind}")
            return _Target(model_api_version, model_kind, obj_name, namespace, first, None)
        return self._object_target(
            as_dict(first), model_type_of(first), namespace, need_name=need_name
        )

    @staticmethod
    def _object_target(
        body: dict[str, Any],
        model: builtins.type[BaseModel] | None,
        namespace: str | None,
        *,
        need_name: bool,
    ) -> _Target:
        api_version = body.get("apiVersion")
        obj_kind = body.get("kind")
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("apiVersion: the object must have a non-empty apiVersion")
        if not isinstance(obj_kind, str) or not obj_kind:
            raise ValueError("kind: the object must have a non-empty kind")
        metadata = body.get("metadata")
        if type(metadata) is not dict:
            metadata = _metadata(body)
        obj_name = metadata.get("name")
        if need_name and (not isinstance(obj_name, str) or not obj_name):
            raise ValueError(f"metadata.name: required to address one {obj_kind}")
        obj_namespace = namespace or metadata.get("namespace") or None
        return _Target(
            api_version,
            obj_kind,
            obj_name if isinstance(obj_name, str) else None,
            obj_namespace,
            model,
            body,
        )

    def _known_path(
        self, target: _Target, subresource: str | None = None, *, with_name: bool = True
    ) -> str | None:
        """What :meth:`_path` would answer, from cached discovery without awaiting; None when
        discovery must be asked, or for anything unusual (which :meth:`_path` then reports)."""
        mapper = self.mapper
        if self._paths_generation != mapper.generation:
            self._paths.clear()
            self._paths_generation = mapper.generation
        namespace: str | None = target.namespace or self.default_namespace
        key = (target.api_version, target.kind, namespace)
        collection = self._paths.get(key)
        if collection is None:
            info = mapper.cached_resource_for(target.api_version, target.kind)
            if info is None:
                return None
            if not info.namespaced:
                namespace = None
            check_path_segment("metadata.namespace", namespace)
            collection = self._paths[key] = info.path(namespace)
        if not with_name:
            return None if subresource else collection
        name = target.name
        if not name or not is_path_segment(name):
            return None
        if subresource:
            if not is_path_segment(subresource):
                return None
            return f"{collection}/{name}/{subresource}"
        return f"{collection}/{name}"

    async def _path(
        self, target: _Target, *, subresource: str | None = None, with_name: bool = True
    ) -> tuple[ResourceInfo, str]:
        info = await self.mapper.resource_for(target.api_version, target.kind)
        namespace = (target.namespace or self.default_namespace) if info.namespaced else None
        name = target.name if with_name else None
        check_path_segment("metadata.namespace", namespace)
        check_path_segment("metadata.name", name)
        check_path_segment("subresource", subresource)
        return info, info.path(namespace, name, subresource)

    def _result(self, data: bytes, model: builtins.type[BaseModel] | None) -> Any:
        decoded = json_codec.decode(data)
        if type(decoded) is not dict:
            decoded = _decode_object(data)  # raises the error that names what came instead
        capture = ANSWER_CAPTURE.get()
        if capture is not None:
            capture.body = data
        if model is not None and decoded.get("kind") != "Status":
            return to_model(decoded, model)
        return decoded

    def _write_params(
        self,
        *,
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | str | None,
        force: bool | None = None,
    ) -> dict[str, str]:
        return write_params(
            dry_run=dry_run,
            field_manager=field_manager or self.field_manager,
            field_validation=field_validation,
            force=force,
        )

    # --- reads --------------------------------------------------------------------------------

    @overload
    async def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]: ...

    @overload
    async def get(
        self,
        api_version: builtins.type[ModelT],
        kind: str,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> ModelT: ...

    @overload
    async def get(
        self, api_version: ModelT, *, namespace: str | None = None, subresource: str | None = None
    ) -> ModelT: ...

    @overload
    async def get(
        self,
        api_version: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]: ...

    async def get(
        self,
        api_version: str | ObjectLike | builtins.type[BaseModel],
        kind: str | None = None,
        name: str | None = None,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> Any:
        """Read one object: ``get("v1", "ConfigMap", "x", namespace="ns")``.

        Also ``get(obj)`` (re-read the object ``obj`` names) and ``get(Model, "x")`` (a CRD model
        class with apiVersion/kind defaults; returns a model). ``subresource`` e.g. ``"scale"``.
        Raises :class:`~setpoint.client.errors.NotFound` when absent.
        """
        target = self._target(api_version, kind, name, namespace, need_name=True)
        path = self._known_path(target, subresource)
        if path is None:
            _, path = await self._path(target, subresource=subresource)
        response = await self.transport.request("GET", path)
        return self._result(response.body, target.model)

    @overload
    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = ...,
        label_selector: Selector | None = ...,
        field_selector: Selector | None = ...,
        page_size: int | None = ...,
        resource_version: str | None = ...,
        resource_version_match: str | None = ...,
        limit: int | None = ...,
        continue_token: str | None = ...,
    ) -> ObjectList[dict[str, Any]]: ...

    @overload
    async def list(
        self,
        api_version: builtins.type[ModelT],
        kind: None = ...,
        *,
        namespace: str | None = ...,
        label_selector: Selector | None = ...,
        field_selector: Selector | None = ...,
        page_size: int | None = ...,
        resource_version: str | None = ...,
        resource_version_match: str | None = ...,
        limit: int | None = ...,
        continue_token: str | None = ...,
    ) -> ObjectList[ModelT]: ...

    async def list(
        self,
        api_version: str | builtins.type[BaseModel],
        kind: str | None = None,
        *,
        namespace: str | None = None,
        label_selector: Selector | None = None,
        field_selector: Selector | None = None,
        page_size: int | None = DEFAULT_PAGE_SIZE,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList[Any]:
        """List objects, all pages: ``list("v1", "Pod", namespace="n", label_selector={"a": "b"})``.

        Without ``namespace`` a namespaced kind is listed across all namespaces. Pages of
        ``page_size`` are fetched transparently (``None``: one request); if a continue token
        expires mid-way, the list restarts as one unpaginated request (as client-go's pager).
        Selectors are strings, ``{"key": "value"}`` mappings, or ``setpoint.api`` selectors.

        Manual paging: ``limit`` returns one page of at most ``limit`` items with
        ``ObjectList.continue_token`` set when more remain; pass it back as ``continue_token``.
        """
        target = self._target(api_version, kind, None, namespace, need_name=False)
        check_path_segment("namespace", namespace)
        info = await self.mapper.resource_for(target.api_version, target.kind)
        labels = label_selector_param(label_selector)
        fields = field_selector_param(field_selector)
        if limit is not None:
            if limit < 1:
                raise ValueError(f"limit: must be >= 1, got {limit}")
            body = await self.list_raw(
                info,
                namespace,
                label_selector=labels,
                field_selector=fields,
                limit=limit,
                continue_token=continue_token,
                resource_version=None if continue_token else resource_version,
                resource_version_match=None if continue_token else resource_version_match,
            )
            return self._object_list(_decode_object(body), info, target.model)
        if page_size is not None and page_size < 1:
            raise ValueError(f"page_size: must be >= 1 or None, got {page_size}")
        items: list[Any] = []
        token: str | None = None
        document: dict[str, Any] = {}
        page_limit = page_size
        while True:
            try:
                body = await self.list_raw(
                    info,
                    namespace,
                    label_selector=labels,
                    field_selector=fields,
                    limit=page_limit,
                    continue_token=token,
                    resource_version=None if token else resource_version,
                    resource_version_match=None if token else resource_version_match,
                )
            except Gone:
                if token is None:
                    raise
                items, token, page_limit = [], None, None  # the snapshot expired: full list
                continue
            document = _decode_object(body)
            page = document.get("items") or []
            if target.model is not None:
                page = [to_model(item, target.model) for item in page]
            items.extend(page)
            metadata = document.get("metadata") or {}
            token = metadata.get("continue") or None
            if not token:
                break
        document["items"] = items
        document.setdefault("metadata", {}).pop("continue", None)
        return self._object_list(document, info, None)

    @staticmethod
    def _object_list(
        document: dict[str, Any], info: ResourceInfo, model: builtins.type[BaseModel] | None
    ) -> ObjectList[Any]:
        metadata = dict(document.get("metadata") or {})
        items = document.get("items") or []
        if model is not None:
            items = [to_model(item, model) for item in items]
        return ObjectList(
            items=items,
            resource_version=str(metadata.get("resourceVersion") or ""),
            kind=str(document.get("kind") or info.list_kind),
            api_version=str(document.get("apiVersion") or info.api_version),
            metadata=metadata,
            continue_token=metadata.get("continue") or None,
        )

    @overload
    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = ...,
        name: str | None = ...,
        resource_version: str | None = ...,
        label_selector: Selector | None = ...,
        field_selector: Selector | None = ...,
        timeout_seconds: int | None = ...,
        bookmarks: bool = ...,
        send_initial_events: bool = ...,
    ) -> AsyncGenerator[WatchEvent[dict[str, Any]], None]: ...

    @overload
    def watch(
        self,
        api_version: builtins.type[ModelT],
        kind: None = ...,
        *,
        namespace: str | None = ...,
        name: str | None = ...,
        resource_version: str | None = ...,
        label_selector: Selector | None = ...,
        field_selector: Selector | None = ...,
        timeout_seconds: int | None = ...,
        bookmarks: bool = ...,
        send_initial_events: bool = ...,
    ) -> AsyncGenerator[WatchEvent[ModelT], None]: ...

    async def watch(
        self,
        api_version: str | builtins.type[BaseModel],
        kind: str | None = None,
        *,
        namespace: str | None = None,
        name: str | None = None,
        resource_version: str | None = None,
        label_selector: Selector | None = None,
        field_selector: Selector | None = None,
        timeout_seconds: int | None = None,
        bookmarks: bool = False,
        send_initial_events: bool = False,
    ) -> AsyncGenerator[WatchEvent[Any], None]:
        """Watch changes: ``async for event in client.watch("v1", "ConfigMap", namespace="ns")``.

        Without ``resource_version`` the server first sends the current objects as ``ADDED``;
        pass a list's ``resource_version`` to see only later changes. ``name`` watches one
        object. Bookmarks are requested from the server always, and yielded only when
        ``bookmarks=True``. An ``ERROR`` event raises its error (``Gone`` for 410: list again).
        The iteration ends when the server closes the stream (e.g. after ``timeout_seconds``).
        """
        target = self._target(api_version, kind, None, namespace, need_name=False)
        check_path_segment("namespace", namespace)
        info = await self.mapper.resource_for(target.api_version, target.kind)
        fields = field_selector_param(field_selector)
        if name:
            from setpoint.api.field_selectors import escape_field_value

            by_name = f"metadata.name={escape_field_value(name)}"
            fields = f"{fields},{by_name}" if fields else by_name
        lines = self.watch_raw(
            info,
            namespace,
            resource_version=resource_version,
            label_selector=label_selector_param(label_selector),
            field_selector=fields,
            allow_bookmarks=True,
            timeout_seconds=timeout_seconds,
            send_initial_events=send_initial_events,
        )
        try:
            async for line in lines:
                event = json_codec.decode(line)
                if not isinstance(event, dict):
                    continue
                try:
                    event_type = WatchEventType(str(event.get("type")))
                except ValueError:
                    LOGGER.debug(
                        "watch %s: skipping event of unknown type %r",
                        info.resource,
                        event.get("type"),
                    )
                    continue
                obj = event.get("object")
                if not isinstance(obj, dict):
                    obj = {}
                if event_type is WatchEventType.ERROR:
                    raise error_from_status(obj)
                if event_type is WatchEventType.BOOKMARK and not bookmarks:
                    continue
                metadata = obj.get("metadata") or {}
                rv = str(metadata.get("resourceVersion") or "")
                payload: Any = obj
                if target.model is not None and event_type is not WatchEventType.BOOKMARK:
                    payload = to_model(obj, target.model)
                yield WatchEvent(event_type, payload, rv)
        finally:
            await lines.aclose()

    # --- writes -------------------------------------------------------------------------------

    @overload
    async def create(
        self,
        obj: ModelT,
        *,
        namespace: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> ModelT: ...

    @overload
    async def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> dict[str, Any]: ...

    async def create(
        self,
        obj: ObjectLike,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | str | None = None,
    ) -> Any:
        """Create ``obj`` (POST); returns the stored object. ``generateName`` works.

        Raises :class:`~setpoint.client.errors.AlreadyExists` when the name is taken,
        :class:`~setpoint.client.errors.Invalid` (with ``causes``) when validation fails.
        (POSTs to subresources such as ``pods/eviction`` go through :meth:`request_json`.)
        """
        target = self._target(obj, None, None, namespace, need_name=False)
        path = self._known_path(target, with_name=False)
        if path is None:
            _, path = await self._path(target, with_name=False)
        assert target.body is not None
        response = await self.transport.request(
            "POST",
            path,
            params=self._write_params(
                dry_run=dry_run, field_manager=field_manager, field_validation=field_validation
            ),
            body=json_codec.encode(target.body),
            content_type="application/json",
            idempotent=False,
        )
        created: Any = self._result(response.body, target.model)
        return created

    @overload
    async def update(
        self,
        obj: ModelT,
        *,
        namespace: str | None = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> ModelT: ...

    @overload
    async def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> dict[str, Any]: ...

    async def update(
        self,
        obj: ObjectLike,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | str | None = None,
    ) -> Any:
        """Replace ``obj`` (PUT). Its ``metadata.resourceVersion`` makes this optimistic:
        :class:`~setpoint.client.errors.Conflict` if the object changed since it was read.
        """
        target = self._target(obj, None, None, namespace, need_name=True)
        path = self._known_path(target, subresource)
        if path is None:
            _, path = await self._path(target, subresource=subresource)
        assert target.body is not None
        response = await self.transport.request(
            "PUT",
            path,
            params=self._write_params(
                dry_run=dry_run, field_manager=field_manager, field_validation=field_validation
            ),
            body=json_codec.encode(target.body),
            content_type="application/json",
        )
        updated: Any = self._result(response.body, target.model)
        return updated

    @overload
    async def update_status(self, obj: ModelT, **kwargs: Any) -> ModelT: ...

    @overload
    async def update_status(self, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...

    async def update_status(self, obj: ObjectLike, **kwargs: Any) -> Any:
        """Replace the ``status`` subresource of ``obj`` (PUT ``.../status``); same options."""
        return await self.update(obj, subresource="status", **kwargs)

    @overload
    async def patch(
        self,
        target: ModelT,
        patch: Any,
        /,
        *,
        namespace: str | None = ...,
        patch_type: PatchType | str = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
        force: bool | None = ...,
    ) -> ModelT: ...

    @overload
    async def patch(
        self,
        target: builtins.type[ModelT],
        name: str,
        patch: Any,
        /,
        *,
        namespace: str | None = ...,
        patch_type: PatchType | str = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
        force: bool | None = ...,
    ) -> ModelT: ...

    @overload
    async def patch(
        self,
        target: Mapping[str, Any],
        patch: Any,
        /,
        *,
        namespace: str | None = ...,
        patch_type: PatchType | str = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
        force: bool | None = ...,
    ) -> dict[str, Any]: ...

    @overload
    async def patch(
        self,
        target: str,
        kind: str,
        name: str,
        patch: Any,
        /,
        *,
        namespace: str | None = ...,
        patch_type: PatchType | str = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_manager: str | None = ...,
        field_validation: FieldValidation | str | None = ...,
        force: bool | None = ...,
    ) -> dict[str, Any]: ...

    async def patch(
        self,
        target: str | ObjectLike | builtins.type[BaseModel],
        *args: Any,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | str | None = None,
        force: bool | None = None,
    ) -> Any:
        """Patch one object: ``patch(obj, body)``, ``patch(Foo, "name", body)`` (a model class;
        returns a model) or ``patch("apps/v1", "Deployment", "w", body)``.

        ``patch_type``: ``"merge"`` (default), ``"json"`` (a list of RFC 6902 operations),
        ``"strategic"`` (built-in kinds only) or ``"apply"`` (prefer :meth:`apply`).
        A ``metadata.resourceVersion`` inside a merge patch makes it optimistic.
        """
        if isinstance(target, str):
            if len(args) != 3:
                raise TypeError("patch(api_version, kind, name, patch): expected 4 positional args")
            kind, name, body = args
            resolved = self._target(target, kind, name, namespace, need_name=True)
        elif type(target) is not dict and is_model_class(target):
            if len(args) != 2:
                raise TypeError("patch(Model, name, patch): expected 3 positional arguments")
            name, body = args
            resolved = self._target(target, name, None, namespace, need_name=True)
        else:
            if len(args) != 1:
                raise TypeError("patch(obj, patch): expected 2 positional arguments")
            (body,) = args
            resolved = self._target(target, None, None, namespace, need_name=True)
        kind_of_patch = patch_type if type(patch_type) is PatchType else PatchType.parse(patch_type)
        if kind_of_patch is PatchType.JSON and not isinstance(body, list):
            raise ValueError("patch: a JSON patch must be a list of operations")
        if kind_of_patch is not PatchType.JSON and type(body) is not dict and is_model(body):
            body = as_dict(body)
        if force is not None and kind_of_patch is not PatchType.APPLY:
            raise ValueError("force: only allowed for apply patches")
        path = self._known_path(resolved, subresource)
        if path is None:
            _, path = await self._path(resolved, subresource=subresource)
        response = await self.transport.request(
            "PATCH",
            path,
            params=self._patch_params(
                kind_of_patch, dry_run, field_manager, field_validation, force
            ),
            body=json_codec.encode(body),
            content_type=str(kind_of_patch),
            # JSON patches can append to lists: repeating one after an unknown outcome is unsafe.
            idempotent=kind_of_patch is not PatchType.JSON,
        )
        return self._result(response.body, resolved.model)

    def _patch_params(
        self,
        kind_of_patch: PatchType,
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | str | None,
        force: bool | None,
    ) -> dict[str, str]:
        """The query of a patch (of :meth:`patch` and :meth:`apply`)."""
        manager = field_manager or self.field_manager
        if kind_of_patch is PatchType.APPLY and not manager:
            manager = DEFAULT_APPLY_FIELD_MANAGER
        return write_params(
            dry_run=dry_run,
            field_manager=manager,
            field_validation=field_validation,
            force=force,
        )

    @overload
    async def apply(
        self,
        obj: ModelT,
        *,
        field_manager: str | None = ...,
        force: bool = ...,
        namespace: str | None = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> ModelT: ...

    @overload
    async def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str | None = ...,
        force: bool = ...,
        namespace: str | None = ...,
        subresource: str | None = ...,
        dry_run: bool = ...,
        field_validation: FieldValidation | str | None = ...,
    ) -> dict[str, Any]: ...

    async def apply(
        self,
        obj: ObjectLike,
        *,
        field_manager: str | None = None,
        force: bool = False,
        namespace: str | None = None,
        subresource: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | str | None = None,
    ) -> Any:
        """Server-side apply ``obj``: send only the fields you own; creates it if absent.

        ``field_manager`` names the owner (default: the client's, else ``"setpoint"``);
        ``force=True`` takes over fields owned by other managers instead of failing with
        :class:`~setpoint.client.errors.Conflict`. Do not set ``resourceVersion`` unless you
        want the apply to be optimistic.
        """
        target = self._target(obj, None, None, namespace, need_name=True)
        assert target.body is not None
        # The object names itself and is the patch: resolved once, then sent as patch() sends.
        path = self._known_path(target, subresource)
        if path is None:
            _, path = await self._path(target, subresource=subresource)
        response = await self.transport.request(
            "PATCH",
            path,
            params=self._patch_params(
                PatchType.APPLY, dry_run, field_manager, field_validation, force
            ),
            body=json_codec.encode(target.body),
            content_type=str(PatchType.APPLY),
            idempotent=True,  # an apply states the outcome: repeating it is safe
        )
        return self._result(response.body, target.model)

    @overload
    async def apply_status(self, obj: ModelT, **kwargs: Any) -> ModelT: ...

    @overload
    async def apply_status(self, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...

    async def apply_status(self, obj: ObjectLike, **kwargs: Any) -> Any:
        """Server-side apply to the ``status`` subresource; same options as :meth:`apply`."""
        return await self.apply(obj, subresource="status", **kwargs)

    async def wait_for(
        self,
        api_version: str,
        kind: str,
        name: str,
        condition: Callable[[dict[str, Any] | None], bool],
        *,
        namespace: str | None = None,
    ) -> dict[str, Any] | None:
        """Wait until ``condition(obj)`` is true for one object, like ``kubectl wait``.

        ``condition`` gets the object as a dict, or None while it does not exist (so
        ``lambda o: o is None`` waits for a deletion). Returns the object that satisfied it.
        Reads once, then follows a watch from that read; a watch that ends or expires is
        resumed. It waits forever: bound it with ``async with asyncio.timeout(seconds):``.
        """
        while True:
            try:
                current: dict[str, Any] | None = await self.get(
                    api_version, kind, name, namespace=namespace
                )
            except NotFound:
                current = None
            if condition(current):
                return current
            listed_rv = (current or {}).get("metadata", {}).get("resourceVersion")
            if current is None:
                # Absent: watch from "now" by listing (there is no object to take an RV from).
                listed = await self.list(
                    api_version,
                    kind,
                    namespace=namespace,
                    field_selector={"metadata.name": name},
                )
                listed_rv = listed.resource_version
                if listed.items:
                    continue  # created meanwhile: read it again
            events = self.watch(
                api_version, kind, namespace=namespace, name=name, resource_version=listed_rv
            )
            try:
                async with contextlib.aclosing(events):
                    async for event in events:
                        obj = None if event.type is WatchEventType.DELETED else event.object
                        if condition(obj):
                            return obj
            except (Gone, ConnectionFailed):
                pass
            # The watch ended or broke: resume from a fresh read, without hammering the server.
            await asyncio.sleep(WAIT_FOR_RESUME_DELAY)

    async def scale(
        self,
        api_version: str,
        kind: str,
        name: str,
        replicas: int,
        *,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Set ``spec.replicas`` through the ``scale`` subresource; returns the ``Scale``."""
        result: dict[str, Any] = await self.patch(
            api_version,
            kind,
            name,
            {"spec": {"replicas": int(replicas)}},
            namespace=namespace,
            subresource="scale",
        )
        return result

    # --- deletes ------------------------------------------------------------------------------

    async def delete(
        self,
        api_version: str | ObjectLike | builtins.type[BaseModel],
        kind: str | None = None,
        name: str | None = None,
        *,
        namespace: str | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
        missing_ok: bool = False,
    ) -> dict[str, Any] | None:
        """Delete one object: ``delete("v1", "ConfigMap", "x", namespace="ns")`` or ``delete(obj)``.

        Returns what the server answers: the object (still present with a
        ``deletionTimestamp`` while finalizers run, or as deleted) or a ``Status``. With
        ``missing_ok=True`` an absent object returns None instead of raising ``NotFound``.
        ``preconditions`` make the delete fail with ``Conflict`` if uid/resourceVersion differ.
        """
        target = self._target(api_version, kind, name, namespace, need_name=True)
        path = self._known_path(target)
        if path is None:
            _, path = await self._path(target)
        body = delete_options_body(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
            dry_run=dry_run,
        )
        params = {"dryRun": "All"} if dry_run else None
        try:
            response = await self.transport.request(
                "DELETE",
                path,
                params=params,
                body=json_codec.encode(body),
                content_type="application/json",
            )
        except NotFound:
            if missing_ok:
                return None
            raise
        return _decode_object(response.body) if response.body else None

    async def delete_collection(
        self,
        api_version: str | builtins.type[BaseModel],
        kind: str | None = None,
        *,
        namespace: str | None = None,
        label_selector: Selector | None = None,
        field_selector: Selector | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete every matching object (``deletecollection``); returns the server's answer.

        Without ``namespace`` a namespaced kind is deleted in the client's default namespace
        (the API has no all-namespaces deletecollection).
        """
        target = self._target(api_version, kind, None, namespace, need_name=False)
        _, path = await self._path(target, with_name=False)
        params: dict[str, str] = {}
        labels = label_selector_param(label_selector)
        fields = field_selector_param(field_selector)
        if labels:
            params["labelSelector"] = labels
        if fields:
            params["fieldSelector"] = fields
        if dry_run:
            params["dryRun"] = "All"
        body = delete_options_body(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        response = await self.transport.request(
            "DELETE",
            path,
            params=params,
            body=json_codec.encode(body),
            content_type="application/json",
        )
        return _decode_object(response.body) if response.body else {}
