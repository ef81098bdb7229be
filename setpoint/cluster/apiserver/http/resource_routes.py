"""Resource URLs: what a path under ``/api`` or ``/apis`` addresses, and a memo of the answers.

``/api/v1/namespaces/default/configmaps/a/status`` addresses a :class:`ResourceTarget`: the
served resource (``configmaps`` of ``v1``), the namespace, the name and the subresource, and
whether it came by the deprecated ``/watch/`` prefix. :func:`resource_target` works it out from
the path's segments and the registry, or raises the ``404`` kube-apiserver answers for a path
it does not serve.

The answer depends only on the path and on the served resources, and a client sends the same
paths again and again (every create of a kind in a namespace posts to one collection path), so
:class:`RouteMemo` remembers the targets found per path and forgets them all whenever the
registry changes (its ``generation`` moves on every resource added or removed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

#: Namespace subresources, told apart from ``namespaces/NAME/RESOURCE`` collections.
NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})
#: Paths remembered; the memo starts over when full (paths naming objects are many).
ROUTE_MEMO_SIZE: Final = 4096


@dataclass(frozen=True, slots=True)
class ResourceTarget:
    """A parsed resource URL: what is addressed and how."""

    resource: ServedResource
    namespace: str | None
    name: str | None
    subresource: str
    watch_path: bool


def group_version_path(parts: Sequence[str]) -> tuple[str, str, list[str]] | None:
    """``(group, version, rest)`` of a path below a group/version (``/api/v1/...``,
    ``/apis/GROUP/VERSION/...``; ``rest`` may be empty); None for any other path."""
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], list(parts[2:])
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], list(parts[3:])
    return None


def resource_target(
    registry: ResourceRegistry, group: str, version: str, rest: Sequence[str]
) -> ResourceTarget:
    """What ``rest`` (the non-empty segments after the group/version) addresses; 404 if
    nothing served."""
    watch_path = False
    if rest[0] == "watch":
        watch_path = True
        rest = rest[1:]
    namespace: str | None = None
    if (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and not (group == "" and len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES)
    ):
        namespace = rest[1]
        rest = rest[2:]
    if not rest or len(rest) > 3:
        raise status_errors.path_not_found()
    resource = registry.get(group, version, rest[0])
    if resource is None:
        raise status_errors.path_not_found()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else ""
    if namespace is not None and not resource.namespaced:
        raise status_errors.path_not_found()
    if resource.namespaced and namespace is None and name is not None:
        raise status_errors.path_not_found()
    if subresource and subresource not in resource.subresources:
        raise status_errors.path_not_found()
    return ResourceTarget(resource, namespace, name, subresource, watch_path)


class RouteMemo:
    """The targets of resource paths served before, while the registry stays as it was."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self._registry = registry
        self._generation = registry.generation
        self._targets: dict[str, ResourceTarget] = {}

    def get(self, path: str) -> ResourceTarget | None:
        """The target :meth:`put` recorded for ``path`` (None: none, or the registry changed)."""
        generation = self._registry.generation
        if generation != self._generation:
            self._targets.clear()
            self._generation = generation
            return None
        return self._targets.get(path)

    def put(self, path: str, target: ResourceTarget) -> None:
        """Remember that ``path`` addresses ``target`` in the registry as it is now."""
        if self._registry.generation != self._generation:
            self._targets.clear()
            self._generation = self._registry.generation
        if len(self._targets) >= ROUTE_MEMO_SIZE:
            self._targets.clear()
        self._targets[path] = target
