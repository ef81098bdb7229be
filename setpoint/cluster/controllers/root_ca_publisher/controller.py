"""Keeps ``kube-root-ca.crt`` present and current in each namespace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.workload_context import WriteError

ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"
CA_KEY: Final = "ca.crt"
DESCRIPTION_ANNOTATION: Final = "kubernetes.io/description"
#: Upstream's wording, so that ``kubectl describe`` reads the same.
DESCRIPTION: Final = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


def _namespace_key(obj: Object) -> Iterable[ObjectKey]:
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "Namespace" or "namespace" not in meta:
        return (ObjectKey("", meta.get("name") or ""),)
    if meta.get("name") == ROOT_CA_CONFIG_MAP:
        return (ObjectKey("", meta.get("namespace") or ""),)
    return ()


def _root_ca_config_map_key(obj: Object) -> Iterable[ObjectKey]:
    """:func:`_namespace_key` of a ConfigMap: its namespace's key for ``kube-root-ca.crt``,
    nothing for any other (every ConfigMap's event passes through here)."""
    meta = obj.get("metadata") or {}
    if meta.get("name") != ROOT_CA_CONFIG_MAP:
        return ()
    return (ObjectKey("", meta.get("namespace") or ""),)


class RootCAPublisher(Controller):
    """Publishes the cluster's CA certificate as ConfigMap ``kube-root-ca.crt`` (idle when the
    cluster serves no HTTPS, hence has no CA)."""

    name: ClassVar[str] = "root-ca-cert-publisher"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:root-ca-cert-publisher",
            field_manager="kube-controller-manager",
            component="root-ca-cert-publisher",
        )

    def namespace_objects(self) -> list[tuple[str, str]]:
        return [("configmaps", ROOT_CA_CONFIG_MAP)] if self.options.root_ca_pem else []

    def watches(self) -> list[Watch]:
        if not self.options.root_ca_pem:
            return []
        # Every ConfigMap's event passes through the key mapper, which reads only metadata; the
        # one ConfigMap reconciled is read from storage.
        return [
            Watch("namespaces", _namespace_key),
            Watch("configmaps", _root_ca_config_map_key, metadata_only=True),
        ]

    async def reconcile(self, key: ObjectKey) -> float | None:
        namespace = self.access.get("namespaces", "", key.name)
        if namespace is None or "deletionTimestamp" in namespace["metadata"]:
            return None
        data = {CA_KEY: self.options.root_ca_pem.decode()}
        current = self.access.read_stored(
            self.access.resource("configmaps"), key.name, ROOT_CA_CONFIG_MAP
        )
        try:
            if current is None:
                await self.access.create(
                    "configmaps",
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": ROOT_CA_CONFIG_MAP,
                            "namespace": key.name,
                            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
                        },
                        "data": data,
                    },
                )
                return None
            annotations = current["metadata"].get("annotations") or {}
            if current.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
                return None
            # Only the data and the one annotation are put back; other edits are left alone.
            fixed = dict(current)
            fixed["metadata"] = {
                **current["metadata"],
                "annotations": {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION},
            }
            fixed["data"] = data
            await self.access.update("configmaps", fixed)
        except WriteError as exc:
            # Terminating or gone (403, 404), or a newer version is on its way here (409).
            if exc.code not in (403, 404, 409):
                raise
        return None
