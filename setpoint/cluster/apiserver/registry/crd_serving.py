"""Serving CustomResourceDefinitions: CRD writes change what the server serves, at once.

Creating a CRD defaults and validates it, accepts its names (or reports the conflict), sets
``NamesAccepted``/``Established`` synchronously, and registers one :class:`ServedResource` per
served version, so discovery and the endpoints exist when the create returns. Deleting a CRD
marks it ``Terminating``, deletes its custom resources, then removes the
``customresourcecleanup.apiextensions.k8s.io`` finalizer, so the CRD and its endpoints go.

:class:`CustomResourceBehaviour` holds the rules of the custom resources themselves: schema
pruning, defaulting and validation, status dropped on create with the status subresource, and
version conversion (:mod:`.custom_resource_conversion`: strategy None changes only
``apiVersion``, strategy Webhook calls the CRD's conversion webhook).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver import crds
from setpoint.cluster.apiserver.crds.conversion import conversion_webhook
from setpoint.cluster.apiserver.registry.custom_resource_conversion import (
    ConversionPoster,
    CustomResourceConverter,
)
from setpoint.cluster.apiserver.registry.kind_behaviour import (
    BuiltinValidator,
    KindBehaviour,
    add_new_errors,
)
from setpoint.cluster.apiserver.registry.object_operations import (
    DeleteOptions,
    ObjectOperations,
    new_uid,
    now_timestamp,
)
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.selection import (
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ObjectValidator, ServedResource
from setpoint.cluster.apiserver.schema.embedded import coerce_object_meta
from setpoint.cluster.apiserver.status_errors import APIError

log = logging.getLogger(__name__)

CRD_STORAGE_ROOT: Final = "/apiextensions.k8s.io/customresourcedefinitions/"
#: Polling while custom resources with finalizers hold a deleted CRD (starts fast, backs off).
CLEANUP_FIRST_DELAY_SECONDS: Final = 0.02
CLEANUP_MAX_DELAY_SECONDS: Final = 2.0


def _spec_without_meta(obj: dict[str, Any], *, include_status: bool) -> dict[str, Any]:
    skip = {"metadata"} if include_status else {"metadata", "status"}
    return {key: value for key, value in obj.items() if key not in skip}


class CustomResourceBehaviour(KindBehaviour):
    """Rules of custom resources, driven by their CRD (carried on the ServedResource)."""

    def __init__(self) -> None:
        super().__init__()
        #: Checks beyond the CRD's schema for custom kinds the cluster itself acts on (kwok
        #: Stages), by (group, kind): they return the errors that refuse a write.
        self.checks: dict[tuple[str, str], Callable[[dict[str, Any]], list[FieldError]]] = {}

    def validate(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str = "",
    ) -> tuple[list[FieldError], list[str]]:
        errors: list[FieldError] = []
        warnings: list[str] = []
        if resource.validator is not None:
            errors, warnings = resource.validator(obj, old, subresource)
        check = self.checks.get((resource.group, resource.kind))
        if check is not None and not subresource and not errors:
            errors = check(obj)
        return errors, warnings

    def spec_changed(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> bool:
        include_status = not resource.has_status
        return _spec_without_meta(new, include_status=include_status) != _spec_without_meta(
            old, include_status=include_status
        )

    def to_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        if resource.version == resource.storage_version:
            return obj
        return {**obj, "apiVersion": f"{resource.group}/{resource.storage_version}"}

    def from_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        obj["apiVersion"] = resource.api_version
        return obj


def _custom_resource_validator(crd: dict[str, Any], version: str) -> ObjectValidator:
    compiled = crds.compiled_schema(crd, version)
    scale = crds.scale_subresource(crd, version)

    def validate(
        obj: dict[str, Any], old: dict[str, Any] | None, subresource: str
    ) -> tuple[list[FieldError], list[str]]:
        # The body's ObjectMeta goes through a decode/encode round trip upstream: unknown
        # fields are dropped (and reported for fieldValidation), empty ones omitted.
        metadata = obj.get("metadata")
        unknown = coerce_object_meta(metadata, "metadata") if isinstance(metadata, dict) else []
        unknown.extend(compiled.normalize(obj))
        if subresource == "status":
            errors = compiled.validate_status(obj, old=old)
        else:
            errors = compiled.validate(obj, old=old)  # ratcheting: unchanged values pass
        if scale is not None:
            errors.extend(crds.validate_scale_paths(obj, scale))
        return errors, unknown

    return validate


def _field_getter(json_path: str) -> Callable[[dict[str, Any]], str]:
    def get(obj: dict[str, Any]) -> str:
        value, found = crds.read_path(obj, json_path)
        if not found or value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _selectable_fields(version: Mapping[str, Any]) -> dict[str, Callable[[dict[str, Any]], str]]:
    """Field selectors a CRD version declares (``selectableFields``), by field name."""
    fields: dict[str, Callable[[dict[str, Any]], str]] = {}
    for entry in version.get("selectableFields") or []:
        json_path = entry.get("jsonPath") if isinstance(entry, Mapping) else None
        if isinstance(json_path, str) and json_path:
            fields[json_path.lstrip(".")] = _field_getter(json_path)
    return fields


def served_resources_of(
    crd: dict[str, Any],
    *,
    terminating: bool = False,
    post: ConversionPoster | None = None,
) -> list[ServedResource]:
    """One ServedResource per served version of a CRD (names as accepted); ``post`` sends
    its ConversionReviews when its conversion strategy is ``Webhook``."""
    storage = crds.storage_version(crd) or ""
    name = (crd.get("metadata") or {}).get("name", "")
    group = str((crd.get("spec") or {}).get("group") or "")
    converter = CustomResourceConverter(group, conversion_webhook(crd), post, new_uid)
    stored_versions = tuple(
        str(v) for v in (crd.get("status") or {}).get("storedVersions") or [] if v
    )
    found: list[ServedResource] = []
    for info in crds.resource_infos(crd, terminating=terminating):
        version = crds.find_version(crd, info.version) or {}
        warning = None
        if version.get("deprecated"):
            warning = version.get("deprecationWarning") or (
                f"{info.group}/{info.version} {info.kind} is deprecated"
            )
        found.append(
            ServedResource(
                group=info.group,
                version=info.version,
                plural=info.resource,
                kind=info.kind,
                namespaced=info.namespaced,
                singular=info.singular,
                short_names=info.short_names,
                categories=info.categories,
                verbs=info.verbs,
                subresources=info.subresources,
                tracks_generation=True,
                is_custom=True,
                storage_version=storage,
                storage_group=info.group,
                storage_resource=info.resource,
                validator=_custom_resource_validator(crd, info.version),
                scale_spec=crds.scale_subresource(crd, info.version),
                field_selectors=_selectable_fields(version),
                deprecated_warning=warning,
                crd_name=name,
                terminating=terminating,
                openapi_schema=crds.version_schema(crd, info.version),
                printer_columns=tuple(crds.printer_columns(crd, info.version)),
                converter=converter,
                stored_versions=stored_versions,
            )
        )
    return found


class CRDBehaviour(KindBehaviour):
    """Rules of CRD objects, and the serving of their custom resources."""

    reacts_to_writes = True

    def __init__(
        self,
        registry: ResourceRegistry,
        operations: ObjectOperations,
        validator: BuiltinValidator | None,
    ) -> None:
        super().__init__(validator)
        self._registry = registry
        self._operations = operations
        self._served: dict[str, list[ServedResource]] = {}
        #: Called with a deleted CRD's storage root, so its open watches can be ended (clients
        #: then re-list and find the resource gone, as with kube-apiserver).
        self.on_resources_deleted: Callable[[str], None] | None = None
        #: Called after the served resources changed (the APIServices follow them).
        self.on_served_changed: Callable[[], Awaitable[None]] | None = None
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        #: Sends a CRD's ConversionReviews to its webhook (the server's webhook client).
        self.conversion_poster: ConversionPoster | None = None

    # -- CRD writes ---------------------------------------------------------------------

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        obj.pop("status", None)
        _replace(obj, crds.default_crd(obj))
        meta = obj["metadata"]
        finalizers = meta.get("finalizers")
        if not isinstance(finalizers, list):
            finalizers = meta["finalizers"] = []
        if crds.CLEANUP_FINALIZER not in finalizers:
            finalizers.append(crds.CLEANUP_FINALIZER)
        self._accept_names(obj)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        # The status is the server's (the naming and establishing controllers' here).
        new["status"] = copy.deepcopy(old.get("status") or {})
        _replace(new, crds.default_crd(new))
        if "deletionTimestamp" not in new["metadata"]:
            self._accept_names(new)

    def _accept_names(self, crd: dict[str, Any]) -> None:
        others = [decode(r.value) for r in self._operations.storage.list(CRD_STORAGE_ROOT)]
        accepted, conditions = crds.accept_names(crd, others, now=now_timestamp())
        status = crd.get("status")
        if not isinstance(status, dict):
            status = crd["status"] = {}
        status["acceptedNames"] = accepted
        status["conditions"] = conditions

    def prepare_deletion(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        # The finalizer controller's first step upstream: say that instances are going.
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        status["conditions"] = crds.set_condition(
            conditions, crds.terminating_condition(now_timestamp())
        )

    def validate(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str = "",
    ) -> tuple[list[FieldError], list[str]]:
        # Accepted names and conditions are the server's own (set by the naming step above,
        # possibly empty after a conflict); only the stored versions are checked.
        stored = (obj.get("status") or {}).get("storedVersions")
        checked = {**obj, "status": {"storedVersions": stored}}
        errors, unknown = super().validate(resource, checked, old, subresource)
        return add_new_errors(errors, crds.validate_crd(checked, old)), unknown

    def spec_changed(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> bool:
        return new.get("spec") != old.get("spec")

    async def after_write(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        await self._react(resource, obj, old)
        if self.on_served_changed is not None:
            await self.on_served_changed()

    async def _react(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        if obj is None:
            name = (old or {}).get("metadata", {}).get("name", "")
            roots = {resource.storage_root for resource in self._served.get(name, [])}
            self._unserve(name)
            if self.on_resources_deleted is not None:
                for root in roots:
                    self.on_resources_deleted(root)
            return
        if "deletionTimestamp" in obj["metadata"]:
            await self._begin_cleanup(obj)
            return
        self._serve(obj)

    # -- serving --------------------------------------------------------------------------

    def _serve(self, crd: dict[str, Any], *, terminating: bool = False) -> None:
        name = crd["metadata"]["name"]
        self._unserve(name)
        established = crds.find_condition(crd, crds.ESTABLISHED)
        if established is None or established.get("status") != "True":
            return
        served = served_resources_of(crd, terminating=terminating, post=self.conversion_poster)
        for resource in served:
            self._registry.add(resource)
        self._served[name] = served

    def _unserve(self, name: str) -> None:
        for resource in self._served.pop(name, []):
            current = self._registry.get(resource.group, resource.version, resource.plural)
            if current is not None and current.crd_name == name:
                self._registry.remove(resource.group, resource.version, resource.plural)

    async def serve_stored(self) -> None:
        """Serve every CRD found in storage (after a restart); resume pending deletions."""
        for record in self._operations.storage.list(CRD_STORAGE_ROOT):
            crd = decode(record.value)
            if "deletionTimestamp" in crd["metadata"]:
                await self._begin_cleanup(crd)
            else:
                self._serve(crd)

    # -- deletion -------------------------------------------------------------------------

    async def _begin_cleanup(self, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        self._serve(crd, terminating=True)
        if await self._delete_instances(name):
            await self._finish(name)
            return
        task = self._cleanups.get(name)
        if task is None or task.done():
            self._cleanups[name] = asyncio.get_running_loop().create_task(
                self._wait_and_finish(name), name=f"crd-cleanup-{name}"
            )

    async def _delete_instances(self, name: str) -> bool:
        """Delete every custom resource of CRD ``name``; True when none is left."""
        served = self._served.get(name) or []
        if not served:
            return True
        resource = served[0]
        storage = self._operations.storage
        for record in storage.list(resource.storage_root):
            if b'"deletionTimestamp"' in record.value:
                continue
            try:
                await self._operations.delete_record(resource, record, DeleteOptions())
            except APIError as exc:
                if exc.code not in (404, 409):
                    log.warning("CRD %s cleanup: %s", name, exc.message)
        return storage.count(resource.storage_root) == 0

    async def _wait_and_finish(self, name: str) -> None:
        delay = CLEANUP_FIRST_DELAY_SECONDS
        try:
            while not await self._delete_instances(name):
                await asyncio.sleep(delay)
                delay = min(delay * 2, CLEANUP_MAX_DELAY_SECONDS)
            await self._finish(name)
        except APIError as exc:
            log.error("deleting CRD %s failed: %s", name, exc.message)

    async def _finish(self, name: str) -> None:
        storage = self._operations.storage
        record = storage.get(CRD_STORAGE_ROOT + name)
        if record is None:
            self._unserve(name)
            return
        crd = decode(record.value)
        meta = crd["metadata"]
        meta["finalizers"] = [
            f for f in meta.get("finalizers") or [] if f != crds.CLEANUP_FINALIZER
        ]
        crd_resource = self._registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if crd_resource is None:
            return
        await self._operations.update_object(crd_resource, record, crd)

    async def close(self) -> None:
        """Stop pending cleanups (the server is stopping)."""
        for task in self._cleanups.values():
            task.cancel()
        for task in self._cleanups.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._cleanups.clear()


__all__ = [
    "CRD_STORAGE_ROOT",
    "CRDBehaviour",
    "CustomResourceBehaviour",
    "now_timestamp",
    "served_resources_of",
]


def _replace(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Make ``target`` equal to ``source`` in place (callers hold ``target``)."""
    target.clear()
    target.update(source)
