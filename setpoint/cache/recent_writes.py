"""Recent writes: read-your-own-writes on top of a watch-fed store (client-go's mutation cache).

A controller writes an object, then reconciles again before the watch has delivered that write:
its cached read is stale, and acting on it does the work twice (PodSet created two Pods for one
deleted, then deleted a healthy one as "excess"). So every write made through a reconcile's
context is recorded here from the server's answer, and reads merge these records over the
store while they are newer than what the store has seen:

- a record of an object (create, update, patch, apply) wins over the stored object until the
  store holds that object at the same or a newer resourceVersion, or the informer's watch has
  passed that resourceVersion (then the store is at least as new, whatever it says);
- a record of a deletion hides the stored object (same uid) until the store drops it.

Records are also dropped after ``ttl`` seconds, a safety net for a stalled watch; the store is
the truth again then. Only resourceVersions that are decimal integers (every Kubernetes API
server's) are compared; an object with another kind of resourceVersion is not recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import msgspec

from setpoint.api.gvk import ObjectKey
from setpoint.cache.cached_object import CachedObject

__all__ = ["DEFAULT_RECENT_WRITE_TTL", "RecentWrites"]

#: How long a record may stand in for the store while the watch has not caught up.
DEFAULT_RECENT_WRITE_TTL = 30.0


# Records are keyed by (namespace or None, name): ObjectKey, a dataclass, hashes in Python, and
# a read or a write would otherwise pay for building one and hashing it.
_Key = tuple[str | None, str]


def _key(key: ObjectKey) -> _Key:
    return (key.namespace, key.name)


def _version(text: str | None) -> int | None:
    if text and text.isdigit():
        return int(text)
    return None


class _Record(msgspec.Struct, gc=False):
    # Not tracked by the garbage collector: a record refers to an immutable object, a string
    # and a decode function shared by all records of an informer, never back to itself, and
    # thousands of tracked records made every collection while the watch lags walk them all.
    obj: CachedObject | None  # None: deleted, or not decoded yet (``decode`` is set)
    uid: str
    version: int
    recorded: float
    # Decodes the written object on first read: most writes are never read back before the
    # watch catches up, and decoding is most of what recording one costs.
    decode: Callable[[bytes], CachedObject] | None = None
    raw: bytes = b""

    @property
    def deleted(self) -> bool:
        return self.obj is None and self.decode is None


class RecentWrites:
    """Objects of one informer written by this process, newer than its store (see module)."""

    __slots__ = ("_clock", "_prune_at", "_records", "ttl")

    def __init__(
        self, ttl: float = DEFAULT_RECENT_WRITE_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self._clock = clock
        self._records: dict[_Key, _Record] = {}
        self._prune_at = 0

    def __len__(self) -> int:
        return len(self._records)

    def record(self, obj: CachedObject) -> None:
        """Remember ``obj`` as the server returned it after a write."""
        version = _version(obj.resource_version)
        if version is None or not obj.name:
            return
        self._put((obj.namespace, obj.name), _Record(obj, obj.uid, version, self._clock()))

    def record_raw(
        self,
        namespace: str | None,
        name: str,
        uid: str,
        resource_version: str | None,
        decode: Callable[[bytes], CachedObject],
        raw: bytes,
    ) -> None:
        """Like :meth:`record` for the object ``namespace/name`` (namespace None or "" when
        cluster-scoped) encoded as ``raw``, not decoded yet: ``decode(raw)`` runs on first read
        (and if it raises, the record is dropped and the store read instead). Pass one
        ``decode`` function for all records (e.g. an informer's ``decoder.decode``, bound once):
        records are not tracked by the garbage collector, and must not refer back to this."""
        version = _version(resource_version)
        if version is None or not name:
            return
        self._put(
            (namespace or None, name), _Record(None, uid, version, self._clock(), decode, raw)
        )

    def _put(self, key: _Key, record: _Record) -> None:
        current = self._records.get(key)
        if current is not None and not current.deleted and current.version >= record.version:
            return
        self._records[key] = record

    def record_deleted(self, key: ObjectKey, uid: str) -> None:
        """Remember that the object ``key`` with ``uid`` was deleted."""
        self._records[_key(key)] = _Record(None, uid, 0, self._clock())

    def _outdated(
        self,
        namespace: str | None,
        record: _Record,
        stored: CachedObject | None,
        observed: Callable[[str | None], int],
    ) -> bool:
        """Whether the store (or its watch) has caught up with ``record``, or it expired."""
        if self._clock() - record.recorded > self.ttl:
            return True
        if record.deleted:
            # The store has seen the deletion (or holds a new object of the same name).
            return stored is None or stored.uid != record.uid
        stored_version = _version(stored.resource_version) if stored is not None else None
        if stored_version is not None and stored_version >= record.version:
            return True
        return observed(namespace) >= record.version

    def _effective(
        self, key: _Key, stored: CachedObject | None, observed: Callable[[str | None], int]
    ) -> _Record | None:
        record = self._records.get(key)
        if record is None:
            return None
        if self._outdated(key[0], record, stored, observed):
            del self._records[key]
            return None
        if record.decode is not None:
            try:
                record.obj = record.decode(record.raw)
            except Exception:  # a transform that rejects it: the store stays the truth
                del self._records[key]
                return None
            record.decode = None
            record.raw = b""
        return record

    def get(
        self,
        key: ObjectKey,
        stored: CachedObject | None,
        observed: Callable[[str | None], int],
    ) -> CachedObject | None:
        """The object to read for ``key``: the record when newer than ``stored``, else stored.

        ``observed(namespace)`` is the highest resourceVersion the store's watch has delivered.
        """
        return self.get_by_name(key.namespace, key.name, stored, observed)

    def get_by_name(
        self,
        namespace: str | None,
        name: str,
        stored: CachedObject | None,
        observed: Callable[[str | None], int],
    ) -> CachedObject | None:
        """:meth:`get` of the object ``namespace/name`` (namespace None or "" when
        cluster-scoped)."""
        if not self._records:
            return stored
        record = self._effective((namespace or None, name), stored, observed)
        if record is None:
            return stored
        return record.obj

    def merge(
        self,
        stored: list[CachedObject],
        lookup: Callable[[ObjectKey], CachedObject | None],
        observed: Callable[[str | None], int],
        matches: Callable[[CachedObject], bool],
    ) -> list[CachedObject]:
        """``stored`` (a filtered list) with newer records applied: replaced, added or removed.

        ``lookup`` reads the store by key; ``matches`` is the list's filter (namespace, labels,
        index), applied to records.
        """
        if not self._records:
            return stored
        effective: dict[_Key, _Record] = {}
        for key in list(self._records):
            record = self._effective(key, lookup(ObjectKey(*key)), observed)
            if record is not None:
                effective[key] = record
        if not effective:
            return stored
        merged: list[CachedObject] = []
        for obj in stored:
            record = effective.pop((obj.namespace, obj.name), None)
            if record is None:
                merged.append(obj)
            elif record.obj is not None and matches(record.obj):
                merged.append(record.obj)
        merged.extend(
            record.obj
            for record in effective.values()
            if record.obj is not None and matches(record.obj)
        )
        return merged

    def prune(
        self,
        lookup: Callable[[ObjectKey], CachedObject | None],
        observed: Callable[[str | None], int],
    ) -> None:
        """Drop the records the store or its watch has caught up with (without decoding any)."""
        for key, record in list(self._records.items()):
            if self._outdated(key[0], record, lookup(ObjectKey(*key)), observed):
                del self._records[key]

    def prune_if_above(
        self,
        threshold: int,
        lookup: Callable[[ObjectKey], CachedObject | None],
        observed: Callable[[str | None], int],
    ) -> None:
        """:meth:`prune` once more than ``threshold`` records are kept, and again only when
        their number has doubled since: records the watch has not caught up with yet survive a
        prune, and scanning them on every write would make each write cost all of them."""
        if len(self._records) <= max(threshold, self._prune_at):
            return
        self.prune(lookup, observed)
        self._prune_at = 2 * len(self._records)

    def keys(self) -> Iterable[ObjectKey]:
        """Keys with a record (some may be outdated until next read)."""
        return [ObjectKey(*key) for key in self._records]
