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
"""

from __future__ import annotations

from collections import OrderedDict

from setpoint.cache.cached_object import CachedObject

__all__ = ["MAX_TRACKED_WRITES", "OwnWrites"]

#: Writes remembered per controller; the oldest are forgotten first (their events are long
#: past, or the object was deleted before its event came).
MAX_TRACKED_WRITES = 100_000


class OwnWrites:
    """uid -> the resourceVersion the controller's latest write of that object returned."""

    __slots__ = ("_versions",)

    def __init__(self) -> None:
        self._versions: OrderedDict[str, str] = OrderedDict()

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
