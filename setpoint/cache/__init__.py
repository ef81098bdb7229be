"""Reflectors, stores, indexers and shared informers: the read side of the runtime.

How the pieces fit (each usable on its own):

- :class:`CachedObject` — an immutable, compact object: metadata decoded, everything else kept
  as raw JSON until read. ``CachedObject.from_json(raw)`` builds one from bytes.
- :class:`Store` / :class:`MutableStore` — objects by namespace and name, with the built-in
  ``"namespace"`` and ``"owner-uid"`` indexes and user indexes; ``MutableStore.load_list(raw)``
  and ``apply_event(line)`` fill one from raw API bytes without a server.
- :class:`Reflector` — list (paginated) + watch (bookmarks, 410 → relist and diff, backoff,
  silent-stream cut) keeping a store equal to the server.
- :class:`SharedInformer` — one store and its reflector(s), shared by any number of
  :class:`EventHandler` s; ``wait_for_sync`` fails clearly (naming the resource, and RBAC).
- :class:`Cache` — one informer per watched collection for the whole process, and the
  controllers' reads (``get``/``list`` return fresh dicts; ``get_cached``/``list_cached`` the
  immutable objects).
"""

from setpoint.cache.backoff import Backoff
from setpoint.cache.cache import Cache, CacheClient, ResourceMapper
from setpoint.cache.cached_object import (
    CachedObject,
    ObjectDecodeError,
    ObjectDecoder,
    OwnerReference,
    Transform,
)
from setpoint.cache.errors import CacheError, CacheNotStarted, CacheSyncTimeout, NamespaceNotCached
from setpoint.cache.handlers import EventHandler, FunctionEventHandler
from setpoint.cache.informer import SharedInformer
from setpoint.cache.options import CacheOptions, ObjectOptions
from setpoint.cache.reflector import ListWatchClient, Reflector, ReflectorOptions
from setpoint.cache.store import (
    NAMESPACE_INDEX,
    OWNER_UID_INDEX,
    Delta,
    DeltaType,
    IndexFunc,
    MutableStore,
    Store,
)

__all__ = [
    "NAMESPACE_INDEX",
    "OWNER_UID_INDEX",
    "Backoff",
    "Cache",
    "CacheClient",
    "CacheError",
    "CacheNotStarted",
    "CacheOptions",
    "CacheSyncTimeout",
    "CachedObject",
    "Delta",
    "DeltaType",
    "EventHandler",
    "FunctionEventHandler",
    "IndexFunc",
    "ListWatchClient",
    "MutableStore",
    "NamespaceNotCached",
    "ObjectDecodeError",
    "ObjectDecoder",
    "ObjectOptions",
    "OwnerReference",
    "Reflector",
    "ReflectorOptions",
    "ResourceMapper",
    "SharedInformer",
    "Store",
    "Transform",
]
