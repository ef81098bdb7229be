"""What triggered each run: the CR's own event, a dependent's, the reconcile period, a retry.

Reconciles are level-based and get only a key, so the trigger is noted on the side: the event
handlers and predicates of the watch note it per key as events are enqueued, and the reconcile
takes it when it starts. Several events before one run are summed up as the latest one
("and N more"). A run with no note was started by a retry after a failure or by a resync.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from setpoint.api.gvk import ObjectKey
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.handlers import (
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    RequestQueue,
)
from setpoint.controller.predicates import Predicate

__all__ = [
    "DependentChanged",
    "NoGeneration",
    "PrimaryTrigger",
    "TriggeringAnnotationHandler",
    "TriggeringOwnerHandler",
    "Triggers",
]


#: A requeue that comes this much earlier than the period asked for was not the period.
PERIOD_TOLERANCE = 1.0


class Triggers:
    """The pending trigger of each key."""

    def __init__(self) -> None:
        self._pending: dict[Any, tuple[str, int]] = {}
        # key -> when the requeue asked by the last run falls due (monotonic seconds)
        self._due: dict[Any, float] = {}

    def note(self, key: Any, trigger: str) -> None:
        """``trigger`` happened for ``key`` (the latest one is reported)."""
        self._due.pop(key, None)
        previous = self._pending.get(key)
        self._pending[key] = (trigger, previous[1] + 1 if previous else 0)

    def note_period(self, key: Any, seconds: float) -> None:
        """The run asked to run again after ``seconds`` (unless an event comes first)."""
        if key in self._pending:
            return  # an event during the run: it triggers the next run
        self._pending[key] = (f"reconcile period ({seconds:g}s)", 0)
        self._due[key] = time.monotonic() + seconds

    def note_retry(self, key: Any) -> None:
        """The run failed and will be retried with backoff (unless an event comes first)."""
        if key in self._pending:
            return  # an event during the run: it triggers the next run
        self._pending[key] = ("retry after a failed run", 0)

    def take(self, key: Any) -> str:
        """The trigger of the run starting now for ``key``."""
        pending = self._pending.pop(key, None)
        due = self._due.pop(key, None)
        if pending is None:
            return "resync"
        trigger, more = pending
        if due is not None and time.monotonic() < due - PERIOD_TOLERANCE:
            # Not the period: a retry the queue had scheduled before the last run.
            return "retry scheduled before the last run"
        return f"{trigger} (and {more} more)" if more else trigger


def _key(obj: CachedObject) -> ObjectKey:
    return ObjectKey(obj.namespace or None, obj.name)


def _describe(obj: CachedObject) -> str:
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return f"{obj.kind} {where}"


class PrimaryTrigger(Predicate):
    """Lets every event through and notes it as its CR's trigger (put it last)."""

    def __init__(self, triggers: Triggers) -> None:
        self.triggers = triggers

    def create(self, obj: CachedObject) -> bool:
        self.triggers.note(_key(obj), f"{_describe(obj)} added")
        return True

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        if new.deletion_timestamp is not None and old.deletion_timestamp is None:
            what = "marked for deletion"
        elif old.generation != new.generation:
            what = f"spec changed (generation {new.generation})"
        else:
            what = "changed"
        self.triggers.note(_key(new), f"{_describe(new)} {what}")
        return True

    def delete(self, obj: CachedObject) -> bool:
        self.triggers.note(_key(obj), f"{_describe(obj)} deleted")
        return True


class NoGeneration(Predicate):
    """Passes updates of objects without ``metadata.generation`` (operator-lib's
    NoGenerationPredicate): with ``GenerationChanged`` it lets through what changes them."""

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return not new.generation


def _without_volatile_fields(obj: CachedObject) -> dict[str, Any]:
    document = copy.copy(obj.to_dict())
    document.pop("status", None)
    metadata = dict(document.get("metadata") or {})
    for field in ("resourceVersion", "managedFields"):
        metadata.pop(field, None)
    document["metadata"] = metadata
    return document


class DependentChanged(Predicate):
    """operator-lib's DependentPredicate: a dependent's creation wakes nothing (the run made
    it), its deletion does, and an update only when more than ``status`` and the
    resourceVersion changed."""

    def create(self, obj: CachedObject) -> bool:
        return False

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return _without_volatile_fields(old) != _without_volatile_fields(new)


class TriggeringOwnerHandler(EnqueueRequestForOwner):
    """Enqueues the CR owning a dependent (any owner reference, as Operator SDK) and notes the
    dependent's event as the trigger."""

    def __init__(self, owner_api_version: str, owner_kind: str, triggers: Triggers) -> None:
        super().__init__(owner_api_version, owner_kind, only_controller=False)
        self.triggers = triggers

    def _note(self, obj: CachedObject, what: str) -> None:
        for request in self.owners_of(obj):
            self.triggers.note(request, f"dependent {_describe(obj)} {what}")

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._note(obj, "added")
        super().on_create(obj, queue)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        self._note(new, "changed")
        super().on_update(old, new, queue)

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._note(obj, "deleted")
        super().on_delete(obj, queue)


class TriggeringAnnotationHandler(EnqueueRequestsFromMapFunc):
    """Enqueues the CR named by a dependent's ``operator-sdk/primary-resource`` annotations
    (operator-lib's EnqueueRequestForAnnotation) and notes the trigger."""

    def __init__(
        self, group_kind: str, triggers: Triggers, annotation: str, type_annotation: str
    ) -> None:
        self.group_kind = group_kind
        self.triggers = triggers
        self.annotation = annotation
        self.type_annotation = type_annotation
        super().__init__(self._owners)

    def _owners(self, obj: Any) -> list[ObjectKey]:
        annotations = obj.annotations if isinstance(obj, CachedObject) else {}
        if annotations.get(self.type_annotation) != self.group_kind:
            return []
        primary = annotations.get(self.annotation) or ""
        namespace, _, name = primary.rpartition("/")
        if not name:
            return []
        return [ObjectKey(namespace or None, name)]

    def _note(self, what: str, *objects: CachedObject) -> None:
        keys = {key: obj for obj in objects for key in self._owners(obj)}
        for key, obj in keys.items():
            self.triggers.note(key, f"dependent {_describe(obj)} {what}")

    def on_create(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._note("added", obj)
        super().on_create(obj, queue)

    def on_update(self, old: CachedObject, new: CachedObject, queue: RequestQueue) -> None:
        self._note("changed", old, new)
        super().on_update(old, new, queue)

    def on_delete(self, obj: CachedObject, queue: RequestQueue) -> None:
        self._note("deleted", obj)
        super().on_delete(obj, queue)
