"""One object's story: audit records and operators' trace records about it, joined.

:class:`ObjectTimeline` decides, record by record, whether a record belongs to the object's
timeline and turns it into an *entry* (the record plus ``source`` and ``lane``):

* audit records of the object itself (any verb, its subresources too), and the creation of
  objects it owns (their created object names its uid in ``ownerReferences``);
* trace records about the object, the enqueues/dequeues/reconciles of its key by a controller
  of its kind, and everything a reconcile of it did (writes and Events name it as their
  ``primary``, and carry the reconcile's id, learnt from its ``reconcileStart``) — so a Pod the
  reconcile created is on its timeline.

Records must be fed in each source's order (seq): a reconcile's start comes before its writes.
The lanes are the chart's rows: ``API server`` for audit records, the controller's name for
trace records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["API_LANE", "ObjectRef", "ObjectTimeline"]

#: The lane of audit records (writes as the API server saw them).
API_LANE = "API server"
#: Trace record types that carry the queued key of a primary.
KEYED_TYPES = frozenset({"enqueue", "dequeue", "reconcileStart", "reconcileEnd"})


@dataclass(frozen=True)
class ObjectRef:
    """The object a timeline is about."""

    api_version: str
    kind: str
    resource: str
    namespace: str | None
    name: str
    uid: str | None = None

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""

    @property
    def key(self) -> str:
        """The work-queue key: ``namespace/name``, or ``name`` for a cluster-scoped object."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _group_of(api_version: object) -> str:
    text = str(api_version or "")
    return text.rsplit("/", 1)[0] if "/" in text else ""


@dataclass
class ObjectTimeline:
    """Which records belong to one object's timeline (stateful: it learns reconcile ids)."""

    ref: ObjectRef
    #: Controller name -> the Kind it reconciles, from the operators' snapshots.
    for_kinds: dict[str, str] = field(default_factory=dict)
    reconcile_ids: set[str] = field(default_factory=set)

    def _is_the_object(self, namespace: object, name: object, uid: object = None) -> bool:
        if self.ref.uid and uid and uid != self.ref.uid:
            return False  # an older object of the same name
        return name == self.ref.name and (namespace or None) == self.ref.namespace

    def audit_entry(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entry for an audit record of the object (or of a child's creation), else None."""
        ref = record.get("objectRef") or {}
        if not isinstance(ref, Mapping):
            return None
        same_kind = (
            ref.get("resource") == self.ref.resource
            and _group_of(ref.get("apiVersion")) == self.ref.group
        )
        if same_kind and self._is_the_object(ref.get("namespace"), ref.get("name"), ref.get("uid")):
            return {**record, "source": "audit", "lane": API_LANE, "about": "self"}
        created = record.get("object")
        if self.ref.uid and isinstance(created, Mapping):
            owners = (created.get("metadata") or {}).get("ownerReferences") or []
            if any(isinstance(o, Mapping) and o.get("uid") == self.ref.uid for o in owners):
                return {**record, "source": "audit", "lane": API_LANE, "about": "child"}
        return None

    def _is_about(self, obj: object) -> bool:
        return (
            isinstance(obj, Mapping)
            and obj.get("kind") == self.ref.kind
            and _group_of(obj.get("apiVersion")) == self.ref.group
            and self._is_the_object(obj.get("namespace"), obj.get("name"), obj.get("uid"))
        )

    def trace_entry(self, operator: str, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entry for a trace record about the object or done by its reconcile, else None."""
        kind = record.get("type")
        controller = record.get("controller")
        reconcile_id = record.get("reconcileId")
        about_object = self._is_about(record.get("object"))
        for_it = self._is_about(record.get("primary"))
        keyed = (
            kind in KEYED_TYPES
            and record.get("key") == self.ref.key
            and self.for_kinds.get(str(controller), self.ref.kind) == self.ref.kind
        )
        if kind == "reconcileStart" and (keyed or about_object) and reconcile_id:
            self.reconcile_ids.add(str(reconcile_id))
        by_its_reconcile = for_it or (
            reconcile_id is not None and str(reconcile_id) in self.reconcile_ids
        )
        if not (about_object or keyed or by_its_reconcile):
            return None
        return {
            **record,
            "source": "trace",
            "operator": operator,
            "lane": str(controller) if controller else operator,
            "about": "self" if about_object or keyed else "reconcile",
        }
