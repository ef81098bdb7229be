"""Pod subresources served for the scheduler and the kubelet: ``binding``, ``log``, ``exec``.

``binding`` assigns a pod to a node (see :mod:`..kinds.pod_binding`). ``log`` checks the
request as kube-apiserver does (container choice, waiting containers) and then asks the
kubelet of the cluster, a :class:`PodRuntime` set by the controllers, for the bytes; without
one (``--no-controllers``) no container ever started, so the container is reported waiting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import request_body
from setpoint.cluster.apiserver.http.pod_exec import exec_container, serve_exec
from setpoint.cluster.apiserver.kinds.pod_binding import bind_pod
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


class PodRuntime(Protocol):
    """What runs the containers (the kubelet): their logs."""

    def logs(self, pod: dict[str, Any], options: LogOptions) -> AsyncIterator[bytes]:
        """The log bytes of one container (following it if asked)."""
        ...

    def exec_context(self, pod: dict[str, Any], container: str) -> tuple[str, dict[str, str]]:
        """Where and with which environment a command runs in ``container``; raises
        ``APIError`` when it cannot (simulated containers, a container not running)."""
        ...


class PodEndpoints:
    """Serves ``pods/binding`` and ``pods/log``; ``runtime()`` is the cluster's kubelet."""

    def __init__(self, runtime: Callable[[], PodRuntime | None]) -> None:
        self._runtime = runtime

    def serves(self, resource: ServedResource, subresource: str) -> bool:
        """Whether this handles ``subresource`` of ``resource``."""
        return (
            resource.plural == "pods"
            and not resource.group
            and subresource in ("binding", "log", "exec")
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
    cwd, env = runtime.exec_context(pod, container)
    return await serve_exec(request, list(command), cwd, env)


def _int(query: Any, key: str) -> int | None:
    value = query.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise status_errors.bad_request(f"{key}: invalid value {value!r}") from None


def _log_options(request: web.BaseRequest, pod: dict[str, Any]) -> LogOptions:
    query = request.query
    containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    init = [c.get("name", "") for c in (pod.get("spec") or {}).get("initContainers") or []]
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
    return LogOptions(
        container=container,
        follow=query.get("follow") == "true",
        previous=query.get("previous") == "true",
        timestamps=query.get("timestamps") == "true",
        tail_lines=_int(query, "tailLines"),
        limit_bytes=_int(query, "limitBytes"),
        since_seconds=_int(query, "sinceSeconds"),
    )


def _check_container_started(pod: dict[str, Any], options: LogOptions) -> None:
    status = pod.get("status") or {}
    statuses = (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
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
