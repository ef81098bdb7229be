"""Informers: a cache of one resource's objects, listed from storage and kept current by watch.

An informer reads the storage directly (list at a revision, then a watch from that revision),
so it sees every write, the controllers' own included, in the order clients see them. Objects
are decoded once and shared: readers must not mutate them. An informer whose every user needs
only metadata (the garbage collector's of every resource, say) decodes ``apiVersion``, ``kind``
and ``metadata`` alone: msgspec skips the rest of the stored JSON, so a ConfigMap's data costs
neither the decoding nor the memory (upstream's metadata informers, for the same reason). Such
an informer keeps each object as the stored value the watch delivered (the very bytes object
the storage holds, so it costs no memory of its own, and the cyclic collector never walks it;
an object a controller just wrote is kept as the compact JSON of its metadata until its watch
event comes) and decodes the metadata for whoever reads it: handlers, ``get`` and ``list`` get
fresh dicts. It becomes a full informer, listing again, as soon as one user asks for whole
objects. No informer keeps ``managedFields``: no built-in controller reads them, and in a pod
they are about half the decoded object (a write without them keeps the stored ones, as
upstream). A watch that falls too far behind is dropped
by the storage; the informer then lists again and reports the differences as events.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple, TypedDict

import msgspec

from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import Storage, WatchOverflowError

log = logging.getLogger(__name__)

#: Live events an informer may hold unread before the storage drops its watch (it then
#: re-lists); generous, since a burst of thousands of pods arrives in one loop turn.
INFORMER_WATCH_BUFFER: Final = 200_000

Object = dict[str, Any]
#: Called with (new, old): (obj, None) on add, (obj, old) on update, (None, old) on delete.
Handler = Callable[[Object | None, Object | None], None]
#: The values an object is found under in an index (client-go's ``IndexFunc``).
Indexer = Callable[[Object], Iterable[str]]


class _ObjectMeta(TypedDict, total=False):
    """Every ObjectMeta field but ``managedFields`` (which no built-in controller reads).

    A TypedDict: msgspec decodes the metadata straight into the dict handlers get (in the
    stored order), skipping every other field, with no struct to convert afterwards.
    """

    name: str | None
    generateName: str | None
    namespace: str | None
    selfLink: str | None
    uid: str | None
    resourceVersion: str | None
    generation: int | None
    creationTimestamp: str | None
    deletionTimestamp: str | None
    deletionGracePeriodSeconds: int | None
    labels: dict[str, str] | None
    annotations: dict[str, str] | None
    ownerReferences: list[dict[str, Any]] | None
    finalizers: list[str] | None


class _MetadataView(msgspec.Struct, rename="camel"):
    """What a metadata-only informer reads of an object (decoding skips everything else)."""

    api_version: str = ""
    kind: str = ""
    metadata: _ObjectMeta = msgspec.field(default_factory=lambda: _ObjectMeta())


_METADATA_DECODER = msgspec.json.Decoder(_MetadataView)
_METADATA_ENCODER = msgspec.json.Encoder()

#: What an informer keeps of an object: the decoded object itself (a whole informer), or JSON
#: whose apiVersion, kind and metadata are decoded on reading (a metadata-only one): the stored
#: value as the watch delivered it, or the compact JSON of an object a controller just wrote.
_Stored = Object | bytes


def _metadata_of(obj: Mapping[str, Any]) -> Object:
    """What :func:`decode_metadata` keeps, of an object already decoded."""
    metadata = obj.get("metadata") or {}
    return {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "metadata": {key: value for key, value in metadata.items() if key != "managedFields"},
    }


def decode_object(value: bytes) -> Object:
    """A stored object as a fresh dict, without ``metadata.managedFields``."""
    obj = decode(value)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return obj


def _without_managed_fields(obj: Object) -> Object:
    """``obj`` (as a controller wrote it) without ``metadata.managedFields``: a shallow copy."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {
        **obj,
        "metadata": {key: value for key, value in metadata.items() if key != "managedFields"},
    }


def decode_metadata(value: bytes) -> Object:
    """``apiVersion``, ``kind`` and ``metadata`` of a stored object, as a fresh dict."""
    return _view_dict(_METADATA_DECODER.decode(value))


def _view_dict(view: _MetadataView) -> Object:
    metadata: dict[str, Any] = view.metadata  # type: ignore[assignment]
    if None in metadata.values():
        # A field stored as null is left out, as if absent (as readers have always had it).
        metadata = {key: value for key, value in metadata.items() if value is not None}
    return {"apiVersion": view.api_version, "kind": view.kind, "metadata": metadata}


def _unpacked(stored: _Stored) -> Object:
    """A kept object as readers get it (a packed one decoded afresh)."""
    return decode_metadata(stored) if isinstance(stored, bytes) else stored


class ObjectKey(NamedTuple):
    """A namespaced name ('' namespace for cluster-scoped objects); the work queue's item."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The key of an object (its namespace interned: thousands of keys share a few)."""
    meta = obj.get("metadata") or {}
    return ObjectKey(sys.intern(meta.get("namespace") or ""), meta.get("name") or "")


_new_tuple = tuple.__new__


def _read_whole(value: bytes) -> tuple[Object, _Stored, ObjectKey]:
    obj = decode_object(value)
    return obj, obj, key_of(obj)


def _read_metadata(value: bytes) -> tuple[Object, _Stored, ObjectKey]:
    """The metadata of a stored object as a dict for handlers, what to keep of it, and its
    key (the same as :func:`key_of` of the dict).

    What is kept is the stored value itself: the storage holds the very same bytes object, so
    keeping it costs no memory (a packed copy of the metadata would) and no encoding; readers
    decode its metadata as they would a packed copy's.
    """
    obj = _view_dict(_METADATA_DECODER.decode(value))
    meta = obj["metadata"]
    # tuple.__new__ is ObjectKey(...) without the Python-level __new__ of a NamedTuple.
    key = _new_tuple(ObjectKey, (sys.intern(meta.get("namespace") or ""), meta.get("name") or ""))
    return obj, value, key


def revision_of(obj: Object) -> int:
    """The object's resourceVersion as a number (0 when missing)."""
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class Informer:
    """The cache of one resource; call :meth:`start` once, then read and add handlers."""

    def __init__(
        self, storage: Storage, resource: ServedResource, *, metadata_only: bool = False
    ) -> None:
        self.storage = storage
        self.resource = resource
        #: Objects hold only apiVersion, kind and metadata (see the module docstring).
        self.metadata_only = metadata_only
        self._decode: Callable[[bytes], Object] = (
            decode_metadata if metadata_only else decode_object
        )
        self._read: Callable[[bytes], tuple[Object, _Stored, ObjectKey]] = (
            _read_metadata if metadata_only else _read_whole
        )
        self._objects: dict[ObjectKey, _Stored] = {}
        self._by_namespace: dict[str, dict[str, _Stored]] = {}
        self._handlers: list[Handler] = []
        self._indexers: dict[str, Indexer] = {}
        #: index name -> value -> the objects found under it
        self._indexes: dict[str, dict[str, dict[ObjectKey, _Stored]]] = {}
        self._task: asyncio.Task[None] | None = None

    # -- reading ----------------------------------------------------------------------

    def get(self, namespace: str | None, name: str) -> Object | None:
        """The cached object, or None."""
        stored = self._objects.get(ObjectKey(namespace or "", name))
        return None if stored is None else _unpacked(stored)

    def list(self, namespace: str | None = None) -> list[Object]:
        """Every cached object (in ``namespace`` when given)."""
        if namespace is None:
            return [_unpacked(stored) for stored in self._objects.values()]
        return [_unpacked(stored) for stored in (self._by_namespace.get(namespace) or {}).values()]

    def __iter__(self) -> Iterator[Object]:
        return iter(self.list())

    def add_index(self, name: str, indexer: Indexer) -> None:
        """Keep the objects found by ``indexer``'s values (once per name; later calls no-ops),
        so that :meth:`by_index` reads a few objects instead of filtering them all."""
        if name in self._indexers:
            return
        self._indexers[name] = indexer
        self._indexes[name] = {}
        for key, stored in self._objects.items():
            self._index(name, key, stored)

    def by_index(self, name: str, value: str) -> builtins.list[Object]:
        """The cached objects :meth:`add_index`'s indexer ``name`` puts under ``value``."""
        found = self._indexes[name].get(value) or {}
        return [_unpacked(stored) for stored in found.values()]

    def __len__(self) -> int:
        return len(self._objects)

    def namespaces(self) -> builtins.list[str]:
        """The namespaces that hold at least one cached object."""
        return [ns for ns, objects in self._by_namespace.items() if objects]

    def holds_any_in(self, namespace: str) -> bool:
        """Whether at least one cached object is in ``namespace`` (one dict lookup)."""
        return bool(self._by_namespace.get(namespace))

    # -- handlers ---------------------------------------------------------------------

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler`` on every change from now on, after an add for each cached object."""
        self._handlers.append(handler)
        for obj in self.list():
            handler(obj, None)

    # -- running ----------------------------------------------------------------------

    def want_whole_objects(self) -> None:
        """Keep whole objects from now on: a metadata-only informer lists again, fully.

        Handlers see no event for it (the revisions do not change), only fuller objects.
        """
        if not self.metadata_only:
            return
        self.metadata_only = False
        self._decode = decode_object
        self._read = _read_whole
        if self._task is not None:
            self._relist()

    def start(self) -> None:
        """List now (the cache is complete when this returns), then follow the watch."""
        revision = self._relist()
        self._task = asyncio.get_running_loop().create_task(
            self._follow(revision), name=f"informer-{self.resource.plural}"
        )

    async def stop(self) -> None:
        """Stop following the watch."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def observe(self, obj: Object) -> None:
        """Put an object just written by a controller into the cache (read-your-writes).

        Handlers are not called: the watch event that follows does that.
        """
        key = key_of(obj)
        current = self._objects.get(key)
        if current is None or revision_of(_unpacked(current)) < revision_of(obj):
            if self.metadata_only:
                self._put(key, _METADATA_ENCODER.encode(_metadata_of(obj)))
            else:
                self._put(key, _without_managed_fields(obj))

    def forget(self, obj: Object) -> None:
        """Drop an object a controller just deleted (read-your-writes)."""
        self._remove(key_of(obj))

    def _relist(self) -> int:
        revision = self.storage.revision
        fresh: dict[ObjectKey, tuple[Object, _Stored]] = {}
        for record in self.storage.list(self.resource.storage_root):
            obj, stored, key = self._read(record.value)
            fresh[key] = (obj, stored)
        old_objects = self._objects
        self._objects = {}
        self._by_namespace = {}
        self._indexes = {name: {} for name in self._indexers}
        for key, (obj, stored) in fresh.items():
            self._put(key, stored)
            kept = old_objects.get(key)
            old = None if kept is None else _unpacked(kept)
            if old is None or revision_of(old) != revision_of(obj):
                self._notify(obj, old)
        for key, kept in old_objects.items():
            if key not in fresh:
                self._notify(None, _unpacked(kept))
        return revision

    async def _follow(self, revision: int) -> None:
        while True:
            watch = self.storage.watch(
                self.resource.storage_root, revision, buffer=INFORMER_WATCH_BUFFER
            )
            apply = self._apply
            try:
                async for first in watch:
                    # One resumption of the iterator per burst: what is buffered behind the
                    # first event is taken at once (the order and the overflow are the same).
                    for event in (first, *watch.take_buffered()):
                        revision = event.revision
                        apply(event.type == "DELETED", event.value, event.prev_value)
            except WatchOverflowError:
                log.warning("informer %s fell behind; listing again", self.resource.plural)
            finally:
                watch.close()
            revision = self._relist()

    def _apply(self, deleted: bool, value: bytes, prev_value: bytes | None) -> None:
        if not deleted:
            obj, stored, key = self._read(value)
            kept = self._objects.get(key)
            if kept is None:
                self._put(key, stored)
                self._notify(obj, self._decoded(prev_value))
                return
            old = _unpacked(kept)
            if revision_of(old) <= revision_of(obj):
                self._put(key, stored)
            self._notify(obj, old)
        else:
            old = self._decode(value)
            key = key_of(old)
            kept = self._objects.get(key)
            self._remove(key)
            self._notify(None, _unpacked(kept) if kept is not None else old)

    def _put(self, key: ObjectKey, stored: _Stored) -> None:
        if self._indexers:
            self._unindex(key)
            for name in self._indexers:
                self._index(name, key, stored)
        self._objects[key] = stored
        bucket = self._by_namespace.get(key.namespace)
        if bucket is None:
            bucket = self._by_namespace[key.namespace] = {}
        bucket[key.name] = stored

    def _remove(self, key: ObjectKey) -> None:
        if self._indexers:
            self._unindex(key)
        self._objects.pop(key, None)
        bucket = self._by_namespace.get(key.namespace)
        if bucket is not None:
            bucket.pop(key.name, None)
            if not bucket:
                del self._by_namespace[key.namespace]

    def _index(self, name: str, key: ObjectKey, stored: _Stored) -> None:
        index = self._indexes[name]
        for value in self._indexers[name](_unpacked(stored)):
            index.setdefault(value, {})[key] = stored

    def _unindex(self, key: ObjectKey) -> None:
        """Drop the index entries of the object now kept at ``key``."""
        stored = self._objects.get(key)
        if stored is None:
            return
        obj = _unpacked(stored)
        for name, indexer in self._indexers.items():
            index = self._indexes[name]
            for value in indexer(obj):
                bucket = index.get(value)
                if bucket is not None:
                    bucket.pop(key, None)
                    if not bucket:
                        del index[value]

    def _decoded(self, value: bytes | None) -> Object | None:
        return self._decode(value) if value else None

    def _notify(self, obj: Object | None, old: Object | None) -> None:
        for handler in self._handlers:
            try:
                handler(obj, old)
            except Exception:
                log.exception("informer handler of %s failed", self.resource.plural)
