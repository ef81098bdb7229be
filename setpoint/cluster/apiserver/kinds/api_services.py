"""APIServices for the groups this server serves itself: each ``Local`` and ``Available``.

kube-apiserver's aggregator registers an APIService for every built-in group/version at start
(labelled ``kube-aggregator.kubernetes.io/automanaged: onstart``, with upstream's group and
version priorities) and one for each group/version a CRD serves (``automanaged: true``), and
removes the latter when the CRD stops serving it. None names a ``service``: they are answered
locally, so their ``Available`` condition is always True with reason ``Local``. APIServices a
user creates are stored as given (there is no aggregation to a remote server here).
"""

from __future__ import annotations

import time
from typing import Any, Final

from setpoint.cluster.apiserver.registry.object_operations import (
    DeleteOptions,
    ObjectOperations,
    WriteOptions,
)
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.server_clock import server_time
from setpoint.cluster.apiserver.status_errors import APIError

AUTOMANAGED_LABEL: Final = "kube-aggregator.kubernetes.io/automanaged"
#: (groupPriorityMinimum, versionPriority) of the built-in group/versions, as upstream's
#: aggregator table (``apiVersionPriorities``) has them.
BUILTIN_PRIORITIES: Final[dict[tuple[str, str], tuple[int, int]]] = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authentication.k8s.io", "v1beta1"): (17700, 9),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
#: A CRD's group/versions (upstream's crdregistration controller).
CRD_PRIORITIES: Final = (1000, 100)


def api_service_name(group: str, version: str) -> str:
    """``v1.apps``; the core group's is ``v1.`` (an empty group after the dot)."""
    return f"{version}.{group}"


def _available(now: str) -> dict[str, Any]:
    return {
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "Local",
                "message": "Local APIServices are always available",
            }
        ]
    }


def _wanted(registry: ResourceRegistry) -> dict[str, dict[str, Any]]:
    """The APIService of every group/version served, by name."""
    wanted: dict[str, dict[str, Any]] = {}
    for resource in registry:
        name = api_service_name(resource.group, resource.version)
        if name in wanted:
            continue
        builtin = BUILTIN_PRIORITIES.get((resource.group, resource.version))
        group_priority, version_priority = builtin or CRD_PRIORITIES
        wanted[name] = {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {
                "name": name,
                "labels": {AUTOMANAGED_LABEL: "onstart" if builtin else "true"},
            },
            "spec": {
                "group": resource.group,
                "version": resource.version,
                "groupPriorityMinimum": group_priority,
                "versionPriority": version_priority,
            },
        }
    return wanted


class APIServiceRegistration:
    """Keeps the automanaged APIServices in step with what ``registry`` serves."""

    def __init__(self, registry: ResourceRegistry, operations: ObjectOperations) -> None:
        self._registry = registry
        self._operations = operations
        self._synced_generation = -1

    def _resource(self) -> ServedResource:
        found = self._registry.get("apiregistration.k8s.io", "v1", "apiservices")
        assert found is not None, "apiservices missing from the built-in table"
        return found

    async def sync(self) -> None:
        """Create the missing APIServices and delete automanaged ones no longer served."""
        if self._synced_generation == self._registry.generation:
            return
        self._synced_generation = self._registry.generation
        resource = self._resource()
        wanted = _wanted(self._registry)
        stored: dict[str, dict[str, Any]] = {}
        for record in self._operations.storage.list(resource.storage_root):
            obj = decode(record.value)
            stored[obj["metadata"]["name"]] = obj
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time()))
        # Built here, valid by construction: the schema pass is skipped (server_built).
        options = WriteOptions(server_built=True)
        try:
            for name, obj in wanted.items():
                if name in stored:
                    continue
                await self._operations.create(resource, None, obj, options)
                await self._operations.update(
                    resource, None, name, {**obj, "status": _available(now)}, options, "status"
                )
            for name, obj in stored.items():
                labels = obj["metadata"].get("labels") or {}
                if name not in wanted and labels.get(AUTOMANAGED_LABEL) in ("true", "onstart"):
                    await self._operations.delete(resource, None, name, DeleteOptions())
        except APIError:
            # A concurrent writer got there first; the next change syncs again.
            self._synced_generation = -1
