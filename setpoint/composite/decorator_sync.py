"""One sync of a decorated object: Metacontroller's DecoratorController, on setpoint's runtime.

For each object of a ``resources`` entry that matches its ``labelSelector`` and
``annotationSelector`` (or carries the finalizer ``metacontroller.io/decoratorcontroller-<name>``,
added when a ``finalize`` hook is declared), the sync or finalize hook gets the object and its
*attachments*: the objects of the ``attachments`` types it controls that carry the annotation
``metacontroller.k8s.io/decorator-controller: <name>``. The answer's ``labels`` and
``annotations`` are merged into the object (``null`` removes one), a non-null ``status``
replaces its status, and the attachments are written as a composite controller's children are
(see :mod:`.children`). As for composites, a bad answer changes nothing and is reported on the
object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import ResourceInfo
from setpoint.api.selectors import LabelSelector
from setpoint.client.errors import ApiError, NotFound
from setpoint.composite.children import ChildWriter, WriteCounts, controlled_children
from setpoint.composite.hook_wire import HookError, parse_decorator_response
from setpoint.composite.parent_sync import ParentSync, SyncEnvironment, SyncStats, next_sync
from setpoint.composite.parent_writes import set_finalizer
from setpoint.composite.related import RelatedResources
from setpoint.composite.spec import ChildType, annotation_selector_matches, declared_keys
from setpoint.composite.webhooks import Hook
from setpoint.controller.reconcile import Result

__all__ = ["DECORATOR_ANNOTATION", "DecoratorSync"]

#: Marks the attachments a decorator created (Metacontroller's annotation).
DECORATOR_ANNOTATION = "metacontroller.k8s.io/decorator-controller"


@dataclass
class DecoratorSync(ParentSync):
    """The sync of one DecoratorController for one of its ``resources``."""

    object_field = "object"
    children_field = "attachments"

    name: str
    parent: ResourceInfo
    attachments: Sequence[ChildType]
    sync_hook: Hook | None
    finalize_hook: Hook | None = None
    related: RelatedResources | None = None
    label_selector: LabelSelector = field(default_factory=LabelSelector.everything)
    annotation_selector: Mapping[str, Any] | None = None
    controller_object: Mapping[str, Any] = field(default_factory=dict)
    field_manager: str = ""
    stats: SyncStats = field(default_factory=SyncStats)

    def __post_init__(self) -> None:
        self.finalizer = f"metacontroller.io/decoratorcontroller-{self.name}"
        self.writer = ChildWriter(self.field_manager or f"metacontroller/{self.name}")
        self._declared = declared_keys(self.attachments)
        self._types = [(t.api_version, t.kind) for t in self.attachments]

    def selects(self, parent: Mapping[str, Any]) -> bool:
        metadata = parent["metadata"]
        return self.label_selector.matches(metadata.get("labels") or {}) and (
            annotation_selector_matches(self.annotation_selector, metadata.get("annotations") or {})
        )

    async def _sync(self, env: SyncEnvironment, parent: dict[str, Any]) -> Result | None:
        metadata = parent["metadata"]
        if not self.selects(parent) and self.finalizer not in (metadata.get("finalizers") or []):
            return None
        deleting = bool(metadata.get("deletionTimestamp"))
        if not deleting or self.finalize_hook is None:
            parent = await set_finalizer(
                env.client, self.parent, parent, self.finalizer, self.finalize_hook is not None
            )
            metadata = parent["metadata"]
        has_finalizer = self.finalizer in (metadata.get("finalizers") or [])
        if not self.selects(parent) and not has_finalizer:
            return None
        observed = [
            obj
            for obj in await controlled_children(env.cache, parent, self.attachments)
            if (obj["metadata"].get("annotations") or {}).get(DECORATOR_ANNOTATION) == self.name
        ]
        finalizing = deleting and self.finalize_hook is not None and has_finalizer
        hook = self.finalize_hook if finalizing else self.sync_hook
        if hook is None:
            return None
        namespace = metadata.get("namespace")
        answer = await self.call_hook(
            env, hook, parent, self._types, observed, finalizing=finalizing
        )
        response = parse_decorator_response(
            answer,
            hook=hook.name,
            declared=self._declared,
            parent_namespace=namespace if self.parent.namespaced else None,
            strict=hook.strict,
        )
        counts = WriteCounts()
        await self._update_parent(env, parent, response.labels, response.annotations, counts)
        if response.status is not None and parent.get("status") != response.status:
            try:
                await env.client.patch(
                    self.parent.api_version,
                    self.parent.kind,
                    metadata["name"],
                    [
                        {"op": "test", "path": "/metadata/uid", "value": metadata["uid"]},
                        {"op": "add", "path": "/status", "value": response.status},
                    ],
                    namespace=namespace,
                    patch_type="json",
                    subresource="status" if "status" in self.parent.subresources else None,
                )
                counts.applied += 1
            except NotFound:
                return None
        desired = []
        for attachment in response.attachments:
            annotations = dict(attachment["metadata"].get("annotations") or {})
            annotations[DECORATOR_ANNOTATION] = self.name
            desired.append(
                {**attachment, "metadata": {**attachment["metadata"], "annotations": annotations}}
            )
        if self.manages_children(metadata, has_finalizer):
            try:
                await self.writer.write(
                    env.client, parent, self.attachments, observed, desired, counts
                )
            except ApiError as error:
                raise HookError(f"cannot write attachments: {error}") from None
        if response.finalized and finalizing:
            await set_finalizer(env.client, self.parent, parent, self.finalizer, False)
            counts.applied += 1
        self.stats.writes += counts.total
        return next_sync(counts, response.resync_after_seconds)

    async def _update_parent(
        self,
        env: SyncEnvironment,
        parent: dict[str, Any],
        labels: Mapping[str, str | None],
        annotations: Mapping[str, str | None],
        counts: WriteCounts,
    ) -> None:
        metadata = parent["metadata"]
        patch: dict[str, Any] = {}
        for field_name, wanted in (("labels", labels), ("annotations", annotations)):
            current = metadata.get(field_name) or {}
            changes = {
                k: v
                for k, v in wanted.items()
                if current.get(k) != v and not (v is None and k not in current)
            }
            if changes:
                patch[field_name] = changes
        if not patch:
            return
        patch["uid"] = metadata["uid"]
        try:
            await env.client.patch(
                self.parent.api_version,
                self.parent.kind,
                metadata["name"],
                {"metadata": patch},
                namespace=metadata.get("namespace"),
            )
            counts.applied += 1
        except NotFound:
            return
