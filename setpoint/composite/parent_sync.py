"""What the sync of a composite parent and of a decorated object share.

Both read the object from the shared cache, call a hook with the same request shape (the
controller, the object, its children or attachments and its related objects as object maps,
``finalizing``), write the children only while the object lives or is finalized by a hook of
its own, and end the same way: another sync at once when the hook has not seen the children it
just got, or after the hook's ``resyncAfterSeconds``. A :class:`HookError` anywhere leaves the
children as they are and is reported on the object (Event and condition) before the retry with
backoff. :class:`ParentSync` holds that skeleton; the composite and decorator syncs fill in
``_sync``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from setpoint.api.gvk import ResourceInfo
from setpoint.composite.children import GC_FINALIZERS, WriteCounts
from setpoint.composite.hook_wire import HookError
from setpoint.composite.object_maps import object_map
from setpoint.composite.parent_writes import report_failure
from setpoint.composite.related import RelatedResources
from setpoint.composite.webhooks import Hook
from setpoint.controller.reconcile import Result, RetryLater

__all__ = ["ParentSync", "SyncEnvironment", "SyncStats", "next_sync"]


@dataclass
class SyncStats:
    """Counts over the life of one controller (tests and the bench read them)."""

    hook_calls: int = 0
    writes: int = 0
    failures: int = 0


@dataclass
class SyncEnvironment:
    """What a sync uses: a client whose writes are recorded as the controller's own, the
    shared cache and the Event recorder."""

    client: Any
    cache: Any
    recorder: Any


def next_sync(counts: WriteCounts, resync_after_seconds: float) -> Result | None:
    """When to sync the object again after a successful sync."""
    if counts.needs_another_sync:
        # The hook has not seen the children it just got: show them to it once more (the
        # events of these own writes are dropped, so nothing else would).
        return Result(requeue_after=0)
    if resync_after_seconds > 0:
        return Result(requeue_after=resync_after_seconds)
    return None


class ParentSync:
    """The skeleton of a sync (see the module docs). Subclasses are dataclasses with these
    fields and implement ``_sync``."""

    parent: ResourceInfo
    related: RelatedResources | None
    finalize_hook: Hook | None
    controller_object: Mapping[str, Any]
    stats: SyncStats
    #: The request's names of the object and of its children (``parent``/``children`` for a
    #: composite, ``object``/``attachments`` for a decorator).
    object_field = "parent"
    children_field = "children"

    async def sync(self, env: SyncEnvironment, namespace: str | None, name: str) -> Result | None:
        """Sync the object ``namespace/name`` (nothing when it is not in the cache)."""
        parent = await env.cache.get(self.parent.api_version, self.parent.kind, name, namespace)
        if parent is None:
            return None
        try:
            return await self._sync(env, parent)
        except HookError as error:
            self.stats.failures += 1
            await report_failure(env.client, env.recorder, self.parent, parent, str(error))
            raise RetryLater(str(error)) from None

    async def _sync(self, env: SyncEnvironment, parent: dict[str, Any]) -> Result | None:
        raise NotImplementedError

    async def call_hook(
        self,
        env: SyncEnvironment,
        hook: Hook,
        parent: dict[str, Any],
        types: Sequence[tuple[str, str]],
        observed: Sequence[Mapping[str, Any]],
        *,
        finalizing: bool,
    ) -> Any:
        """Call ``hook`` for ``parent`` with its observed children and related objects; its
        raw answer (the caller checks it)."""
        related: list[dict[str, Any]] = []
        related_types: list[tuple[str, str]] = []
        if self.related is not None:
            related, related_types = await self.related.objects_for(env, parent)
        metadata = parent["metadata"]
        namespace = metadata.get("namespace")
        request = {
            "controller": self.controller_object,
            self.object_field: parent,
            self.children_field: object_map(
                types, observed, parent_namespace=namespace, version=hook.version
            ),
            "related": object_map(
                related_types, related, parent_namespace=namespace, version=hook.version
            ),
            "finalizing": finalizing,
        }
        self.stats.hook_calls += 1
        return await hook.call(request, root_uid=metadata["uid"])

    def manages_children(self, metadata: Mapping[str, Any], has_finalizer: bool) -> bool:
        """Whether children are written: while the object lives, or while it is deleted and
        finalized by this controller's finalize hook, unless the garbage collector deletes the
        children itself (``foregroundDeletion``/``orphan``)."""
        if not metadata.get("deletionTimestamp"):
            return True
        return (
            has_finalizer
            and self.finalize_hook is not None
            and not GC_FINALIZERS.intersection(metadata.get("finalizers") or [])
        )
