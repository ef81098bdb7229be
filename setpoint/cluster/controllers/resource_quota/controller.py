"""Writes ResourceQuota status (see the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from setpoint.cluster.apiserver.quota.admission import quantities
from setpoint.cluster.apiserver.quota.usage import (
    EVALUATED_PLURALS,
    LEGACY_COUNT_NAMES,
    handles,
    is_scoped,
    scopes_select,
    sum_usage,
    usage_of,
)
from setpoint.cluster.apiserver.schema.quantities import Quantity
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Informer, Object, ObjectKey, key_of
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.workload_context import WriteError

QUOTAS: Final = "resourcequotas"
#: Recount at least this often: the ``count/`` resources of kinds not watched change usage
#: without waking the controller (upstream recounts every 5 minutes by default).
RESYNC_SECONDS: Final = 30.0
#: Resources whose changes wake the quotas of their namespace, and how the controller reads
#: each object of theirs.
_WATCHED: Final = (
    ("pods", False),
    ("services", False),
    ("persistentvolumeclaims", False),
    ("configmaps", True),
    ("secrets", True),
    ("replicationcontrollers", True),
)


class ResourceQuotaController(Controller):
    """Writes ResourceQuota status (see the package docstring)."""

    name: ClassVar[str] = "resourcequota"

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        super().__init__(access, options)
        self._quota_informer: Informer | None = None

    def watches(self) -> list[Watch]:
        return [Watch(QUOTAS)] + [
            Watch(resource, self._quotas_of_namespace, metadata_only=metadata_only)
            for resource, metadata_only in _WATCHED
        ]

    def _quotas_of_namespace(self, obj: Object) -> Iterable[ObjectKey]:
        # Called for every write of the watched kinds, ConfigMaps included: the quota
        # informer is looked up once, and a namespace without quotas costs one dict lookup.
        if self._quota_informer is None:
            self._quota_informer = self.access.informers.informer(QUOTAS)
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        if not self._quota_informer.holds_any_in(namespace):
            return ()
        return [key_of(quota) for quota in self._quota_informer.list(namespace)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        quota = self.access.get(QUOTAS, key.namespace, key.name)
        if quota is None or "deletionTimestamp" in (quota.get("metadata") or {}):
            return None
        hard = quantities((quota.get("spec") or {}).get("hard"))
        used = self._usage(quota, key.namespace, list(hard))
        status = {
            "hard": {name: str(value) for name, value in hard.items()},
            "used": {name: str(used[name]) for name in hard},
        }
        if (quota.get("status") or {}) != status:
            try:
                await self.access.update_status(QUOTAS, {**quota, "status": status})
            except WriteError as exc:
                if exc.code == 404:
                    return None
                raise  # a 409: an admission charged it meanwhile; count again
        return RESYNC_SECONDS

    def _usage(
        self, quota: Mapping[str, Any], namespace: str, names: list[str]
    ) -> dict[str, Quantity]:
        """What the namespace's objects use of each of ``names``, as selected by the scopes."""
        usages: list[dict[str, Quantity]] = []
        for plural in EVALUATED_PLURALS:
            if any(handles("", plural, name) for name in names):
                usages += [
                    usage_of("", plural, obj)
                    for obj in self.access.list(plural, namespace)
                    if scopes_select(quota, "", plural, obj)
                ]
        totals = sum_usage(usages, names)
        for name in names:
            counted = self._stored_count(quota, namespace, name)
            if counted is not None:
                totals[name] = Quantity.count(counted)
        return totals

    def _stored_count(self, quota: Mapping[str, Any], namespace: str, name: str) -> int | None:
        """How many objects ``count/<resource>[.<group>]`` (or a legacy count name such as
        ``configmaps``) finds in the namespace; None for other names. The pods', Services'
        and claims' counts come from their usage instead."""
        if name in LEGACY_COUNT_NAMES:
            resource = name
        elif name.startswith("count/"):
            plural, _, group = name.removeprefix("count/").partition(".")
            if not group and plural in EVALUATED_PLURALS:
                return None
            resource = f"{group}/{plural}" if group else plural
        else:
            return None
        if is_scoped(quota):
            return 0  # a scoped quota counts pods only
        try:
            served = self.access.resource(resource)
        except KeyError:
            return 0  # not served (yet): nothing of it is stored
        if not served.namespaced:
            return 0
        return self.access.operations.storage.count(served.storage_prefix(namespace))
