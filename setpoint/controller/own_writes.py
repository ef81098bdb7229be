"""Own writes: an opt-in that keeps a controller's own writes from waking its reconcile.

By default, as in controller-runtime, a reconcile's writes come back as watch events (MODIFIED
for a status patch, ADDED for a child, which ``owns`` maps to the owner) and enqueue its key
again. The work queue coalesces them: events that arrive while the key is being reconciled
make one more run after it, whatever their number. That run reads the cache (which already
holds the writes, read-your-own-writes) and, when the object is as the previous run left it,
writes nothing: ``patch_status``, ``apply_owned`` and ``create_or_*`` send nothing then.

``ignore_own_writes=True`` (per reconciler) saves that run: the controller records the
resourceVersion each write through its context returned, and an event whose object carries
exactly that resourceVersion is dropped for this controller (other controllers still get it).
A change anyone else makes has another resourceVersion and wakes the reconcile as usual; the
initial list, resyncs and deletions are never dropped. It is unsafe for a reconcile that writes
and returns relying on that write's event to run its next step, because that event never
comes and the object waits until something else changes it:

- a state machine that writes ``status.phase`` and returns (cnat's ``At``: PENDING → RUNNING,
  the next run creates the pod);
- create-then-wait-for-the-child: a run creates a child and returns, and the next run, woken
  by the child's ADDED event, records or uses it;
- a "Progressing" condition written before the work it announces, the work done by the run
  that the condition's event wakes.

Opt in only when every run does all it can before returning (or requeues itself).

The event of a write can arrive before the write's answer (the watch and the request use
different connections). So a write announces itself first (:meth:`OwnWrites.begin`): an event
for that object while the write is in flight is held until the answer is recorded
(:meth:`OwnWrites.end`), then dropped if it is the write's own, delivered otherwise.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from setpoint.cache.cached_object import CachedObject

#: An object's identity for in-flight writes: (kind, namespace, name).
WriteKey = tuple[str, str | None, str]

__all__ = ["MAX_TRACKED_WRITES", "OwnWrites"]

#: Writes remembered per controller; the oldest are forgotten first (their events are long
#: past, or the object was deleted before its event came).
MAX_TRACKED_WRITES = 100_000


class OwnWrites:
    """uid -> the resourceVersion the controller's latest write of that object returned."""

    __slots__ = ("_held", "_in_flight", "_versions")

    def __init__(self) -> None:
        self._versions: OrderedDict[str, str] = OrderedDict()
        self._in_flight: dict[WriteKey, int] = {}
        self._held: dict[WriteKey, list[tuple[CachedObject, Callable[[], None]]]] = {}

    def __len__(self) -> int:
        return len(self._versions)

    def record(self, uid: str, resource_version: str) -> None:
        """Remember a write's result."""
        if not uid or not resource_version:
            return
        versions = self._versions
        versions[uid] = resource_version
        versions.move_to_end(uid)
        if len(versions) > MAX_TRACKED_WRITES:
            versions.popitem(last=False)

    def is_own(self, obj: CachedObject) -> bool:
        """True (once) when ``obj`` is exactly what one of our writes produced."""
        uid = obj.uid
        if self._versions.get(uid) == obj.resource_version and uid:
            del self._versions[uid]
            return True
        return False

    def begin(self, kind: str, namespace: str | None, name: str) -> WriteKey | None:
        """Announce a write of ``kind`` ``namespace/name``; pass the result to :meth:`end`."""
        if not kind or not name:
            return None
        key = (kind, namespace or None, name)
        self._in_flight[key] = self._in_flight.get(key, 0) + 1
        return key

    def end(self, key: WriteKey | None, uid: str = "", resource_version: str = "") -> None:
        """The write of ``key`` finished (``uid``/``resource_version`` of its answer, or empty
        when it failed): record it, then drop or deliver the events held meanwhile."""
        self.record(uid, resource_version)
        if key is None:
            return
        remaining = self._in_flight.get(key, 1) - 1
        if remaining > 0:
            self._in_flight[key] = remaining
            return
        self._in_flight.pop(key, None)
        for obj, deliver in self._held.pop(key, ()):
            if not self.is_own(obj):
                deliver()

    def intercept(self, obj: CachedObject, deliver: Callable[[], None]) -> bool:
        """True when the event of ``obj`` is taken care of here: dropped as our own write's,
        or held (then ``deliver`` runs later) while a write of that object is in flight."""
        if self.is_own(obj):
            return True
        key = (obj.kind, obj.namespace, obj.name)
        if key in self._in_flight:
            self._held.setdefault(key, []).append((obj, deliver))
            return True
        return False
