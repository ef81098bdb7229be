"""Own writes: the events a controller's own writes cause wake no reconcile.

A reconcile that patches its object's status, or creates a child, gets an event back for each
write (MODIFIED for the status, ADDED for the child, which ``owns`` maps to the owner), and each
would run the reconcile again for nothing: the object is already as that reconcile left it.
So the controller records the resourceVersion every write through its context returned, and an
event whose object carries exactly that resourceVersion is dropped for this controller (other
controllers still get it). This is safe under level-based semantics: any change made by someone
else after the write has another resourceVersion and wakes the reconcile as usual; the initial
list, resyncs and deletions are never dropped. Opt out per controller with
``ignore_own_writes=False``.

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
