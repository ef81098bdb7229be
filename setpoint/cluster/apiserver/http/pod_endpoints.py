"""Pod subresources served for the scheduler and the kubelet: ``binding``, ``log``, ``exec``,
``attach``, ``portforward``, and ``eviction`` for ``kubectl drain``.

``binding`` assigns a pod to a node (see :mod:`..kinds.pod_binding`); ``eviction`` deletes it
within its PodDisruptionBudget (see :mod:`..kinds.pod_eviction`). ``log`` checks the
request as kube-apiserver does (container choice, waiting containers) and then asks the
kubelet of the cluster, a :class:`PodRuntime` set by the controllers, for the bytes; without
one (``--no-controllers``) no container ever started, so the container is reported waiting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from aiohttp import web

from setpoint.api import field_errors as fe
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import request_body
from setpoint.cluster.apiserver.http.pod_exec import exec_container, serve_exec, serve_remote
from setpoint.cluster.apiserver.http.pod_portforward import serve_port_forward
from setpoint.cluster.apiserver.http.remote_process import RemoteProcess
from setpoint.cluster.apiserver.kinds.pod_binding import bind_pod
from setpoint.cluster.apiserver.kinds.pod_eviction import PodEviction
from setpoint.cluster.apiserver.kinds.resource_metrics import ContainerUsage
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource


@dataclass(slots=True)
class LogOptions:
    """The query of a ``pods/log`` request."""

    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: datetime | None = None


class PodRuntime(Protocol):
    """What runs the containers (the kubelet): their logs, exec and resource usage."""

    def usage(self, pod: dict[str, Any]) -> list[ContainerUsage] | None:
        """Each running container's usage (``metrics.k8s.io``); None when not running here."""
        ...

    def reachable(self, node: str) -> bool:
        """Whether ``node``'s kubelet answers (a stopped one has no metrics)."""
        ...

    def logs(self, pod: dict[str, Any], options: LogOptions) -> AsyncIterator[bytes]:
        """The log bytes of one container (following it if asked)."""
        ...

    def exec_context(
        self, pod: dict[str, Any], container: str, command: list[str]
    ) -> tuple[list[str], str, dict[str, str]]:
        """How ``command`` runs in ``container``: the argv (wrapped to enter the container),
        working directory and environment; raises ``APIError`` when it cannot (simulated
        containers, a container not running)."""
        ...

    def attach(self, pod: dict[str, Any], container: str, stdin: bool, tty: bool) -> RemoteProcess:
        """The running process of ``container`` to attach a session to; raises ``APIError``
        when there is none (simulated containers, a container not running)."""
        ...


class PodEndpoints:
    """Serves the pod subresources above; ``runtime()`` is the cluster's kubelet, ``budgets()``
    the served PodDisruptionBudget resource (evictions check them)."""

    def __init__(
        self,
        runtime: Callable[[], PodRuntime | None],
        budgets: Callable[[], ServedResource | None] = lambda: None,
    ) -> None:
        self._runtime = runtime
        self._budgets = budgets

    def runtime(self) -> PodRuntime | None:
        """The cluster's kubelet, when controllers run."""
        return self._runtime()

    def serves(self, resource: ServedResource, subresource: str) -> bool:
        """Whether this handles ``subresource`` of ``resource``."""
        return (
            resource.plural == "pods"
            and not resource.group
            and subresource in ("binding", "log", "exec", "attach", "eviction", "portforward")
        )

    async def _exec(
        self,
        request: web.BaseRequest,
        operations: ObjectOperations,
        resource: ServedResource,
        namespace: str,
        name: str,
    ) -> web.StreamResponse:
        if request.method not in ("GET", "POST"):
            raise _method_not_allowed()
        pod = decode(operations.get_record(resource, namespace, name).value)
        return await _serve_exec(self._runtime(), request, pod)

    async def _evict(
        self,
        request: web.BaseRequest,
        operations: ObjectOperations,
        resource: ServedResource,
        namespace: str,
        name: str,
    ) -> web.StreamResponse:
        if request.method != "POST":
            raise _method_not_allowed()
        body = request_body.decode_object_body(request, await request_body.read_body(request))
        eviction = PodEviction(
            operations, resource, self._budgets, request.headers.get("User-Agent", "")
        )
        dry_run = bool(request.query.getall("dryRun", []))
        result = await eviction.evict(namespace, name, body, dry_run)
        return web.Response(status=result.code, body=result.body, content_type="application/json")

    async def serve(
        self,
        request: web.BaseRequest,
        operations: ObjectOperations,
        resource: ServedResource,
        namespace: str,
        name: str,
        subresource: str,
    ) -> web.StreamResponse:
        """Answer one ``binding`` or ``log`` request."""
        if subresource == "binding":
            if request.method != "POST":
                raise _method_not_allowed()
            body = request_body.decode_object_body(request, await request_body.read_body(request))
            result = await bind_pod(operations, resource, namespace, name, body)
            return web.Response(
                status=result.code, body=result.body + b"\n", content_type="application/json"
            )
        if subresource == "exec":
            return await self._exec(request, operations, resource, namespace, name)
        if subresource == "attach":
            if request.method not in ("GET", "POST"):
                raise _method_not_allowed()
            pod = decode(operations.get_record(resource, namespace, name).value)
            return await _serve_attach(self._runtime(), request, pod)
        if subresource == "eviction":
            return await self._evict(request, operations, resource, namespace, name)
        if subresource == "portforward":
            if request.method not in ("GET", "POST"):
                raise _method_not_allowed()
            pod = decode(operations.get_record(resource, namespace, name).value)
            if (pod.get("status") or {}).get("phase") != "Running":
                raise status_errors.bad_request(
                    f"unable to upgrade connection: pod {name} is not running"
                )
            return await serve_port_forward(request, pod)
        if request.method != "GET":
            raise _method_not_allowed()
        pod = decode(operations.get_record(resource, namespace, name).value)
        options = _log_options(request, pod)
        runtime = self._runtime()
        _check_container_started(pod, options)
        if runtime is None:
            raise status_errors.bad_request(
                f'container "{options.container}" in pod "{name}" is waiting to start: '
                "ContainerCreating"
            )
        response = web.StreamResponse(status=200)
        response.content_type = "text/plain"
        if options.follow:
            response.enable_chunked_encoding()
        await response.prepare(request)
        async for chunk in runtime.logs(pod, options):
            await response.write(chunk)
        await response.write_eof()
        return response


def _no_runtime() -> status_errors.APIError:
    return status_errors.bad_request(
        "no kubelet runs this cluster's pods (it was started with --no-controllers)"
    )


def _method_not_allowed() -> status_errors.APIError:
    return status_errors.APIError(
        405,
        StatusReason.METHOD_NOT_ALLOWED,
        "the server does not allow this method on the requested resource",
    )


async def _serve_exec(
    runtime: PodRuntime | None, request: web.BaseRequest, pod: dict[str, Any]
) -> web.StreamResponse:
    container = exec_container(pod, request.query.get("container", ""))
    command = request.query.getall("command", [])
    if not command:
        raise status_errors.bad_request("you must specify at least 1 command")
    if runtime is None:
        raise _no_runtime()
    argv, cwd, env = runtime.exec_context(pod, container, list(command))
    return await serve_exec(request, argv, cwd, env)


async def _serve_attach(
    runtime: PodRuntime | None, request: web.BaseRequest, pod: dict[str, Any]
) -> web.StreamResponse:
    container = exec_container(pod, request.query.get("container", ""))
    if runtime is None:
        raise _no_runtime()
    query = request.query
    # Attached before the upgrade, so a container without a process is refused with a Status.
    attached = runtime.attach(
        pod, container, query.get("stdin") == "true", query.get("tty") == "true"
    )

    async def start(stdin: bool, tty: bool) -> RemoteProcess:
        return attached

    try:
        return await serve_remote(request, start)
    finally:
        attached.abandon()


def _int(query: Any, key: str) -> int | None:
    value = query.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise status_errors.bad_request(f"{key}: invalid value {value!r}") from None


def _time(query: Any, key: str) -> datetime | None:
    value = query.get(key)
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise status_errors.bad_request(f"{key}: invalid value {value!r}") from None


def _validate_log_options(
    name: str,
    tail_lines: int | None,
    limit_bytes: int | None,
    since_seconds: int | None,
    since_time: datetime | None,
) -> None:
    """422 as ``ValidatePodLogOptions`` (``pod/rest/log.go``) for values out of range."""
    errors = []
    if tail_lines is not None and tail_lines < 0:
        errors.append(fe.invalid("tailLines", tail_lines, "must be greater than or equal to 0"))
    if limit_bytes is not None and limit_bytes < 1:
        errors.append(fe.invalid("limitBytes", limit_bytes, "must be greater than 0"))
    if since_seconds is not None and since_time is not None:
        errors.append(
            fe.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified")
        )
    elif since_seconds is not None and since_seconds < 1:
        errors.append(fe.invalid("sinceSeconds", since_seconds, "must be greater than 0"))
    if errors:
        raise status_errors.invalid("", "PodLogOptions", name, errors)


def _log_options(request: web.BaseRequest, pod: dict[str, Any]) -> LogOptions:
    query = request.query
    containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    init = [
        c.get("name", "")
        for key in ("initContainers", "ephemeralContainers")
        for c in (pod.get("spec") or {}).get(key) or []
    ]
    name = pod["metadata"]["name"]
    container = query.get("container", "")
    if not container:
        if len(containers) != 1:
            raise status_errors.bad_request(
                f"a container name must be specified for pod {name}, choose one of: "
                f"[{' '.join(containers)}]"
            )
        container = containers[0]
    elif container not in containers and container not in init:
        raise status_errors.bad_request(f"container {container} is not valid for pod {name}")
    since_seconds = _int(query, "sinceSeconds")
    since_time = _time(query, "sinceTime")
    tail_lines = _int(query, "tailLines")
    limit_bytes = _int(query, "limitBytes")
    _validate_log_options(name, tail_lines, limit_bytes, since_seconds, since_time)
    return LogOptions(
        container=container,
        follow=query.get("follow") == "true",
        previous=query.get("previous") == "true",
        timestamps=query.get("timestamps") == "true",
        tail_lines=tail_lines,
        limit_bytes=limit_bytes,
        since_seconds=since_seconds,
        since_time=since_time,
    )


def _check_container_started(pod: dict[str, Any], options: LogOptions) -> None:
    status = pod.get("status") or {}
    statuses = [
        *(status.get("containerStatuses") or []),
        *(status.get("initContainerStatuses") or []),
        *(status.get("ephemeralContainerStatuses") or []),
    ]
    name = pod["metadata"]["name"]
    for container_status in statuses:
        if container_status.get("name") != options.container:
            continue
        if options.previous:
            if not (container_status.get("lastState") or {}).get("terminated"):
                raise status_errors.bad_request(
                    f'previous terminated container "{options.container}" in pod "{name}" not found'
                )
            return
        waiting = (container_status.get("state") or {}).get("waiting")
        if waiting is not None and not container_status.get("restartCount"):
            raise status_errors.bad_request(
                f'container "{options.container}" in pod "{name}" is waiting to start: '
                f"{waiting.get('reason', 'ContainerCreating')}"
            )
        return
    raise status_errors.bad_request(
        f'container "{options.container}" in pod "{name}" is waiting to start: ContainerCreating'
    )
