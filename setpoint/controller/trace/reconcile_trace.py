"""`ReconcileTrace`: what the runtime's hooks call to append trace records to the ring."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from setpoint.api.gvk import ObjectKey
from setpoint.api.patch import create_json_patch
from setpoint.api.record_ring import RecordRing
from setpoint.api.secret_redaction import is_secret, redact_patch
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.log_context import CONTROLLER, KEY, RECONCILE_ID
from setpoint.controller.trace.records import Ref, TraceRecord, key_ref

__all__ = ["DEFAULT_TRACE_CAPACITY", "ReconcileTrace"]

#: Records kept when tracing is on and no capacity is given: a few minutes of a busy
#: operator, a few MiB.
DEFAULT_TRACE_CAPACITY: Final = 10_000
#: Own writes remembered per trace to tell a watch event of one from anyone else's.
_MAX_OWN_WRITES: Final = 10_000
_NO_KIND: Final = ("", "")
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
#: Fields left out of a write's diff: they change on every write and say nothing.
_NOISE: Final = ("managedFields", "resourceVersion")


class ReconcileTrace:
    """The ring of trace records of one manager (and the managers sharing it).

    Hooks call the methods named after the record types. ``controllers`` maps a controller name
    to its primary ``(apiVersion, kind)``, so that records about a key name the primary object.
    """

    def __init__(self, capacity: int = DEFAULT_TRACE_CAPACITY) -> None:
        self.ring: RecordRing[TraceRecord] = RecordRing(capacity)
        self.controllers: dict[str, tuple[str, str]] = {}
        self._append = self.ring.append
        # (controller, uid, resourceVersion) of writes' answers, oldest first.
        self._own: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        # (controller, kind, namespace, name) -> writes in flight.
        self._in_flight: dict[tuple[str, str, str | None, str], int] = {}

    @property
    def capacity(self) -> int:
        """How many records the ring keeps."""
        return self.ring.capacity

    def _primary(self, controller: str, key: ObjectKey) -> Ref:
        kind = self.controllers.get(controller, _NO_KIND)
        return (kind[0], kind[1], key[0], key[1], None)

    # -- watch events and enqueues ---------------------------------------------------------

    def watch(self, controller: str, event_type: str, obj: CachedObject) -> tuple[bool, Ref]:
        """A watch event delivered to a source of ``controller``; whether it is its own write,
        and the object as records name it."""
        namespace, name, uid, version = obj.identity
        own = (controller, uid, version) in self._own or (
            bool(self._in_flight) and (controller, obj.kind, namespace, name) in self._in_flight
        )
        ref = (obj.api_version, obj.kind, namespace, name, uid)
        self._append(
            TraceRecord("watch", controller, ref, None, (event_type, version or None, own))
        )
        return own, ref

    def enqueue(
        self,
        controller: str,
        key: ObjectKey,
        cause: tuple[str, str | None, Ref | None, str | None],
        own_write: bool = False,
        deduplicated: bool = False,
        delay: float | None = None,
    ) -> None:
        """``key`` queued for ``controller`` because of ``cause``: ``(kind, handler, the event's
        object or None, its event type or None)``, see the contract."""
        kind = self.controllers.get(controller, _NO_KIND)
        self._append(
            TraceRecord(
                "enqueue",
                controller,
                (kind[0], kind[1], key[0], key[1], None),
                None,
                (None, cause, own_write, deduplicated, delay),
            )
        )

    def dequeue(self, controller: str, key: ObjectKey, wait: float, retries: int) -> None:
        """A worker of ``controller`` took ``key`` after ``wait`` seconds in the queue."""
        self._append(
            TraceRecord(
                "dequeue",
                controller,
                self._primary(controller, key),
                None,
                (None, wait, retries),
            )
        )

    def reconcile_begin(
        self, controller: str, key: ObjectKey, wait: float, retries: int, reconcile_id: str
    ) -> None:
        """:meth:`dequeue` then :meth:`reconcile_start` (one call on the worker's path)."""
        kind = self.controllers.get(controller, _NO_KIND)
        primary = (kind[0], kind[1], key[0], key[1], None)
        append = self._append
        append(TraceRecord("dequeue", controller, primary, None, (None, wait, retries)))
        append(TraceRecord("reconcileStart", controller, primary, reconcile_id, (None, None)))

    # -- reconciles --------------------------------------------------------------------------

    def reconcile_start(self, controller: str, key: ObjectKey, reconcile_id: str) -> None:
        """A reconcile of ``key`` began."""
        self._append(
            TraceRecord(
                "reconcileStart",
                controller,
                self._primary(controller, key),
                reconcile_id,
                (None, None),
            )
        )

    def reconcile_end(
        self,
        controller: str,
        key: ObjectKey,
        reconcile_id: str,
        duration: float,
        result: str,
        requeue_after: float | None = None,
        error: str | None = None,
        backoff: float | None = None,
    ) -> None:
        """A reconcile of ``key`` ended with ``result`` (success, requeue, requeueAfter, error)."""
        self._append(
            TraceRecord(
                "reconcileEnd",
                controller,
                self._primary(controller, key),
                reconcile_id,
                (None, None, duration, result, requeue_after, error, backoff),
            )
        )

    # -- what a reconcile did -----------------------------------------------------------------

    def write_started(
        self, kind: str, namespace: str | None, name: str
    ) -> tuple[str, str, str | None, str] | None:
        """A write through ``ctx.client`` is about to be sent (its watch event may come before
        its answer): pass the result to :meth:`write`."""
        controller = CONTROLLER.get()
        if not controller or not kind or not name:
            return None
        flight = (controller, kind, namespace or None, name)
        self._in_flight[flight] = self._in_flight.get(flight, 0) + 1
        return flight

    def write(
        self,
        flight: tuple[str, str, str | None, str] | None,
        verb: str,
        before: CachedObject | Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
        field_manager: str | None,
        body: bytes = b"",
    ) -> None:
        """A write of the current reconcile answered: ``after`` is the server's answer (None
        when it failed, then only the in-flight mark is cleared), ``body`` its JSON when the
        client kept it."""
        if flight is not None:
            remaining = self._in_flight.get(flight, 1) - 1
            if remaining > 0:
                self._in_flight[flight] = remaining
            else:
                self._in_flight.pop(flight, None)
        if after is None:
            return
        metadata = after.get("metadata")
        if not isinstance(metadata, Mapping) or after.get("kind") == "Status":
            return
        controller = CONTROLLER.get() or None
        uid = str(metadata.get("uid") or "")
        version = str(metadata.get("resourceVersion") or "")
        if controller is not None and uid and version:
            own = self._own
            own[(controller, uid, version)] = None
            if len(own) > _MAX_OWN_WRITES:
                own.popitem(last=False)
        reconcile_id = RECONCILE_ID.get() or None
        self._append(
            TraceRecord(
                "write",
                controller,
                (
                    str(after.get("apiVersion") or ""),
                    str(after.get("kind") or ""),
                    metadata.get("namespace"),
                    str(metadata.get("name") or ""),
                    uid,
                ),
                reconcile_id,
                (
                    None,
                    verb,
                    version or None,
                    field_manager,
                    None if verb == "delete" else _diff_of(before, after, body),
                ),
                self._primary_of(controller, KEY.get()),
            )
        )

    @staticmethod
    def context() -> tuple[str, str, str]:
        """The reconcile running here: ``(controller, reconcile id, key)`` ("" outside one),
        to hand to :meth:`event` with a record made on another thread."""
        return CONTROLLER.get(), RECONCILE_ID.get(), KEY.get()

    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        context: tuple[str, str, str],
    ) -> None:
        """An Event recorded by the reconcile of ``context`` (see :meth:`context`)."""
        controller = context[0] or None
        reconcile_id = context[1] or None
        self._append(
            TraceRecord(
                "event",
                controller,
                (
                    str(regarding.get("apiVersion") or ""),
                    str(regarding.get("kind") or ""),
                    regarding.get("namespace"),
                    str(regarding.get("name") or ""),
                    regarding.get("uid"),
                ),
                reconcile_id,
                (None, event_type, reason, note),
                self._primary_of(controller, context[2]),
            )
        )

    def _primary_of(self, controller: str | None, key: str) -> Ref | None:
        """The primary object ``key`` (the log context's) of ``controller``'s reconcile."""
        if controller is None or not key:
            return None
        return key_ref(self.controllers.get(controller, _NO_KIND), key)

    # -- own writes ---------------------------------------------------------------------------

    def is_own(self, controller: str, obj: CachedObject) -> bool:
        """Whether ``obj`` (in a watch event) is what a write of ``controller`` produced, or
        an object ``controller`` is writing right now (its answer not yet back)."""
        namespace, name, uid, version = obj.identity
        return (controller, uid, version) in self._own or (
            bool(self._in_flight) and (controller, obj.kind, namespace, name) in self._in_flight
        )


class WriteDiff(msgspec.Struct, gc=False):
    """A write's diff, made when its record is first read: from the cached object ``before``
    (None: nothing cached) to the answer's JSON ``after``. Bytes and a cache object only, so a
    ring full of writes gives the garbage collector nothing to walk."""

    before: CachedObject | None
    after: bytes

    def __call__(self) -> list[dict[str, Any]]:
        previous = self.before.to_dict() if self.before is not None else {}
        current = _DECODER.decode(self.after)
        for document in (previous, current):
            metadata = document.get("metadata")
            if isinstance(metadata, Mapping):
                document["metadata"] = {k: v for k, v in metadata.items() if k not in _NOISE}
        patch = create_json_patch(previous, current)
        return redact_patch(patch) if is_secret(current) or is_secret(previous) else patch


def _diff_of(
    before: CachedObject | Mapping[str, Any] | None, after: Mapping[str, Any], body: bytes
) -> WriteDiff | list[dict[str, Any]]:
    """The diff of a write: made later unless the object is a Secret, whose values must not
    stay in memory. ``body`` is the answer's JSON as the server sent it (b"": encode it)."""
    if before is not None and not isinstance(before, CachedObject):
        before = CachedObject.from_dict(before)
    diff = WriteDiff(before, body or _ENCODER.encode(after))
    if is_secret(after):
        return diff()
    return diff
