"""The ResourceQuota admission plugin: every create charged against the namespace's quotas.

As upstream's (``plugin/pkg/admission/resourcequota``): a quota restricts only the resources
its ``status.hard`` lists (so a quota the controller has not synced yet restricts nothing);
a create that would take ``status.used`` past ``status.hard`` is refused with
``exceeded quota: <name>, requested: ..., used: ..., limited: ...`` (403); a pod without a
CPU or memory request or limit that a quota tracks with ``failed quota: <name>: must specify
...``. A create that fits is charged before it is stored: the quota's ``status.used`` grows
at once, in the same turn of the event loop as the check, so that concurrent creates cannot
all pass. The resource quota controller recounts the usage from what is stored, which gives
back what deleted objects, finished pods and failed creates held.

An update of a Service or a claim is charged for what it uses beyond the old object (a
Service that becomes a NodePort or a LoadBalancer, a claim that asks for more storage), as
upstream's; other updates use nothing more. Dry runs and subresource writes are not charged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.quota.usage import (
    handles,
    missing_requests,
    scopes_select,
    usage_of,
)
from setpoint.cluster.apiserver.registry.namespaced_index import NamespacedIndex
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.schema.quantities import Quantity, pretty
from setpoint.cluster.apiserver.storage import Storage
from setpoint.cluster.apiserver.storage.base import RevisionConflictError

QUOTAS_ROOT: Final = "/core/resourcequotas/"
#: The kinds whose updates can use more (upstream's evaluators that handle updates).
_CHARGED_ON_UPDATE: Final = frozenset({"services", "persistentvolumeclaims"})


def quantities(values: object) -> dict[str, Quantity]:
    """A ResourceList (``{"pods": "4", "requests.cpu": "1"}``) as quantities; entries that do
    not parse are left out."""
    found: dict[str, Quantity] = {}
    if isinstance(values, Mapping):
        for name, text in values.items():
            value = Quantity.parse(text)
            if value is not None:
                found[str(name)] = value
    return found


def quota_index(storage: Storage) -> NamespacedIndex[None]:
    """The names of each namespace's ResourceQuotas (kept current by an
    :class:`~setpoint.cluster.apiserver.registry.namespaced_index.IndexedKindBehaviour`), so
    that a create in a namespace without quotas costs one dictionary lookup."""
    return NamespacedIndex(storage, QUOTAS_ROOT, lambda obj: None)


class QuotaAdmission:
    """Checks and charges creates (see the module docstring)."""

    def __init__(self, storage: Storage, index: NamespacedIndex[None]) -> None:
        self._storage = storage
        self._index = index

    def charge_create(
        self, resource: ServedResource, namespace: str | None, obj: Mapping[str, Any]
    ) -> None:
        """Refuse (403) a create that does not fit a quota of its namespace, or charge it.

        Synchronous on purpose: nothing else runs between the check and the charge.
        """
        if not namespace or not resource.namespaced or not self._index.in_namespace(namespace):
            return
        self._charge(resource, namespace, obj, usage_of(resource.group, resource.plural, obj))

    def charge_update(
        self,
        resource: ServedResource,
        namespace: str | None,
        obj: Mapping[str, Any],
        old: Mapping[str, Any],
    ) -> None:
        """The same for an update of a Service or a claim: what it uses beyond the old object
        (a Service becoming a NodePort or LoadBalancer, a claim asking for more storage) is
        checked and charged, as upstream's evaluators do; other kinds' updates use nothing."""
        if not namespace or resource.group or resource.plural not in _CHARGED_ON_UPDATE:
            return
        if not self._index.in_namespace(namespace):
            return
        before = usage_of(resource.group, resource.plural, old)
        delta: dict[str, Quantity] = {}
        for name, value in usage_of(resource.group, resource.plural, obj).items():
            added = value.value - (before[name].value if name in before else 0)
            if added > 0:
                delta[name] = Quantity(added, value.format)
        if delta:
            self._charge(resource, namespace, obj, delta)

    def _charge(
        self,
        resource: ServedResource,
        namespace: str,
        obj: Mapping[str, Any],
        usage: Mapping[str, Quantity],
    ) -> None:
        group, plural = resource.group, resource.plural
        names = self._index.in_namespace(namespace)
        name = str((obj.get("metadata") or {}).get("name") or "")
        charges: list[tuple[str, int, dict[str, Any], dict[str, Quantity]]] = []
        for quota_name in sorted(names):
            key = f"{QUOTAS_ROOT}{namespace}/{quota_name}"
            record = self._storage.get(key)
            if record is None:
                continue
            quota = decode(record.value)
            status = quota.get("status") or {}
            hard = quantities(status.get("hard"))
            restricted = sorted(n for n in hard if handles(group, plural, n))
            if not restricted or not scopes_select(quota, group, plural, obj):
                continue
            if not group and plural == "pods":
                missing = missing_requests(obj, restricted)
                if missing is not None:
                    raise status_errors.forbidden(
                        group, plural, name, f"failed quota: {quota_name}: {missing}"
                    )
            used = quantities(status.get("used"))
            if any(n not in used for n in restricted):
                raise status_errors.forbidden(
                    group,
                    plural,
                    name,
                    f"status unknown for quota: {quota_name}, resources: {','.join(restricted)}",
                )
            requested = {n: usage[n] for n in restricted if n in usage}
            new_used = {n: used[n] + value for n, value in requested.items()}
            exceeded = sorted(n for n, value in new_used.items() if value.value > hard[n].value)
            if exceeded:
                raise status_errors.forbidden(
                    group,
                    plural,
                    name,
                    f"exceeded quota: {quota_name}, "
                    f"requested: {pretty({n: requested[n] for n in exceeded})}, "
                    f"used: {pretty({n: used[n] for n in exceeded})}, "
                    f"limited: {pretty({n: hard[n] for n in exceeded})}",
                )
            if new_used:
                charges.append((key, record.revision, quota, new_used))
        for key, revision, quota, new_used in charges:
            status = dict(quota.get("status") or {})
            used_text = dict(status.get("used") or {})
            used_text.update({n: str(value) for n, value in new_used.items()})
            status["used"] = used_text
            charged = {**quota, "status": status}
            try:
                self._storage.update(key, charged, expected_revision=revision)
            except RevisionConflictError:  # nothing ran since the read: a bug if it happens
                raise status_errors.conflict(
                    group, plural, name, "the namespace's resource quota changed; try again"
                ) from None
