"""Finalizers: run cleanup before Kubernetes lets an object go.

A finalizer is a name in ``metadata.finalizers``. While it is there, deleting the object only sets
``deletionTimestamp``; the controller sees that, cleans up (external resources, say), and removes
its name, after which the API server deletes the object. The flow, per reconcile:

1. object alive, our finalizer missing → add it (and return: the write triggers a new reconcile);
2. object alive, finalizer present → reconcile normally;
3. object being deleted, finalizer present → run the cleanup; on success remove the finalizer;
   on failure raise, so the reconcile is retried with backoff and the object stays;
4. object being deleted, finalizer absent → nothing to do.

:func:`handle_finalizer` does all of it for one finalizer; :class:`Finalizers` for several.
Writes are merge patches carrying the ``resourceVersion`` the decision was based on, so a stale
cache read gets ``Conflict`` (and a retry) instead of clobbering someone else's finalizer.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from setpoint.api.meta import as_mapping, is_model
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.client.conflicts import retry_on_conflict
from setpoint.client.errors import Conflict, NotFound

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "Cleanup",
    "FinalizerOutcome",
    "FinalizerResult",
    "Finalizers",
    "ensure_finalizer",
    "handle_finalizer",
    "remove_finalizer",
]

logger = logging.getLogger(__name__)

#: A cleanup function: gets a fresh dict of the object being deleted. Async functions run on
#: the event loop, sync ones in a worker thread.
Cleanup = Callable[[dict[str, Any]], Awaitable[None] | None]
ObjectInput: TypeAlias = "Mapping[str, Any] | CachedObject | BaseModel"


class FinalizerOutcome(enum.Enum):
    """What :func:`handle_finalizer` did."""

    #: The object is alive and the finalizer was just added. Carry on with ``result.object``: the
    #: write changed only metadata, so a ``GenerationChanged`` predicate filters out the event it
    #: causes and no new reconcile may come.
    ADDED = "added"
    #: The object is alive and already carries the finalizer: reconcile normally.
    PRESENT = "present"
    #: The object is being deleted; cleanup ran and the finalizer was removed.
    FINALIZED = "finalized"
    #: The object is being deleted and does not carry the finalizer: nothing to do.
    ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class FinalizerResult:
    """The outcome and the object as the server returned it after our write (if any)."""

    outcome: FinalizerOutcome
    object: dict[str, Any] | None = None

    @property
    def deleting(self) -> bool:
        """True when the object is being deleted: the reconcile should stop here."""
        return self.outcome in (FinalizerOutcome.FINALIZED, FinalizerOutcome.ABSENT)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(
            f"finalizer name {name!r}: must be a non-empty string without spaces, "
            "conventionally domain-qualified (e.g. 'example.com/cleanup')"
        )


@dataclass(frozen=True, slots=True)
class _View:
    """What the finalizer logic reads from an object, whatever form it came in."""

    api_version: str
    kind: str
    name: str
    namespace: str | None
    resource_version: str
    finalizers: tuple[str, ...]
    deleting: bool
    uid: str = ""

    @property
    def target(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": self.name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata}


def _view(obj: ObjectInput) -> _View:
    if is_model(obj):
        obj = as_mapping(obj)
    if isinstance(obj, CachedObject):
        return _View(
            obj.api_version,
            obj.kind,
            obj.name,
            obj.namespace,
            obj.resource_version,
            tuple(obj.finalizers),
            obj.deletion_timestamp is not None,
            obj.uid,
        )
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        raise ValueError("object has no metadata: metadata must be an object")
    finalizers = metadata.get("finalizers") or []
    if not isinstance(finalizers, list | tuple):
        raise ValueError("metadata.finalizers must be a list")
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj.get(field):
            raise ValueError(f"{field}: the object must have a non-empty {field}")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("metadata.name: the object must have a name")
    return _View(
        str(obj["apiVersion"]),
        str(obj["kind"]),
        name,
        metadata.get("namespace") or None,
        str(metadata.get("resourceVersion") or ""),
        tuple(finalizers),
        metadata.get("deletionTimestamp") is not None,
        str(metadata.get("uid") or ""),
    )


async def _write_finalizers(
    client: Client, view: _View, finalizers: Sequence[str]
) -> dict[str, Any] | None:
    metadata: dict[str, Any] = {"finalizers": list(finalizers)}
    if view.resource_version:
        # Optimistic lock: the API server answers 409 if the object changed since we read it.
        metadata["resourceVersion"] = view.resource_version
    try:
        result: dict[str, Any] = await client.patch(view.target, {"metadata": metadata})
    except NotFound:
        if view.deleting:
            return None  # removing our last finalizer raced with the object's disappearance
        raise
    return result


async def _remove_after_cleanup(
    client: Client, view: _View, names: Sequence[str]
) -> dict[str, Any] | None:
    """Remove ``names`` from a deleted object once their cleanups have run.

    A conflict here is most often the cleanup's own write (a status condition, an annotation)
    having moved the object on since it was read. Failing would run the cleanups again, which
    write again and conflict again, for ever; the cleanups are done, so re-read the object and
    remove the names from what it holds now (never from a new object of the same name).
    """
    current = view

    async def remove() -> dict[str, Any] | None:
        nonlocal current
        remaining = [f for f in current.finalizers if f not in names]
        if len(remaining) == len(current.finalizers):
            return None
        try:
            return await _write_finalizers(client, current, remaining)
        except Conflict:
            try:
                fresh = await client.get(
                    view.api_version, view.kind, view.name, namespace=view.namespace
                )
            except NotFound:
                return None  # gone meanwhile: nothing left to remove
            current = _view(fresh)
            if view.uid and current.uid != view.uid:
                return None  # a new object of the same name: not ours to finalize
            raise

    return await retry_on_conflict(remove)


async def ensure_finalizer(client: Client, obj: ObjectInput, name: str) -> dict[str, Any] | None:
    """Add finalizer ``name`` unless present; returns the updated object, or None if no write.

    Raises ``Conflict`` if ``obj`` is stale (the reconcile is then retried).
    """
    _check_name(name)
    view = _view(obj)
    if name in view.finalizers:
        return None
    return await _write_finalizers(client, view, [*view.finalizers, name])


async def remove_finalizer(client: Client, obj: ObjectInput, name: str) -> dict[str, Any] | None:
    """Remove finalizer ``name`` if present; returns the updated object, or None if no write.

    An object that vanished meanwhile is fine (None). Raises ``Conflict`` if ``obj`` is stale.
    """
    _check_name(name)
    view = _view(obj)
    if name not in view.finalizers:
        return None
    return await _write_finalizers(client, view, [f for f in view.finalizers if f != name])


async def _run_cleanup(cleanup: Cleanup, obj: ObjectInput) -> None:
    fresh: Any
    if isinstance(obj, CachedObject):
        fresh = obj.to_dict()
    elif is_model(obj):
        fresh = obj.model_copy(deep=True)  # the cleanup gets the model it was given
    else:
        fresh = _deep_copy(obj)
    if inspect.iscoroutinefunction(cleanup) or inspect.iscoroutinefunction(
        getattr(cleanup, "__call__", None)  # noqa: B004 - an object with async __call__
    ):
        outcome = cleanup(fresh)
    else:
        # Sync cleanups usually call slow external APIs: keep them off the event loop.
        outcome = await asyncio.to_thread(cleanup, fresh)
    if inspect.isawaitable(outcome):
        await outcome


def _deep_copy(obj: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(obj))


async def handle_finalizer(
    client: Client, obj: ObjectInput, name: str, cleanup: Cleanup
) -> FinalizerResult:
    """Add ``name`` to a live object, or run ``cleanup`` and remove ``name`` from a deleted one.

    Typical use at the top of a reconcile::

        result = await handle_finalizer(client, widget, "example.com/cleanup", delete_bucket)
        if result.deleting:
            return None
        if result.object is not None:  # just added: continue with what the server stored
            widget = result.object

    ``cleanup`` raising leaves the finalizer in place and propagates (so the reconcile retries);
    it must be idempotent, as it may run again after a failed finalizer removal.
    """
    _check_name(name)
    view = _view(obj)
    if not view.deleting:
        if name in view.finalizers:
            return FinalizerResult(FinalizerOutcome.PRESENT)
        return FinalizerResult(FinalizerOutcome.ADDED, await ensure_finalizer(client, obj, name))
    if name not in view.finalizers:
        return FinalizerResult(FinalizerOutcome.ABSENT)
    await _run_cleanup(cleanup, obj)
    return FinalizerResult(
        FinalizerOutcome.FINALIZED, await _remove_after_cleanup(client, view, [name])
    )


class Finalizers:
    """Several finalizers of one controller, added and run together (one write each way).

    ``register(name, cleanup)`` then, in the reconcile, ``result = await finalizers.reconcile(
    client, obj)``. On deletion every registered finalizer present runs; those that succeed are
    removed in one patch, and the first failure is then re-raised so the reconcile retries the
    rest.
    """

    def __init__(self) -> None:
        self._cleanups: dict[str, Cleanup] = {}

    def register(self, name: str, cleanup: Cleanup) -> None:
        """Register ``cleanup`` under finalizer ``name`` (each name once)."""
        _check_name(name)
        if name in self._cleanups:
            raise ValueError(f"finalizer {name!r} is already registered")
        if not callable(cleanup):
            raise TypeError(f"finalizer {name!r}: cleanup must be callable, got {cleanup!r}")
        self._cleanups[name] = cleanup

    @property
    def names(self) -> tuple[str, ...]:
        """The registered finalizer names, in registration order."""
        return tuple(self._cleanups)

    async def reconcile(self, client: Client, obj: ObjectInput) -> FinalizerResult:
        """Ensure all finalizers on a live object; run and remove them on a deleted one."""
        view = _view(obj)
        if not view.deleting:
            missing = [n for n in self._cleanups if n not in view.finalizers]
            if not missing:
                return FinalizerResult(FinalizerOutcome.PRESENT)
            updated = await _write_finalizers(client, view, [*view.finalizers, *missing])
            return FinalizerResult(FinalizerOutcome.ADDED, updated)
        present = [n for n in self._cleanups if n in view.finalizers]
        if not present:
            return FinalizerResult(FinalizerOutcome.ABSENT)
        done: list[str] = []
        failure: BaseException | None = None
        for name in present:
            try:
                await _run_cleanup(self._cleanups[name], obj)
            except Exception as exc:
                logger.warning("finalizer %s failed for %s/%s: %s", name, view.kind, view.name, exc)
                failure = failure or exc
            else:
                done.append(name)
        updated = None
        if done:
            updated = await _remove_after_cleanup(client, view, done)
        if failure is not None:
            raise failure
        return FinalizerResult(FinalizerOutcome.FINALIZED, updated)
