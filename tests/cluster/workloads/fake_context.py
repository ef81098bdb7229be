"""An in-memory WorkloadContext: a dict store with resourceVersions, generateName and Events.

Lets the workload controllers' sync functions run against each other without a server; the
HTTP tests cover the real admission path.
"""

from __future__ import annotations

import copy
import itertools
import random
import string
from collections.abc import Mapping
from typing import Any

from setpoint.api.clock import FakeClock
from setpoint.api.times import format_time
from setpoint.cluster.controllers.workload_context import WriteError
from setpoint.cluster.controllers.workload_pods import ownership

_KINDS = {
    "pods": ("v1", "Pod"),
    "apps/replicasets": ("apps/v1", "ReplicaSet"),
    "apps/deployments": ("apps/v1", "Deployment"),
    "apps/statefulsets": ("apps/v1", "StatefulSet"),
    "apps/daemonsets": ("apps/v1", "DaemonSet"),
    "apps/controllerrevisions": ("apps/v1", "ControllerRevision"),
    "batch/jobs": ("batch/v1", "Job"),
    "batch/cronjobs": ("batch/v1", "CronJob"),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim"),
    "nodes": ("v1", "Node"),
}


class FakeContext:
    """Objects per resource keyed by (namespace, name); every write bumps a global version."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self._clock = clock or FakeClock()
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in _KINDS}
        self.events: list[tuple[str, str, str, str]] = []
        self._versions = itertools.count(1)
        self._uids = itertools.count(1)
        self.writes = 0

    @property
    def clock(self) -> FakeClock:
        return self._clock

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        obj = self.objects[resource].get((namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, resource: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [
            copy.deepcopy(obj)
            for (ns, _), obj in sorted(self.objects[resource].items())
            if namespace is None or ns == namespace
        ]

    def list_controlled(
        self, resource: str, namespace: str, controller_uid: str | None
    ) -> list[Mapping[str, Any]]:
        return [
            obj
            for obj in self.list(resource, namespace)
            if ownership.controller_uid(obj) == controller_uid
        ]

    def _stamp(self, obj: dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = str(next(self._versions))
        self.writes += 1

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        new = copy.deepcopy(dict(obj))
        metadata = new.setdefault("metadata", {})
        if not metadata.get("name"):
            suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
            metadata["name"] = metadata["generateName"] + suffix
        key = (str(metadata.get("namespace") or ""), metadata["name"])
        if key in self.objects[resource]:
            raise WriteError(
                409, "AlreadyExists", f'{resource} "{metadata["name"]}" already exists'
            )
        api_version, kind = _KINDS[resource]
        new.setdefault("apiVersion", api_version)
        new.setdefault("kind", kind)
        metadata["uid"] = f"uid-{next(self._uids)}"
        metadata["creationTimestamp"] = format_time(self._clock.now())
        metadata["generation"] = 1
        self._stamp(new)
        self.objects[resource][key] = new
        return copy.deepcopy(new)

    def _existing(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        metadata = obj["metadata"]
        key = (str(metadata.get("namespace") or ""), metadata["name"])
        current = self.objects[resource].get(key)
        if current is None:
            raise WriteError(404, "NotFound", f'{resource} "{metadata["name"]}" not found')
        version = metadata.get("resourceVersion")
        if version and version != current["metadata"]["resourceVersion"]:
            raise WriteError(409, "Conflict", "the object has been modified")
        return current

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        current = self._existing(resource, obj)
        new = copy.deepcopy(dict(obj))
        new["status"] = current.get("status", {})
        if new.get("spec") != current.get("spec"):
            new["metadata"]["generation"] = current["metadata"]["generation"] + 1
        self._stamp(new)
        self.objects[resource][(new["metadata"].get("namespace", ""), new["metadata"]["name"])] = (
            new
        )
        return copy.deepcopy(new)

    async def update_status(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        current = self._existing(resource, obj)
        current["status"] = copy.deepcopy(obj.get("status"))
        self._stamp(current)
        return copy.deepcopy(current)

    async def patch(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> dict[str, Any]:
        current = self.objects[resource].get((namespace, name))
        if current is None:
            raise WriteError(404, "NotFound", f'{resource} "{name}" not found')
        before_spec = copy.deepcopy(current.get("spec"))
        _merge(current, patch)
        if current.get("spec") != before_spec:
            current["metadata"]["generation"] += 1
        self._stamp(current)
        if not current["metadata"].get("finalizers") and current["metadata"].get(
            "deletionTimestamp"
        ):
            del self.objects[resource][(namespace, name)]
        return copy.deepcopy(current)

    async def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        propagation: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        current = self.objects[resource].get((namespace, name))
        if current is None:
            raise WriteError(404, "NotFound", f'{resource} "{name}" not found')
        if current["metadata"].get("finalizers"):
            current["metadata"]["deletionTimestamp"] = format_time(self._clock.now())
            self._stamp(current)
            return
        del self.objects[resource][(namespace, name)]
        self.writes += 1

    def event(
        self, obj: Mapping[str, Any], type: str, reason: str, message: str, component: str
    ) -> None:
        self.events.append((component, type, reason, message))

    # Test helpers: the kubelet's part.
    def set_pod_phase(self, name: str, phase: str, ready: bool, namespace: str = "default") -> None:
        pod = self.objects["pods"][(namespace, name)]
        stamp = format_time(self._clock.now())
        pod["status"] = {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": stamp,
                }
            ],
        }
        self._stamp(pod)


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
