"""One sync of a composite parent: Metacontroller's ``syncParentObject``, on setpoint's runtime.

For the parent named by the request (read from the shared cache):

1. a parent that does not match ``parentResource.labelSelector`` and does not carry this
   controller's finalizer is none of its business;
2. the finalizer ``metacontroller.io/compositecontroller-<name>`` is added when a ``finalize``
   hook is declared (removed when not);
3. the children are claimed (adopted / orphaned by the parent's ``spec.selector``, or by
   ``controller-uid=<parent uid>`` with ``generateSelector``);
4. the ``customize`` hook, when declared, names the related objects, read from the cache;
5. the ``finalize`` hook (parent being deleted, finalizer present) or the ``sync`` hook is
   called; its answer is checked whole before anything is written. With a ``Rolling`` child
   type, it is called once per ControllerRevision of the parent and the answers are
   aggregated (see :mod:`.revisions`);
6. the children are written (see :mod:`.children`), unless the parent is being deleted
   without a finalize hook, or the garbage collector deletes its children;
7. ``finalized: true`` removes the finalizer; the status is replaced by the hook's;
   ``resyncAfterSeconds`` asks for another sync.

A failure at any step leaves the children as they are, is reported on the parent (Event and
condition, see :mod:`.parent_writes`) and retried with the work queue's backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import ResourceInfo
from setpoint.api.selectors import LabelSelector
from setpoint.client.errors import ApiError
from setpoint.composite.children import ChildWriter, WriteCounts, claim_children
from setpoint.composite.hook_wire import CompositeResponse, HookError, parse_composite_response
from setpoint.composite.parent_sync import ParentSync, SyncEnvironment, SyncStats, next_sync
from setpoint.composite.parent_writes import set_finalizer, write_status
from setpoint.composite.related import RelatedResources
from setpoint.composite.revisions import RevisionHistory
from setpoint.composite.spec import ChildType, declared_keys
from setpoint.composite.webhooks import Hook
from setpoint.controller.reconcile import Result

__all__ = ["CompositeSync", "SyncEnvironment", "SyncStats"]

log = logging.getLogger("setpoint.composite")

CONTROLLER_UID_LABEL = "controller-uid"


@dataclass
class CompositeSync(ParentSync):
    """The sync of one CompositeController (see the module docs)."""

    name: str
    parent: ResourceInfo
    children: Sequence[ChildType]
    sync_hook: Hook | None
    finalize_hook: Hook | None = None
    related: RelatedResources | None = None
    generate_selector: bool = False
    parent_selector: LabelSelector = field(default_factory=LabelSelector.everything)
    controller_object: Mapping[str, Any] = field(default_factory=dict)
    field_manager: str = ""
    #: ``parentResource.revisionHistory.fieldPaths`` (used when a child type rolls).
    revision_field_paths: tuple[str, ...] = ("spec",)
    stats: SyncStats = field(default_factory=SyncStats)

    def __post_init__(self) -> None:
        self.finalizer = f"metacontroller.io/compositecontroller-{self.name}"
        self.writer = ChildWriter(self.field_manager or f"metacontroller/{self.name}")
        self._declared = declared_keys(self.children)
        self._types = [(t.api_version, t.kind) for t in self.children]
        self._written_status: dict[str, tuple[Any, Any]] = {}
        self.revisions = RevisionHistory(
            self.parent,
            self.children,
            self.revision_field_paths or ("spec",),
            self.generate_selector,
        )

    def _ours(self, parent: Mapping[str, Any]) -> bool:
        metadata = parent["metadata"]
        return self.finalizer in (metadata.get("finalizers") or []) or self.parent_selector.matches(
            metadata.get("labels") or {}
        )

    def selector_of(self, parent: Mapping[str, Any]) -> LabelSelector:
        """The selector claiming the parent's children; HookError when it has none."""
        if self.generate_selector:
            return LabelSelector.from_labels({CONTROLLER_UID_LABEL: parent["metadata"]["uid"]})
        spec_selector = (parent.get("spec") or {}).get("selector")
        if not isinstance(spec_selector, Mapping) or not (
            spec_selector.get("matchLabels") or spec_selector.get("matchExpressions")
        ):
            raise HookError(
                "spec.selector: must have matchLabels, matchExpressions or both "
                "(or set generateSelector on the CompositeController)"
            )
        try:
            return LabelSelector.from_dict(spec_selector, path="spec.selector")
        except ValueError as error:
            raise HookError(str(error)) from None

    async def _sync(self, env: SyncEnvironment, parent: dict[str, Any]) -> Result | None:
        if not self._ours(parent):
            return None
        metadata = parent["metadata"]
        deleting = bool(metadata.get("deletionTimestamp"))
        wants_finalizer = self.finalize_hook is not None and not deleting
        if wants_finalizer or self.finalize_hook is None:
            parent = await set_finalizer(
                env.client, self.parent, parent, self.finalizer, self.finalize_hook is not None
            )
            metadata = parent["metadata"]
        has_finalizer = self.finalizer in (metadata.get("finalizers") or [])
        if not has_finalizer and not self.parent_selector.matches(metadata.get("labels") or {}):
            return None
        selector = self.selector_of(parent)
        counts = WriteCounts()
        observed = await claim_children(
            env.client, env.cache, parent, self.children, selector, counts
        )
        finalizing = deleting and self.finalize_hook is not None and has_finalizer
        hook = self.finalize_hook if finalizing else self.sync_hook
        if hook is None:
            return None
        namespace = metadata.get("namespace")

        async def call(revision_parent: dict[str, Any]) -> CompositeResponse:
            answer = await self.call_hook(
                env, hook, revision_parent, self._types, observed, finalizing=finalizing
            )
            return parse_composite_response(
                answer,
                hook=hook.name,
                declared=self._declared,
                parent_namespace=namespace if self.parent.namespaced else None,
                strict=hook.strict,
            )

        if self.revisions.any_rolling and (finalizing or not deleting):
            response, counts.rollout_pending = await self.revisions.sync(
                env, parent, selector, observed, call
            )
        else:
            response = await call(parent)
        for index, child in enumerate(response.children):
            labels = dict(child["metadata"].get("labels") or {})
            if self.generate_selector and CONTROLLER_UID_LABEL not in labels:
                labels[CONTROLLER_UID_LABEL] = metadata["uid"]
                child["metadata"] = {**child["metadata"], "labels": labels}
            if not selector.matches(labels):
                raise HookError(
                    f"{hook.name} hook: children[{index}] ({child['kind']} "
                    f"{child['metadata']['name']}): its labels do not match the parent's selector"
                )
        if self.manages_children(metadata, has_finalizer):
            try:
                await self.writer.write(
                    env.client, parent, self.children, observed, response.children, counts
                )
            except ApiError as error:
                # The server refused a child (invalid, forbidden): report it like a bad answer.
                raise HookError(f"cannot write children: {error}") from None
        if response.finalized and finalizing:
            parent = await set_finalizer(env.client, self.parent, parent, self.finalizer, False)
            counts.applied += 1
        if await write_status(
            env.client, self.parent, parent, response.status, self._written_status
        ):
            counts.applied += 1
        self.stats.writes += counts.total
        return next_sync(counts, response.resync_after_seconds)
