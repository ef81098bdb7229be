"""Keeps ``default`` ServiceAccounts present."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.workload_context import WriteError

DEFAULT_SERVICE_ACCOUNT: Final = "default"


def _namespace_key(obj: Object) -> Iterable[ObjectKey]:
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "Namespace" or "namespace" not in meta:
        return (ObjectKey("", meta.get("name") or ""),)
    if meta.get("name") == DEFAULT_SERVICE_ACCOUNT:
        return (ObjectKey("", meta.get("namespace") or ""),)
    return ()


class ServiceAccountController(Controller):
    """Creates ServiceAccount ``default`` in each namespace that is not terminating."""

    name: ClassVar[str] = "serviceaccount"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:service-account-controller",
            field_manager="kube-controller-manager",
            component="service-account-controller",
        )

    def namespace_objects(self) -> list[tuple[str, str]]:
        return [("serviceaccounts", DEFAULT_SERVICE_ACCOUNT)]

    def watches(self) -> list[Watch]:
        return [Watch("namespaces", _namespace_key), Watch("serviceaccounts", _namespace_key)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        namespace = self.access.get("namespaces", "", key.name)
        if namespace is None or "deletionTimestamp" in namespace["metadata"]:
            return None
        if (namespace.get("status") or {}).get("phase") == "Terminating":
            return None
        if self.access.get("serviceaccounts", key.name, DEFAULT_SERVICE_ACCOUNT) is not None:
            return None
        try:
            await self.access.create(
                "serviceaccounts",
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": key.name},
                },
            )
        except WriteError as exc:
            if exc.code not in (403, 404, 409):  # terminating, gone, or already there
                raise
        return None
