"""Claiming and writing children, as Metacontroller does, with server-side apply.

*Claim* (composite controllers): the children of a parent are the objects of each declared type
in its namespace that it controls and that match its selector. An object that matches but has no
controller is *adopted* (the parent's controller reference is added); an object it controls that
no longer matches is *orphaned* (the reference is removed). Nothing is adopted or orphaned while
the parent is being deleted. Each write names the object's uid, so a look-alike created since
the read is never touched.

*Write*: children the hook did not return are deleted (uid precondition, background
propagation). A returned child that does not exist is created with server-side apply (field
manager per controller, controller reference to the parent). An existing one follows its type's
``updateStrategy.method``: ``OnDelete`` leaves it alone; ``InPlace`` and ``RollingInPlace``
apply it; ``Recreate`` and ``RollingRecreate`` delete it when a dry-run apply shows a change
(the next sync creates it again). For the ``Rolling`` methods the caller has already kept the
children not yet rolled in their old form (see :mod:`.revisions`). An apply is skipped (no
request) when the cached child already has every returned field and the returned object is
the one applied last time, so a hook that answers the same thing again costs no write.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.owners import reference_from
from setpoint.api.selectors import LabelSelector
from setpoint.cache import OWNER_UID_INDEX, Cache
from setpoint.client.errors import Conflict, NotFound
from setpoint.client.request_options import Preconditions
from setpoint.composite.object_maps import type_key
from setpoint.composite.spec import ChildType
from setpoint.controller.create_or_update import differs

__all__ = ["ChildWriter", "WriteCounts", "claim_children", "controlled_children"]

log = logging.getLogger("setpoint.composite")

#: Children whose last applied digest is remembered per controller (see `ChildWriter`).
MAX_REMEMBERED_CHILDREN = 200_000
#: Finalizers meaning the garbage collector is deleting the parent's children itself.
GC_FINALIZERS = frozenset({"foregroundDeletion", "orphan"})


@dataclass
class WriteCounts:
    """Requests one sync sent for children (for logs, tests and the bench)."""

    applied: int = 0
    created: int = 0
    deleted: int = 0
    adopted: int = 0
    orphaned: int = 0
    #: A rolling update moved a child to the latest revision: the next child may follow.
    rollout_pending: bool = False

    @property
    def total(self) -> int:
        return self.applied + self.created + self.deleted + self.adopted + self.orphaned

    @property
    def needs_another_sync(self) -> bool:
        """Whether the children changed in a way whose event this controller does not see (its
        own creations, adoptions and orphanings; deletions do wake it), or a rollout goes on."""
        return bool(self.created or self.adopted or self.orphaned or self.rollout_pending)


#: Index of the objects without a controller reference: by namespace, and all of them under
#: "*" (the candidates of a cluster-scoped parent, or of cluster-scoped children).
ORPHAN_INDEX = "setpoint.composite/orphans"


def orphan_namespace(obj: Any) -> tuple[str, ...]:
    """The values of :data:`ORPHAN_INDEX` for a cached object."""
    if obj.controller_reference is not None:
        return ()
    return (obj.namespace or "", "*")


def controller_reference_to(parent: Mapping[str, Any]) -> dict[str, Any]:
    metadata = parent["metadata"]
    return reference_from(
        parent["apiVersion"],
        parent["kind"],
        metadata["name"],
        metadata["uid"],
        controller=True,
        block_owner_deletion=True,
    )


def _uid_test(uid: str) -> dict[str, Any]:
    return {"op": "test", "path": "/metadata/uid", "value": uid}


async def controlled_children(
    cache: Cache, parent: Mapping[str, Any], types: Sequence[ChildType]
) -> list[dict[str, Any]]:
    """The objects of ``types`` the parent controls (a decorator's attachments)."""
    uid = parent["metadata"]["uid"]
    namespace = parent["metadata"].get("namespace")
    result: list[dict[str, Any]] = []
    for child_type in types:
        for obj in await cache.list_cached(
            child_type.api_version, child_type.kind, index=(OWNER_UID_INDEX, uid)
        ):
            reference = obj.controller_reference
            if reference is None or reference.uid != uid:
                continue
            if namespace and obj.namespace != namespace:
                continue
            result.append(obj.to_dict())
    return result


async def claim_children(
    client: Any,
    cache: Cache,
    parent: Mapping[str, Any],
    types: Sequence[ChildType],
    selector: LabelSelector,
    counts: WriteCounts,
) -> list[dict[str, Any]]:
    """The parent's children after adopting and orphaning by ``selector`` (see module docs)."""
    metadata = parent["metadata"]
    uid, namespace = metadata["uid"], metadata.get("namespace")
    deleting = bool(metadata.get("deletionTimestamp"))
    reference = controller_reference_to(parent)
    result: list[dict[str, Any]] = []
    for child_type in types:
        api_version, kind = child_type.api_version, child_type.kind
        list_namespace = namespace if child_type.resource.namespaced and namespace else None
        owned = await cache.list_cached(api_version, kind, index=(OWNER_UID_INDEX, uid))
        for obj in owned:
            controller = obj.controller_reference
            if controller is None or controller.uid != uid:
                continue
            if list_namespace is not None and obj.namespace != list_namespace:
                continue
            if deleting or selector.matches(obj.labels) or obj.deletion_timestamp:
                result.append(obj.to_dict())
                continue
            # Orphan: it no longer matches the parent's selector.
            references = [r.to_dict() for r in obj.owner_references if r.uid != uid]
            try:
                await client.patch(
                    api_version,
                    kind,
                    obj.name,
                    [
                        _uid_test(obj.uid),
                        {"op": "replace", "path": "/metadata/ownerReferences", "value": references},
                    ],
                    namespace=obj.namespace,
                    patch_type="json",
                )
                counts.orphaned += 1
            except NotFound:
                pass
        if deleting:
            continue
        # Adoption candidates through an index of uncontrolled objects by namespace: a scan of
        # the namespace per sync would make N parents cost N^2 label matches.
        await cache.add_index(api_version, kind, ORPHAN_INDEX, orphan_namespace)
        for obj in await cache.list_cached(
            api_version, kind, index=(ORPHAN_INDEX, list_namespace or "*"), label_selector=selector
        ):
            if obj.controller_reference is not None or obj.deletion_timestamp:
                continue
            references = [r.to_dict() for r in obj.owner_references] + [reference]
            try:
                adopted = await client.patch(
                    api_version,
                    kind,
                    obj.name,
                    [
                        _uid_test(obj.uid),
                        {"op": "add", "path": "/metadata/ownerReferences", "value": references},
                    ],
                    namespace=obj.namespace,
                    patch_type="json",
                )
            except NotFound:
                continue
            counts.adopted += 1
            result.append(adopted)
    return result


def _digest(obj: Mapping[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def _identity(obj: Mapping[str, Any]) -> tuple[str, str | None, str]:
    metadata = obj.get("metadata") or {}
    return (
        type_key(str(obj.get("apiVersion")), str(obj.get("kind"))),
        metadata.get("namespace") or None,
        str(metadata.get("name")),
    )


@dataclass
class ChildWriter:
    """Writes one controller's children (see the module docs); keeps, per child uid, the digest
    of what was applied last, so that a field the hook stops returning is still removed."""

    field_manager: str
    #: child uid -> (digest of the object applied last, the resourceVersion it left).
    applied: dict[str, tuple[str, str]] = field(default_factory=dict)

    def _unchanged(self, existing: Mapping[str, Any], child: dict[str, Any], digest: str) -> bool:
        """Whether applying ``child`` would change nothing: it is what was applied last and
        nobody wrote the object since (fields the server rewrites, like a Secret's
        ``stringData``, are then no difference), or, failing that, the object already has
        every field of ``child`` and no field applied last time was dropped."""
        metadata = existing["metadata"]
        last = self.applied.get(metadata.get("uid", ""))
        if last is not None and last == (digest, metadata.get("resourceVersion", "")):
            return True
        return (last is None or last[0] == digest) and not differs(existing, child)

    async def write(
        self,
        client: Any,
        parent: Mapping[str, Any],
        types: Sequence[ChildType],
        observed: Sequence[Mapping[str, Any]],
        desired: Sequence[dict[str, Any]],
        counts: WriteCounts,
    ) -> None:
        by_type = {type_key(t.api_version, t.kind): t for t in types}
        wanted = {_identity(obj) for obj in desired}
        current = {_identity(obj): obj for obj in observed}
        for identity, obj in current.items():
            metadata = obj["metadata"]
            if identity in wanted or metadata.get("deletionTimestamp"):
                continue
            await self._delete(client, obj, counts)
        reference = controller_reference_to(parent)
        for child in desired:
            identity = _identity(child)
            child_type = by_type[identity[0]]
            child = _owned(child, reference)
            existing = current.get(identity)
            digest = _digest(child)
            if existing is None:
                await self._apply(client, child, digest, counts, created=True)
                continue
            if existing["metadata"].get("deletionTimestamp"):
                continue
            uid = existing["metadata"].get("uid", "")
            unchanged = self._unchanged(existing, child, digest)
            if unchanged or child_type.method == "OnDelete":
                continue
            if child_type.method in ("Recreate", "RollingRecreate"):
                if await self._changes(client, child, existing):
                    await self._delete(client, existing, counts)
                else:
                    self.applied[uid] = (digest, existing["metadata"].get("resourceVersion", ""))
                continue
            await self._apply(client, child, digest, counts)

    async def _apply(
        self,
        client: Any,
        child: dict[str, Any],
        digest: str,
        counts: WriteCounts,
        *,
        created: bool = False,
    ) -> None:
        applied = await client.apply(child, field_manager=self.field_manager, force=True)
        if created:
            counts.created += 1
        else:
            counts.applied += 1
        uid = (applied.get("metadata") or {}).get("uid")
        if uid:
            resource_version = (applied.get("metadata") or {}).get("resourceVersion", "")
            self.applied[uid] = (digest, resource_version)
            if len(self.applied) > MAX_REMEMBERED_CHILDREN:
                del self.applied[next(iter(self.applied))]  # the oldest: likely gone

    async def _changes(
        self, client: Any, child: dict[str, Any], existing: Mapping[str, Any]
    ) -> bool:
        """Whether applying ``child`` would change the object (a dry-run apply)."""
        dry = await client.apply(child, field_manager=self.field_manager, force=True, dry_run=True)
        return bool(
            (dry.get("metadata") or {}).get("generation") != existing["metadata"].get("generation")
            or _sanitized(dry) != _sanitized(existing)
        )

    async def _delete(self, client: Any, obj: Mapping[str, Any], counts: WriteCounts) -> None:
        metadata = obj["metadata"]
        try:
            await client.delete(
                obj["apiVersion"],
                obj["kind"],
                metadata["name"],
                namespace=metadata.get("namespace"),
                propagation_policy="Background",
                preconditions=Preconditions(uid=metadata.get("uid")),
            )
            counts.deleted += 1
        except (NotFound, Conflict):
            pass  # gone, or replaced by another object of that name
        self.applied.pop(metadata.get("uid", ""), None)


def _owned(child: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """``child`` with the parent's controller reference (unless it already names the parent)."""
    metadata = dict(child.get("metadata") or {})
    references = list(metadata.get("ownerReferences") or [])
    if not any(r.get("uid") == reference["uid"] for r in references if isinstance(r, Mapping)):
        references.append(reference)
    metadata["ownerReferences"] = references
    return {**child, "metadata": metadata}


_SYSTEM_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
)


def _sanitized(obj: Mapping[str, Any]) -> dict[str, Any]:
    result = {key: value for key, value in obj.items() if key != "status"}
    result["metadata"] = {
        key: value
        for key, value in (obj.get("metadata") or {}).items()
        if key not in _SYSTEM_FIELDS
    }
    return result
