"""Namespaces: their defaults, the admission rule on their content, and their deletion.

A namespace gets ``spec.finalizers: ["kubernetes"]``, ``status.phase: Active`` and the label
``kubernetes.io/metadata.name``. Deleting one marks it ``Terminating``; from then on new content
is refused (403, cause ``NamespaceTerminating``), as the NamespaceLifecycle admission plugin does.

The namespace controller (``setpoint.cluster.controllers.namespace``) then deletes the content
and removes the ``kubernetes`` finalizer through ``/finalize``; :func:`finalize_namespace` is
that write, which deletes the namespace once no finalizer remains.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.object_operations import (
    DeleteOptions,
    ObjectOperations,
    Result,
    now_timestamp,
)
from setpoint.cluster.apiserver.registry.selection import (
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import CAUSE_NAMESPACE_TERMINATING
from setpoint.cluster.apiserver.storage import KeyNotFoundError, RevisionConflictError, Storage

log = logging.getLogger(__name__)

NAMESPACE_FINALIZER: Final = "kubernetes"
NAME_LABEL: Final = "kubernetes.io/metadata.name"
PHASE_ACTIVE: Final = "Active"
PHASE_TERMINATING: Final = "Terminating"
#: Created at start, like kube-apiserver's system namespaces.
SYSTEM_NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")
#: Upstream refuses to delete these (403 "this namespace may not be deleted").
UNDELETABLE_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public"})

NAMESPACES_ROOT: Final = "/core/namespaces/"


def new_namespace(name: str) -> dict[str, Any]:
    """The body of a namespace as ``kubectl create namespace`` sends it."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def namespace_terminating(obj: dict[str, Any]) -> bool:
    """Whether a namespace is being deleted."""
    return "deletionTimestamp" in (obj.get("metadata") or {}) or (
        (obj.get("status") or {}).get("phase") == PHASE_TERMINATING
    )


class NamespaceBehaviour(KindBehaviour):
    """Defaults and update rules of namespaces (``pkg/registry/core/namespace/strategy.go``)."""

    reacts_to_writes = True

    def __init__(self, on_terminating: Callable[[str], None]) -> None:
        super().__init__()
        self._on_terminating = on_terminating

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        finalizers = spec.get("finalizers")
        if not finalizers:
            spec["finalizers"] = [NAMESPACE_FINALIZER]
        elif NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        obj["status"] = {"phase": PHASE_ACTIVE}
        _set_name_label(obj)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        # spec.finalizers change only through /finalize (the caller sets it there).
        new["spec"] = {**(new.get("spec") or {}), **_spec_finalizers(old)}
        _set_name_label(new)

    def spec_changed(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> bool:
        return False

    def holds_deletion(self, obj: dict[str, Any]) -> bool:
        return super().holds_deletion(obj) or bool((obj.get("spec") or {}).get("finalizers"))

    async def after_write(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        if obj is not None and namespace_terminating(obj):
            self._on_terminating(obj["metadata"]["name"])


def _spec_finalizers(obj: dict[str, Any]) -> dict[str, Any]:
    finalizers = (obj.get("spec") or {}).get("finalizers")
    return {"finalizers": list(finalizers)} if finalizers else {}


def _set_name_label(obj: dict[str, Any]) -> None:
    metadata = obj["metadata"]
    name = metadata.get("name")
    if not name:
        return  # generateName: labelled once named, on the next write
    labels = metadata.get("labels")
    if not isinstance(labels, dict):
        labels = metadata["labels"] = {}
    labels[NAME_LABEL] = name


class NamespaceAdmission:
    """Refuses content in missing or terminating namespaces (the NamespaceLifecycle plugin)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        # Namespace revision -> terminating, so a create decodes its namespace at most once
        # per namespace change.
        self._terminating: dict[str, tuple[int, bool]] = {}

    def admit(self, resource: ServedResource, namespace: str, name: str) -> None:
        """Raise 404 or 403 unless ``namespace`` exists and is not terminating."""
        record = self._storage.get(NAMESPACES_ROOT + namespace)
        if record is None:
            raise status_errors.not_found("", "namespaces", namespace)
        cached = self._terminating.get(namespace)
        if cached is not None and cached[0] == record.revision:
            terminating = cached[1]
        else:
            terminating = namespace_terminating(decode(record.value))
            self._terminating[namespace] = (record.revision, terminating)
        if terminating:
            raise status_errors.forbidden(
                resource.group,
                resource.plural,
                name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
                [
                    {
                        "reason": CAUSE_NAMESPACE_TERMINATING,
                        "message": f"namespace {namespace} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )


async def finalize_namespace(
    operations: ObjectOperations,
    namespaces: ServedResource,
    key: str,
    obj: dict[str, Any],
    revision: int,
) -> Result:
    """Write ``spec.finalizers`` of a namespace; a terminating one with none left disappears."""
    storage = operations.storage
    meta = obj["metadata"]
    spec_finalizers = (obj.get("spec") or {}).get("finalizers")
    try:
        if "deletionTimestamp" in meta and not spec_finalizers and not meta.get("finalizers"):
            written = storage.delete(key, expected_revision=revision)
        else:
            written = storage.update(key, obj, expected_revision=revision)
    except (KeyNotFoundError, RevisionConflictError):
        raise status_errors.stale_resource_version("", "namespaces", meta.get("name", "")) from None
    await storage.wait_durable(written.revision)
    return Result(200, await operations.present(namespaces, written.value))


async def delete_namespace(
    operations: ObjectOperations,
    namespaces: ServedResource,
    name: str,
    options: DeleteOptions,
    on_terminating: Callable[[str], None],
) -> Result:
    """DELETE of a namespace: mark it Terminating (200 with the object) and start cleanup."""
    if name in UNDELETABLE_NAMESPACES:
        raise status_errors.forbidden("", "namespaces", name, "this namespace may not be deleted")
    record = operations.get_record(namespaces, None, name)
    obj = decode(record.value)
    meta = obj["metadata"]
    if options.precondition_uid is not None and options.precondition_uid != meta.get("uid"):
        raise status_errors.conflict(
            "",
            "namespaces",
            name,
            f"Precondition failed: UID in precondition: {options.precondition_uid}, "
            f"UID in object meta: {meta.get('uid', '')}",
        )
    if "deletionTimestamp" in meta:
        on_terminating(name)
        return Result(200, record.value)
    await operations.admit_delete(namespaces, record, decode(record.value), options)
    meta["deletionTimestamp"] = now_timestamp()
    meta["deletionGracePeriodSeconds"] = 0
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    status["phase"] = PHASE_TERMINATING
    if options.dry_run:
        return Result(200, await operations.present(namespaces, record.value))
    result = await finalize_namespace(operations, namespaces, record.key, obj, record.revision)
    on_terminating(name)
    return result
