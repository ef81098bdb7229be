"""Objects of one kind by namespace, for admission plugins that read them on every write.

Upstream's LimitRanger and ResourceQuota plugins read an informer's cache; here a
:class:`NamespacedIndex` is read whole from storage on first use, then kept current by an
:class:`IndexedKindBehaviour` as the kind's writes become durable, so that admitting an object
in a namespace costs a dictionary lookup, not a storage scan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Generic, TypeVar

from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.storage import Storage

T = TypeVar("T")

_EMPTY: Final[Mapping[str, Any]] = {}


class NamespacedIndex(Generic[T]):
    """What ``value_of`` keeps of each object stored under ``root``, by namespace and name."""

    def __init__(self, storage: Storage, root: str, value_of: Callable[[Mapping[str, Any]], T]):
        self._storage = storage
        self._root = root
        self._value_of = value_of
        #: namespace → name → value; None until first used.
        self._by_namespace: dict[str, dict[str, T]] | None = None

    def _loaded(self) -> dict[str, dict[str, T]]:
        if self._by_namespace is None:
            self._by_namespace = {}
            for record in self._storage.list(self._root):
                self._put(decode(record.value))
        return self._by_namespace

    def _put(self, obj: Mapping[str, Any]) -> None:
        assert self._by_namespace is not None
        meta = obj.get("metadata") or {}
        namespace = self._by_namespace.setdefault(str(meta.get("namespace") or ""), {})
        namespace[str(meta.get("name") or "")] = self._value_of(obj)

    def record(self, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> None:
        """Take a durable write into account (``obj`` None: deleted)."""
        if self._by_namespace is None:
            return  # read whole on first use
        if obj is not None:
            self._put(obj)
            return
        meta = (old or {}).get("metadata") or {}
        self._by_namespace.get(str(meta.get("namespace") or ""), {}).pop(
            str(meta.get("name") or ""), None
        )

    def in_namespace(self, namespace: str) -> Mapping[str, T]:
        """Name → value of the objects of ``namespace`` (the index's own: do not change it)."""
        return self._loaded().get(namespace) or _EMPTY


class IndexedKindBehaviour(KindBehaviour):
    """A kind whose every durable write updates a :class:`NamespacedIndex`."""

    reacts_to_writes = True

    def __init__(
        self, index: NamespacedIndex[Any], validator: BuiltinValidator | None = None
    ) -> None:
        super().__init__(validator)
        self._index = index

    async def after_write(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        self._index.record(obj, old)
