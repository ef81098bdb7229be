"""The namespace controller (``namespaced_resources_deleter.go``)."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any, ClassVar, Final

from setpoint.cluster.apiserver.kinds.namespaces import (
    NAMESPACE_FINALIZER,
    PHASE_TERMINATING,
    finalize_namespace,
)
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.namespace.conditions import deletion_conditions, merge_conditions
from setpoint.cluster.controllers.workload_context import WriteError

log = logging.getLogger(__name__)

#: Upstream's estimate when objects wait on finalizers (``finalizerEstimateSeconds``). Here it
#: is only the fallback: deletions in a terminating namespace re-trigger the controller.
FINALIZER_ESTIMATE_SECONDS: Final = 15.0


class NamespaceController(Controller):
    """Empties terminating namespaces, reports progress in conditions, then finalizes them."""

    name: ClassVar[str] = "namespace"
    workers: ClassVar[int] = 2

    def watches(self) -> list[Watch]:
        return [Watch("namespaces")]

    async def start(self) -> None:
        # Any deletion inside a terminating namespace may let it finish: listen to every
        # namespaced resource the garbage collector's informers (or ours) cover.
        self._hooked: set[str] = set()
        self._hook_content()

    def _hook_content(self) -> None:
        informers = self.access.informers
        for served in informers.registry:
            root = served.storage_root
            if not served.namespaced or root in self._hooked or root == "/core/events/":
                continue
            self._hooked.add(root)
            # Only deletion timestamps and namespaces are read: metadata is enough.
            informers.informer_for(served, metadata_only=True).add_handler(self._on_content)

    def _on_content(self, new: Object | None, old: Object | None) -> None:
        if new is not None and "deletionTimestamp" not in (new.get("metadata") or {}):
            return
        obj = new if new is not None else old
        assert obj is not None
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        ns = self.access.get("namespaces", "", namespace)
        if ns is not None and "deletionTimestamp" in (ns.get("metadata") or {}):
            self.enqueue(ObjectKey("", namespace))

    async def reconcile(self, key: ObjectKey) -> float | None:
        self._hook_content()  # custom resources served since the last pass
        namespaces = self.access.resource("namespaces")
        storage = self.access.operations.storage
        record = storage.get(namespaces.storage_key(None, key.name))
        if record is None:
            return None
        ns = decode(record.value)
        meta = ns["metadata"]
        if "deletionTimestamp" not in meta:
            return None
        if NAMESPACE_FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return None
        errors, remaining, finalizers, estimate = await self._delete_content(key.name)
        await self._write_conditions(key.name, errors, remaining, finalizers)
        if errors or remaining:
            return estimate
        await self._finalize(key.name)
        return None

    async def _delete_content(
        self, namespace: str
    ) -> tuple[list[str], Counter[str], Counter[str], float]:
        storage = self.access.operations.storage
        errors: list[str] = []
        remaining: Counter[str] = Counter()
        finalizers: Counter[str] = Counter()
        estimate = 0.0
        for served in self.access.informers.registry.namespaced_resources():
            if "delete" not in served.verbs:
                continue
            prefix = served.storage_prefix(namespace)
            for record in storage.list(prefix):
                obj = decode(record.value)
                meta = obj["metadata"]
                if "deletionTimestamp" in meta:
                    continue  # already deleting: its finalizers or the kubelet decide
                try:
                    await self.access.delete_in(
                        served, namespace, meta["name"], propagation="Background"
                    )
                except WriteError as exc:
                    if exc.code not in (404, 409):
                        errors.append(exc.message)
            left = storage.list(prefix)
            if not left:
                continue
            group_resource = f"{served.plural}.{served.group}"
            remaining[group_resource] += len(left)
            for record in left:
                meta = decode(record.value)["metadata"]
                for finalizer in meta.get("finalizers") or []:
                    finalizers[finalizer] += 1
                    estimate = max(estimate, FINALIZER_ESTIMATE_SECONDS)
                grace = meta.get("deletionGracePeriodSeconds")
                if served.plural == "pods" and not served.group and isinstance(grace, int):
                    estimate = max(estimate, float(grace))
        return errors, remaining, finalizers, estimate or 1.0

    async def _write_conditions(
        self,
        namespace: str,
        errors: list[str],
        remaining: Counter[str],
        finalizers: Counter[str],
    ) -> None:
        namespaces = self.access.resource("namespaces")
        ns = self.access.read_stored(namespaces, None, namespace)
        if ns is None:
            return
        status: dict[str, Any] = dict(ns.get("status") or {})
        old_conditions = list(status.get("conditions") or [])
        conditions = merge_conditions(
            old_conditions,
            deletion_conditions(errors, remaining, finalizers),
            time_text(self.access.clock),
        )
        if conditions == old_conditions and status.get("phase") == PHASE_TERMINATING:
            return
        status["phase"] = PHASE_TERMINATING
        status["conditions"] = conditions
        ns["status"] = status
        await self.access.update_in(namespaces, ns, "status")

    async def _finalize(self, namespace: str) -> None:
        namespaces = self.access.resource("namespaces")
        storage = self.access.operations.storage
        record = storage.get(namespaces.storage_key(None, namespace))
        if record is None:
            return
        ns = decode(record.value)
        spec = dict(ns.get("spec") or {})
        kept = [f for f in spec.get("finalizers") or [] if f != NAMESPACE_FINALIZER]
        if kept:
            spec["finalizers"] = kept
        else:
            spec.pop("finalizers", None)
        ns["spec"] = spec
        try:
            await finalize_namespace(
                self.access.operations, namespaces, record.key, ns, record.revision
            )
        except APIError as exc:
            raise WriteError(exc.code, exc.reason, exc.message) from exc
