"""Compact, immutable objects as the cache keeps them.

A watch-fed cache holds every object of a kind, so its per-object footprint is what decides an
operator's memory. A plain ``json.loads`` tree costs 4-5x the JSON size and makes the garbage
collector rescan it forever. A :class:`CachedObject` instead keeps:

- ``apiVersion``, ``kind`` and the metadata fields controllers read (name, namespace, uid,
  resourceVersion, generation, labels, annotations, ownerReferences, finalizers, timestamps)
  decoded into frozen ``msgspec`` structs that the garbage collector does not track;
- every other top-level field (``spec``, ``status``, ``data``, ...) as one compact JSON blob, and
  any unusual metadata field as another, decoded only when somebody reads them. Each blob is an
  exact-size copy: it pins neither the list page it came from nor an encoder's spare capacity;
- one shared copy of values that repeat across objects: namespaces, kinds, label sets, owner
  references, finalizer names, and runs of equal creationTimestamps.

Nothing a reader gets can change the cache: structs are frozen, mappings are read-only views,
lists are tuples, and :meth:`CachedObject.to_dict` / :meth:`CachedObject.get` decode a fresh copy
on every call.

Build one from bytes with :meth:`CachedObject.from_json` (or an :class:`ObjectDecoder` when you
need options such as keeping ``managedFields`` or a metadata-only view).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

import msgspec

from setpoint.api.gvk import ObjectKey

__all__ = [
    "CachedObject",
    "ObjectDecodeError",
    "ObjectDecoder",
    "OwnerReference",
    "Transform",
]

#: A user function applied to each object (as a fresh dict) before it is stored; it returns the
#: dict to keep (e.g. with ``status`` or big annotations dropped).
Transform = Callable[[dict[str, Any]], dict[str, Any]]

_EMPTY_MAPPING: Final[Mapping[str, str]] = MappingProxyType({})
# Top-level keys that are decoded eagerly; everything else goes into the raw "rest" blob.
_HEAD_KEYS: Final = frozenset({"apiVersion", "kind", "metadata"})
_MANAGED_FIELDS: Final = "managedFields"
# Strings shorter than this are interned: namespaces, kinds and label values repeat across
# thousands of objects, and sharing one copy saves ~50 bytes per repeat.
_INTERN_MAX_LEN: Final = 64


class ObjectDecodeError(ValueError):
    """An object's JSON could not be decoded into a :class:`CachedObject`."""


class OwnerReference(msgspec.Struct, frozen=True, gc=False, rename="camel", omit_defaults=True):
    """One ``metadata.ownerReferences`` entry (immutable).

    Attributes use Python names (``api_version``); ``ref["apiVersion"]`` and ``ref.get(...)`` read
    the wire names too, so code written for dicts keeps working.
    """

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """A fresh dict with the wire (camelCase) names."""
        result: dict[str, Any] = msgspec.to_builtins(self)
        return result

    def __getitem__(self, key: str) -> Any:
        value = self.to_dict().get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """The value of wire field ``key`` (e.g. ``"uid"``), or ``default``."""
        return self.to_dict().get(key, default)


_MISSING: Final = object()


class _Metadata(msgspec.Struct, frozen=True, gc=False, rename="camel", omit_defaults=True):
    """The eagerly decoded part of ``metadata`` (standard ObjectMeta fields)."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: tuple[OwnerReference, ...] | None = None
    finalizers: tuple[str, ...] | None = None


# Wire names of the _Metadata fields: anything else in metadata is kept raw.
_TYPED_METADATA_KEYS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
    }
)


class _WireMetadata(_Metadata, frozen=True, forbid_unknown_fields=True, gc=False):
    """``metadata`` as sent, decoded in one pass: the :class:`_Metadata` fields and the two
    standard fields it does not keep. Any other field fails the decode, and the object takes
    the general path (which keeps unusual fields raw)."""

    # Raw views, checked for presence only (never kept: they would pin the received bytes).
    managed_fields: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    self_link: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_RAW_DICT_DECODER: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
_METADATA_DECODER: Final = msgspec.json.Decoder(_Metadata)
_WIRE_METADATA_DECODER: Final = msgspec.json.Decoder(_WireMetadata)
_STR_DECODER: Final = msgspec.json.Decoder(str)
_ANY_DECODER: Final = msgspec.json.Decoder()
_ENCODER: Final = msgspec.json.Encoder()


class CachedObject(msgspec.Struct, frozen=True, gc=False):
    """An immutable, compact Kubernetes object as held by the cache.

    Read metadata through the properties (zero-copy); read anything else with :meth:`get` or
    :meth:`to_dict`, which decode a fresh copy each call (callers may mutate what they get).
    Two objects are equal when all their content is equal. The underscored fields are private:
    their containers are shared with the cache (and between objects) and must not be touched.
    """

    api_version: str
    kind: str
    _meta: _Metadata
    # JSON object of the metadata fields _Metadata does not cover (None when there are none).
    _meta_rest: bytes | None = None
    # JSON object of the top-level fields other than apiVersion/kind/metadata (None if none).
    _rest: bytes | None = None

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_json(cls, raw: bytes | msgspec.Raw | memoryview) -> CachedObject:
        """Decode one object's JSON with the default options (``managedFields`` stripped)."""
        return DEFAULT_DECODER.decode(raw)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CachedObject:
        """Build from a dict (copied; the dict is not kept). ``managedFields`` is stripped."""
        return DEFAULT_DECODER.decode(_ENCODER.encode(obj))

    # -- metadata (zero-copy) -----------------------------------------------------------------

    @property
    def name(self) -> str:
        """``metadata.name`` ("" when absent)."""
        return self._meta.name or ""

    @property
    def namespace(self) -> str | None:
        """``metadata.namespace``; None for cluster-scoped objects."""
        return self._meta.namespace or None

    @property
    def uid(self) -> str:
        """``metadata.uid`` ("" when absent)."""
        return self._meta.uid or ""

    @property
    def resource_version(self) -> str:
        """``metadata.resourceVersion`` ("" when absent)."""
        return self._meta.resource_version or ""

    @property
    def identity(self) -> tuple[str | None, str, str, str]:
        """``(namespace, name, uid, resourceVersion)`` in one read, as the properties give
        them (for hot paths that need all four, e.g. the reconcile trace)."""
        meta = self._meta
        return (
            meta.namespace or None,
            meta.name or "",
            meta.uid or "",
            meta.resource_version or "",
        )

    @property
    def generation(self) -> int | None:
        """``metadata.generation`` (None when the kind has none)."""
        return self._meta.generation

    @property
    def generate_name(self) -> str | None:
        """``metadata.generateName``."""
        return self._meta.generate_name

    @property
    def creation_timestamp(self) -> str | None:
        """``metadata.creationTimestamp`` as the RFC 3339 string the server sent."""
        return self._meta.creation_timestamp

    @property
    def deletion_timestamp(self) -> str | None:
        """``metadata.deletionTimestamp`` (set once deletion has started)."""
        return self._meta.deletion_timestamp

    @property
    def deletion_grace_period_seconds(self) -> int | None:
        """``metadata.deletionGracePeriodSeconds``."""
        return self._meta.deletion_grace_period_seconds

    @property
    def labels(self) -> Mapping[str, str]:
        """``metadata.labels`` as a read-only mapping."""
        labels = self._meta.labels
        return MappingProxyType(labels) if labels else _EMPTY_MAPPING

    @property
    def annotations(self) -> Mapping[str, str]:
        """``metadata.annotations`` as a read-only mapping."""
        annotations = self._meta.annotations
        return MappingProxyType(annotations) if annotations else _EMPTY_MAPPING

    @property
    def finalizers(self) -> tuple[str, ...]:
        """``metadata.finalizers``."""
        return self._meta.finalizers or ()

    @property
    def owner_references(self) -> tuple[OwnerReference, ...]:
        """``metadata.ownerReferences`` as immutable structs."""
        return self._meta.owner_references or ()

    @property
    def controller_reference(self) -> OwnerReference | None:
        """The owner reference with ``controller: true``, if any."""
        for ref in self._meta.owner_references or ():
            if ref.controller:
                return ref
        return None

    @property
    def key(self) -> ObjectKey:
        """The object's namespace/name key."""
        return ObjectKey(self._meta.namespace or None, self._meta.name or "")

    @property
    def is_metadata_only(self) -> bool:
        """True when nothing beyond apiVersion/kind/metadata is kept."""
        return self._rest is None

    # -- decoded copies -----------------------------------------------------------------------

    @property
    def metadata(self) -> dict[str, Any]:
        """A fresh dict of the whole ``metadata``."""
        # to_builtins builds fresh dicts (labels, annotations, owner references); the tuples it
        # keeps become lists, as in the JSON the server sent.
        result: dict[str, Any] = msgspec.to_builtins(self._meta)
        refs = result.get("ownerReferences")
        if refs is not None:
            result["ownerReferences"] = list(refs)
        finalizers = result.get("finalizers")
        if finalizers is not None:
            result["finalizers"] = list(finalizers)
        if self._meta_rest is not None:
            result.update(_ANY_DECODER.decode(self._meta_rest))
        return result

    def to_dict(self) -> dict[str, Any]:
        """A fresh, fully decoded dict of the object; the caller owns it and may mutate it."""
        result: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": self.metadata,
        }
        if self._rest is not None:
            result.update(_ANY_DECODER.decode(self._rest))
        return result

    def to_json(self) -> bytes:
        """The object encoded as compact JSON."""
        return _ENCODER.encode(self.to_dict())

    def fields(self) -> tuple[str, ...]:
        """Names of the top-level fields present (``apiVersion``, ``kind``, ``metadata``, ...)."""
        names = ("apiVersion", "kind", "metadata")
        if self._rest is None:
            return names
        return names + tuple(_RAW_DICT_DECODER.decode(self._rest))

    def get(self, field: str, default: Any = None) -> Any:
        """A fresh decoded copy of top-level ``field`` (``"spec"``, ``"status"``, ``"data"``...).

        Returns ``default`` when the field is absent.
        """
        if field == "apiVersion":
            return self.api_version
        if field == "kind":
            return self.kind
        if field == "metadata":
            return self.metadata
        if self._rest is None:
            return default
        raw = _RAW_DICT_DECODER.decode(self._rest).get(field)
        return default if raw is None else _ANY_DECODER.decode(raw)

    def __hash__(self) -> int:
        # Identity and version stand for the content: equal objects hash equal, and the label
        # dicts inside (unhashable) need not be hashed.
        meta = self._meta
        return hash((self.kind, meta.namespace, meta.name, meta.uid, meta.resource_version))

    def __repr__(self) -> str:
        ns = self._meta.namespace
        where = f"{ns}/{self._meta.name}" if ns else str(self._meta.name)
        rv = self._meta.resource_version
        return f"<CachedObject {self.api_version} {self.kind} {where} rv={rv}>"


def _exact_bytes(encoded: bytes) -> bytes:
    """A copy of ``encoded`` in an allocation of exactly its size.

    msgspec's encoder returns its growth buffer as is, up to ~1.5x larger than the JSON; kept
    for the object's lifetime, that slack was a third of the cache's memory.
    """
    return bytes(memoryview(encoded))


def _intern(value: str | None) -> str | None:
    if value is not None and len(value) < _INTERN_MAX_LEN:
        return sys.intern(value)
    return value


# Label sets repeat across objects (every pod of a ReplicaSet has the same labels), and a small
# dict costs ~200 bytes, so identical sets share one dict. Sharing is safe because the dicts are
# never mutated: readers get read-only views, and to_dict() builds fresh copies.
_SHARED_LABEL_SETS: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
# Bound on remembered distinct label sets (and owner-reference lists): enough for the workloads
# of a big cluster; beyond it the table starts over (objects keep what they have either way).
_MAX_SHARED_LABEL_SETS: Final = 4096
# Owner references repeat too (every pod of a ReplicaSet has the same one, ~400 bytes of
# structs and strings); the frozen tuples of frozen structs are shared like label sets.
_SHARED_OWNER_REFERENCES: dict[tuple[OwnerReference, ...], tuple[OwnerReference, ...]] = {}


def _shared_labels(labels: dict[str, str]) -> dict[str, str]:
    items = tuple(labels.items())
    shared = _SHARED_LABEL_SETS.get(items)
    if shared is not None:
        return shared
    shared = {sys.intern(k): _intern(v) or "" for k, v in items}
    if len(_SHARED_LABEL_SETS) >= _MAX_SHARED_LABEL_SETS:
        _SHARED_LABEL_SETS.clear()
    _SHARED_LABEL_SETS[items] = shared
    return shared


def _shared_owner_references(refs: tuple[OwnerReference, ...]) -> tuple[OwnerReference, ...]:
    shared = _SHARED_OWNER_REFERENCES.get(refs)
    if shared is not None:
        return shared
    if len(refs) == 1:  # the usual case, without a generator
        shared = (_interned_reference(refs[0]),)
    else:
        shared = tuple(_interned_reference(ref) for ref in refs)
    if len(_SHARED_OWNER_REFERENCES) >= _MAX_SHARED_LABEL_SETS:
        _SHARED_OWNER_REFERENCES.clear()
    _SHARED_OWNER_REFERENCES[refs] = shared
    return shared


def _interned_reference(ref: OwnerReference) -> OwnerReference:
    return msgspec.structs.replace(
        ref, api_version=sys.intern(ref.api_version), kind=sys.intern(ref.kind)
    )


def _interned_tuple(values: tuple[str, ...]) -> tuple[str, ...]:
    # Finalizer names are a handful of well-known strings repeated on every object that has one.
    return tuple(_intern(value) or "" for value in values)


class ObjectDecoder:
    """Decodes object JSON into :class:`CachedObject` with the cache's options.

    ``strip_managed_fields`` (default True) drops ``metadata.managedFields``, which is often the
    largest part of an object and which controllers never read. ``metadata_only`` keeps only
    apiVersion/kind/metadata. ``transform`` is applied to a fresh dict of each object before it
    is stored; it costs a full decode and re-encode per object, so keep it for kinds that need it.
    """

    __slots__ = ("_last_timestamp", "metadata_only", "strip_managed_fields", "transform")

    def __init__(
        self,
        *,
        strip_managed_fields: bool = True,
        metadata_only: bool = False,
        transform: Transform | None = None,
    ) -> None:
        self.strip_managed_fields = strip_managed_fields
        self.metadata_only = metadata_only
        self.transform = transform
        # Objects created together (a list is ordered by name, a Deployment's pods burst out at
        # once) share creationTimestamps; reusing the previous string when equal saves ~80
        # bytes per object with no table to bound. Races between threads only lose sharing.
        self._last_timestamp = ""

    def decode(self, raw: bytes | msgspec.Raw | memoryview) -> CachedObject:
        """Decode one object; raises :class:`ObjectDecodeError` naming the problem."""
        try:
            if self.transform is not None:
                raw = self._transformed(raw)
            return self._decode(raw)
        except msgspec.DecodeError as exc:
            raise ObjectDecodeError(f"cannot decode object: {exc}") from exc

    def _transformed(self, raw: bytes | msgspec.Raw | memoryview) -> bytes:
        assert self.transform is not None
        obj = _ANY_DECODER.decode(raw)
        result = self.transform(obj)
        if not isinstance(result, dict):
            raise ObjectDecodeError(
                f"transform {self.transform!r} returned {type(result).__name__}, expected a dict"
            )
        return _ENCODER.encode(result)

    def decode_fields(self, top: dict[str, msgspec.Raw]) -> CachedObject | None:
        """Decode an object whose top level is already split into raw fields (a watch event's
        object, decoded with its envelope); ``top`` is consumed.

        Returns None when the object needs :meth:`decode` (unusual metadata fields, kept
        managedFields, a transform, invalid input), which also names any error.
        """
        if self.transform is not None:
            return None
        try:
            return self._decode_top(top)
        except msgspec.DecodeError:
            return None

    def _decode(self, raw: bytes | msgspec.Raw | memoryview) -> CachedObject:
        try:
            obj = self._decode_top(_RAW_DICT_DECODER.decode(raw))
        except msgspec.DecodeError:
            obj = None
        return self._decode_general(raw) if obj is None else obj

    def _decode_top(self, top: dict[str, msgspec.Raw]) -> CachedObject | None:
        # The usual object (standard metadata fields only): the top level split into raw
        # fields, then metadata decoded once into a struct that holds every standard field.
        # None (or a DecodeError) sends anything else to the general path.
        api_version = top.pop("apiVersion", None)
        kind = top.pop("kind", None)
        meta_raw = top.pop("metadata", None)
        if meta_raw is None:
            meta = _Metadata()
        else:
            wire = _WIRE_METADATA_DECODER.decode(meta_raw)
            if wire.self_link is not msgspec.UNSET or (
                wire.managed_fields is not msgspec.UNSET and not self.strip_managed_fields
            ):
                return None
            meta = self._compact(wire)
        rest = None
        if top and not self.metadata_only:
            # An exact-size copy (see _exact_bytes), inlined: this runs for every event.
            rest = bytes(memoryview(_ENCODER.encode(top)))
        return CachedObject(
            sys.intern(_STR_DECODER.decode(api_version)) if api_version is not None else "",
            sys.intern(_STR_DECODER.decode(kind)) if kind is not None else "",
            meta,
            None,
            rest,
        )

    def _compact(self, meta: _Metadata) -> _Metadata:
        """``meta`` as kept: a plain :class:`_Metadata` with its repeated values shared."""
        # Absent fields (most of them, on most objects) skip the sharing helpers, which take
        # present values only: a call each is a good part of what decoding an event costs.
        labels = meta.labels
        refs = meta.owner_references
        finalizers = meta.finalizers
        return _Metadata(
            meta.name,
            None if meta.generate_name is None else _intern(meta.generate_name),
            _intern(meta.namespace),
            meta.uid,
            meta.resource_version,
            meta.generation,
            self._shared_timestamp(meta.creation_timestamp),
            meta.deletion_timestamp,
            meta.deletion_grace_period_seconds,
            _shared_labels(labels) if labels else labels,
            meta.annotations,
            _shared_owner_references(refs) if refs else refs,
            _interned_tuple(finalizers) if finalizers else finalizers,
        )

    def _decode_general(self, raw: bytes | msgspec.Raw | memoryview) -> CachedObject:
        """Decode any object: unusual metadata fields are kept raw, errors are named."""
        top = _RAW_DICT_DECODER.decode(raw)
        api_version_raw = top.pop("apiVersion", None)
        kind_raw = top.pop("kind", None)
        meta_raw = top.pop("metadata", None)
        api_version = _STR_DECODER.decode(api_version_raw) if api_version_raw is not None else ""
        kind = _STR_DECODER.decode(kind_raw) if kind_raw is not None else ""
        meta, meta_rest = self._decode_metadata(meta_raw)
        rest = None if self.metadata_only or not top else _exact_bytes(_ENCODER.encode(top))
        return CachedObject(
            api_version=sys.intern(api_version),
            kind=sys.intern(kind),
            _meta=meta,
            _meta_rest=meta_rest,
            _rest=rest,
        )

    def _decode_metadata(self, raw: msgspec.Raw | None) -> tuple[_Metadata, bytes | None]:
        if raw is None:
            return _Metadata(), None
        try:
            meta = _METADATA_DECODER.decode(raw)
        except msgspec.ValidationError as exc:
            raise ObjectDecodeError(f"invalid metadata: {exc}") from exc
        meta = self._compact(meta)
        fields = _RAW_DICT_DECODER.decode(raw)
        extra = {
            key: value
            for key, value in fields.items()
            if key not in _TYPED_METADATA_KEYS
            and not (key == _MANAGED_FIELDS and self.strip_managed_fields)
        }
        return meta, (_exact_bytes(_ENCODER.encode(extra)) if extra else None)

    def _shared_timestamp(self, timestamp: str | None) -> str | None:
        if timestamp is None:
            return None
        last = self._last_timestamp
        if timestamp == last:
            return last
        self._last_timestamp = timestamp
        return timestamp


#: The decoder behind :meth:`CachedObject.from_json` (managedFields stripped, full objects).
DEFAULT_DECODER: Final = ObjectDecoder()


# Bytes a stored object costs beyond its own fields: the store's slots, and an entry of the
# owner-uid index per owner reference (measured with tracemalloc over 20,000 ConfigMaps with and
# without owners, of 3,000 and 20,000 objects: the estimate is within 10 % of the growth).
STORE_OVERHEAD_BYTES: Final = 40
OWNER_INDEX_BYTES: Final = 420


def estimated_size(obj: CachedObject) -> int:
    """Approximate bytes ``obj`` holds in a store (what ``setpoint_cache_bytes`` sums).

    Counts the object, its metadata and the strings and containers only it holds; containers
    shared between objects (interned namespaces and timestamps, shared labels) are not counted.
    """
    size = sys.getsizeof(obj) + STORE_OVERHEAD_BYTES
    meta = obj._meta
    size += sys.getsizeof(meta)
    for text in (meta.name, meta.uid, meta.resource_version, meta.generate_name):
        if text is not None:
            size += sys.getsizeof(text)
    if meta.annotations:
        size += sys.getsizeof(meta.annotations) + sum(
            sys.getsizeof(k) + sys.getsizeof(v) for k, v in meta.annotations.items()
        )
    if meta.owner_references:
        size += sys.getsizeof(meta.owner_references)
        for ref in meta.owner_references:
            size += sys.getsizeof(ref) + sys.getsizeof(ref.uid) + sys.getsizeof(ref.name)
            size += OWNER_INDEX_BYTES
    if meta.finalizers:
        size += sys.getsizeof(meta.finalizers)
    for raw in (obj._meta_rest, obj._rest):
        if raw is not None:
            size += sys.getsizeof(raw)
    return size
