"""The store: cached objects by namespace and name, plus indexes.

:class:`Store` is the read side every controller sees (``get``, ``list``, ``by_index``);
:class:`MutableStore` adds the writes the reflector makes. Objects are kept in a two-level dict
(namespace → name → object), which doubles as the built-in ``"namespace"`` index at no extra
memory. The built-in ``"owner-uid"`` index maps each ``ownerReferences[].uid`` to its dependents
(what ``owns`` uses to find the children of a primary). Users add field indexes with
:meth:`MutableStore.add_index`.

Every write reports what changed as a :class:`Delta` (add, update or delete), so the reflector
and anyone replaying raw bytes (benchmarks, tests) derive handler events from one place. A watch
event whose resourceVersion equals the stored one is a duplicate (e.g. replayed after a
reconnect) and yields no delta.
"""

from __future__ import annotations

import builtins
import enum
import logging
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Final

import msgspec

from setpoint.api.gvk import ObjectKey
from setpoint.cache.cached_object import CachedObject, ObjectDecoder
from setpoint.cache.selection import LabelSelectorLike, label_predicate
from setpoint.cache.wire import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    MODIFIED,
    decode_list_page,
    decode_watch_event,
)

__all__ = [
    "NAMESPACE_INDEX",
    "OWNER_UID_INDEX",
    "Delta",
    "DeltaType",
    "IndexFunc",
    "MutableStore",
    "Store",
]

logger = logging.getLogger(__name__)

#: Built-in index of objects by namespace ("" for cluster-scoped objects).
NAMESPACE_INDEX: Final = "namespace"
#: Built-in index of objects by the uid of each of their owners.
OWNER_UID_INDEX: Final = "owner-uid"

#: A user index function: the index values of one object (e.g. ``[obj.get("spec")["node"]]``).
IndexFunc = Callable[[CachedObject], Iterable[str]]

# Internal key: (namespace or "", name). Tuples are smaller and faster to hash than ObjectKey.
_Key = tuple[str, str]


class DeltaType(enum.Enum):
    """What a store write did to one object."""

    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"


class Delta(msgspec.Struct, frozen=True):
    """One change to the store.

    ``obj`` is the new state (for DELETE: the last known state); ``old`` is the previous state
    (for UPDATE and DELETE).
    """

    # A frozen struct rather than a frozen dataclass: one is built per watch event, and a frozen
    # dataclass's __init__ sets each field through object.__setattr__.
    type: DeltaType
    obj: CachedObject
    old: CachedObject | None = None


def _owner_uids(obj: CachedObject) -> Iterable[str]:
    refs = obj._meta.owner_references or ()
    if len(refs) == 1:  # the usual case, without a list comprehension's frame
        uid = refs[0].uid
        return (uid,) if uid else ()
    return [ref.uid for ref in refs if ref.uid]


def _key_of(obj: CachedObject) -> _Key:
    return (obj._meta.namespace or "", obj._meta.name or "")


class Store:
    """Read access to cached objects. Every object returned is immutable.

    Reads may come from other threads (sync reconcilers) while the event loop writes: every
    read copies the container it walks in one C-level call (atomic under the GIL) first.
    """

    def __init__(self) -> None:
        self._by_namespace: dict[str, dict[str, CachedObject]] = {}
        self._count = 0
        self._indexers: dict[str, IndexFunc] = {OWNER_UID_INDEX: _owner_uids}
        self._indices: dict[str, dict[str, set[_Key]]] = {OWNER_UID_INDEX: {}}
        # The owner-uid index is maintained inline (every write needs it); these are the others.
        self._user_indexers: tuple[tuple[str, IndexFunc], ...] = ()

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        return isinstance(key, ObjectKey) and self.get(key) is not None

    def __iter__(self) -> Iterator[CachedObject]:
        # Readers in other threads (sync reconcilers, /metrics) iterate while the loop writes.
        # dict.copy() clones the table in one C step, so a thread switch (e.g. from a garbage
        # collection's callbacks) cannot land mid-iteration; list(d.values()) alone can.
        for objects in self._by_namespace.copy().values():
            yield from objects.copy().values()

    def get(self, key: ObjectKey) -> CachedObject | None:
        """The object named ``key``, or None."""
        objects = self._by_namespace.get(key.namespace or "")
        return None if objects is None else objects.get(key.name)

    def get_by_name(self, name: str, namespace: str | None = None) -> CachedObject | None:
        """The object ``namespace/name`` (``namespace`` None for cluster-scoped), or None."""
        objects = self._by_namespace.get(namespace or "")
        return None if objects is None else objects.get(name)

    def count(self, namespace: str | None = None) -> int:
        """Number of objects, in ``namespace`` only when given ("" = cluster-scoped)."""
        if namespace is None:
            return self._count
        return len(self._by_namespace.get(namespace, {}))

    def keys(self) -> list[ObjectKey]:
        """Keys of all objects."""
        return [obj.key for obj in self]

    def namespaces(self) -> list[str]:
        """Namespaces that hold at least one object ("" stands for cluster-scoped objects)."""
        return [ns for ns, objects in self._by_namespace.copy().items() if objects]

    def list(
        self,
        namespace: str | None = None,
        label_selector: LabelSelectorLike | None = None,
    ) -> list[CachedObject]:
        """Objects in ``namespace`` (all when None) whose labels match ``label_selector``."""
        if namespace is None:
            objects: list[CachedObject] = list(self)
        else:
            objects = list(self._by_namespace.get(namespace, {}).copy().values())
        if label_selector is None:
            return objects
        matches = label_predicate(label_selector)
        return [obj for obj in objects if matches(obj.labels)]

    @property
    def index_names(self) -> tuple[str, ...]:
        """Names of the indexes available to :meth:`by_index`."""
        return (NAMESPACE_INDEX, *self._indexers)

    def index_function(self, index_name: str) -> IndexFunc | None:
        """The function computing index ``index_name`` (None if no such user index)."""
        return self._indexers.get(index_name)

    def by_index(self, index_name: str, value: str) -> builtins.list[CachedObject]:
        """Objects whose index ``index_name`` contains ``value``.

        Raises ``KeyError`` naming the index when no such index exists.
        """
        if index_name == NAMESPACE_INDEX:
            return list(self._by_namespace.get(value, {}).copy().values())
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(
                f"no index named {index_name!r}; known indexes: {', '.join(self.index_names)}"
            )
        result = []
        for namespace, name in index.get(value, set()).copy():
            obj = self._by_namespace.get(namespace, {}).get(name)
            if obj is not None:
                result.append(obj)
        return result

    def index_values(self, index_name: str) -> builtins.list[str]:
        """All values present in index ``index_name``."""
        if index_name == NAMESPACE_INDEX:
            return self.namespaces()
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(f"no index named {index_name!r}")
        return [value for value, keys in index.copy().items() if keys]


class MutableStore(Store):
    """A :class:`Store` with the writes a reflector makes.

    ``decoder`` is used by the raw-bytes entry points (:meth:`load_list`, :meth:`apply_event`)
    that let benchmarks and tests fill a store without a server.
    """

    def __init__(self, decoder: ObjectDecoder | None = None) -> None:
        super().__init__()
        self.decoder = decoder or ObjectDecoder()

    # -- indexes ------------------------------------------------------------------------------

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Add index ``name`` computed by ``fn`` and build it over the current objects.

        Raises ``ValueError`` if the name is taken (index functions cannot be replaced, since
        readers may already depend on them).
        """
        if not name:
            raise ValueError("index name must not be empty")
        if name == NAMESPACE_INDEX or name in self._indexers:
            raise ValueError(f"index {name!r} already exists")
        self._indexers[name] = fn
        self._indices[name] = {}
        self._user_indexers = (*self._user_indexers, (name, fn))
        for obj in self:
            self._add_values(name, self._index_values(name, fn, obj), _key_of(obj))

    def _index_values(self, name: str, fn: IndexFunc, obj: CachedObject) -> Iterable[str]:
        try:
            values = fn(obj)
            if isinstance(values, str):
                # A bare string is almost always meant as one value, not as its characters.
                return (values,)
            return tuple(values)
        except Exception:
            logger.exception("index function %r failed on %r; not indexed there", name, obj)
            return ()

    # -- writes -------------------------------------------------------------------------------

    def upsert(self, obj: CachedObject) -> CachedObject | None:
        """Store ``obj`` (replacing the object with its key); returns the previous one."""
        meta = obj._meta
        namespace = meta.namespace or ""
        return self._put(self._objects_in(namespace), namespace, meta.name or "", obj)

    def _objects_in(self, namespace: str) -> dict[str, CachedObject]:
        """The objects of ``namespace`` by name (a new, empty dict if it has none)."""
        objects = self._by_namespace.get(namespace)
        if objects is None:
            objects = self._by_namespace[namespace] = {}
        return objects

    def _put(
        self, objects: dict[str, CachedObject], namespace: str, name: str, obj: CachedObject
    ) -> CachedObject | None:
        old = objects.get(name)
        objects[name] = obj
        if old is None:
            self._count += 1
        key = (namespace, name)
        old_refs = None if old is None else old._meta.owner_references
        refs = obj._meta.owner_references
        # Equal reference lists are mostly the same shared tuple: nothing to re-index.
        if old_refs != refs:
            if old is not None and old_refs:
                self._remove_values(OWNER_UID_INDEX, _owner_uids(old), key)
            if refs:
                self._add_values(OWNER_UID_INDEX, _owner_uids(obj), key)
        for index_name, fn in self._user_indexers:
            values = self._index_values(index_name, fn, obj)
            if old is not None:
                old_values = self._index_values(index_name, fn, old)
                if old_values == values:
                    continue
                self._remove_values(index_name, old_values, key)
            self._add_values(index_name, values, key)
        return old

    def _add_values(self, name: str, values: Iterable[str], key: _Key) -> None:
        index = self._indices[name]
        for value in values:
            bucket = index.get(value)
            if bucket is None:
                index[value] = {key}
            else:
                bucket.add(key)

    def _remove_values(self, name: str, values: Iterable[str], key: _Key) -> None:
        index = self._indices[name]
        for value in values:
            bucket = index.get(value)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del index[value]

    def remove(self, key: ObjectKey) -> CachedObject | None:
        """Remove the object named ``key``; returns it (None if absent)."""
        ns_key = key.namespace or ""
        objects = self._by_namespace.get(ns_key)
        if objects is None:
            return None
        old = objects.pop(key.name, None)
        if old is None:
            return None
        self._count -= 1
        if not objects:
            del self._by_namespace[ns_key]
        internal_key = (ns_key, key.name)
        if old._meta.owner_references:
            self._remove_values(OWNER_UID_INDEX, _owner_uids(old), internal_key)
        for name, fn in self._user_indexers:
            self._remove_values(name, self._index_values(name, fn, old), internal_key)
        return old

    def apply(self, event_type: str, obj: CachedObject) -> Delta | None:
        """Apply one watch event (``ADDED``/``MODIFIED``/``DELETED``); returns what changed.

        Returns None for no change: a DELETED of an unknown object, or an ADDED/MODIFIED whose
        resourceVersion equals the stored one (a duplicate).
        """
        if event_type == DELETED:
            old = self.remove(obj.key)
            return None if old is None else Delta(DeltaType.DELETE, obj, old)
        if event_type != MODIFIED and event_type != ADDED:
            raise ValueError(f"cannot apply a {event_type} event to a store")
        meta = obj._meta
        namespace = meta.namespace or ""
        name = meta.name or ""
        objects = self._objects_in(namespace)
        current = objects.get(name)
        if current is not None and _same_version(current, obj):
            return None
        old = self._put(objects, namespace, name, obj)
        if old is None:
            return Delta(DeltaType.ADD, obj)
        return Delta(DeltaType.UPDATE, obj, old)

    def diff(self, objects: Iterable[CachedObject], namespace: str | None = None) -> list[Delta]:
        """The deltas that turn the store's contents into ``objects`` (nothing is applied).

        Only stored objects in ``namespace`` (all when None) are compared: objects missing from
        ``objects`` become DELETE deltas carrying their last known state (tombstones). An object
        whose uid changed (deleted and recreated meanwhile) becomes a DELETE then an ADD.
        """
        return list(self.iter_diff(objects, namespace))

    def iter_diff(
        self,
        objects: Iterable[CachedObject],
        namespace: str | None = None,
        *,
        keep: Collection[tuple[str, str]] = (),
    ) -> Iterator[Delta]:
        """:meth:`diff` as a generator, so a caller can pause between deltas.

        ``keep`` holds ``(namespace or "", name)`` keys that exist although they are missing
        from ``objects`` (listed but unreadable): they get no DELETE. The store must not change
        in ``namespace`` until the generator is exhausted.
        """
        seen: set[_Key] = set()
        for obj in objects:
            key = _key_of(obj)
            seen.add(key)
            current = self._by_namespace.get(key[0], {}).get(key[1])
            if current is None:
                yield Delta(DeltaType.ADD, obj)
            elif current.uid and obj.uid and current.uid != obj.uid:
                yield Delta(DeltaType.DELETE, current, current)
                yield Delta(DeltaType.ADD, obj)
            elif not _same_version(current, obj):
                yield Delta(DeltaType.UPDATE, obj, current)
        if namespace is None:
            scopes = list(self._by_namespace.items())
        else:
            scopes = [(namespace, self._by_namespace.get(namespace, {}))]
        for ns, stored in scopes:
            for name, current in list(stored.items()):
                if (ns, name) not in seen and (ns, name) not in keep:
                    yield Delta(DeltaType.DELETE, current, current)

    def commit(self, delta: Delta) -> None:
        """Apply a delta computed by :meth:`diff`."""
        if delta.type is DeltaType.DELETE:
            self.remove(delta.obj.key)
        else:
            self.upsert(delta.obj)

    def replace(
        self, objects: Iterable[CachedObject], namespace: str | None = None
    ) -> builtins.list[Delta]:
        """Make the store (or one namespace of it) hold exactly ``objects``; returns the deltas."""
        deltas = self.diff(objects, namespace)
        for delta in deltas:
            self.commit(delta)
        return deltas

    # -- raw-bytes entry points (no server needed) --------------------------------------------

    def load_list(self, raw: bytes, namespace: str | None = None) -> str:
        """Replace the contents with one list response body; returns its resourceVersion."""
        page = decode_list_page(raw)
        decode = self.decoder.decode
        self.replace([decode(item) for item in page.items or ()], namespace)
        return page.metadata.resource_version

    def apply_event(self, line: bytes) -> Delta | None:
        """Apply one raw watch event line; bookmarks and errors change nothing (None)."""
        event = decode_watch_event(line)
        if event.type in (BOOKMARK, ERROR):
            return None
        return self.apply(event.type, self.decoder.decode(event.object))


def _same_version(a: CachedObject, b: CachedObject) -> bool:
    rv = a._meta.resource_version
    return bool(rv) and rv == b._meta.resource_version and a.uid == b.uid
