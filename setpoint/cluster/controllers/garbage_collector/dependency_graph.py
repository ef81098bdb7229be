"""Who owns whom: an index from owner uid to dependents, fed by informer events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple


class Item(NamedTuple):
    """One object the collector can process: its storage root, namespace and name."""

    root: str
    namespace: str
    name: str


def owner_uids(obj: dict[str, Any]) -> list[str]:
    """The uids an object's ownerReferences name."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [str(ref.get("uid")) for ref in refs if isinstance(ref, dict) and ref.get("uid")]


class DependencyGraph:
    """Owner uid → dependents, and uid → object, for every watched object."""

    def __init__(self) -> None:
        self._dependents: dict[str, set[Item]] = {}
        self._owners: dict[Item, list[str]] = {}
        self._by_uid: dict[str, Item] = {}

    def observe(self, item: Item, obj: dict[str, Any]) -> None:
        """Record ``obj`` (added or updated) at ``item``."""
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if uid:
            self._by_uid[str(uid)] = item
        if not meta.get("ownerReferences") and item not in self._owners:
            return  # owned by nothing, before or now (most objects)
        new_owners = owner_uids(obj)
        old_owners = self._owners.get(item, [])
        if new_owners == old_owners:
            return
        for owner in old_owners:
            bucket = self._dependents.get(owner)
            if bucket is not None:
                bucket.discard(item)
                if not bucket:
                    del self._dependents[owner]
        for owner in new_owners:
            self._dependents.setdefault(owner, set()).add(item)
        if new_owners:
            self._owners[item] = new_owners
        else:
            self._owners.pop(item, None)

    def forget(self, item: Item, obj: dict[str, Any]) -> None:
        """Drop ``obj`` (deleted)."""
        uid = (obj.get("metadata") or {}).get("uid")
        if uid and self._by_uid.get(str(uid)) == item:
            del self._by_uid[str(uid)]
        for owner in self._owners.pop(item, []):
            bucket = self._dependents.get(owner)
            if bucket is not None:
                bucket.discard(item)
                if not bucket:
                    del self._dependents[owner]

    def dependents(self, uid: str) -> list[Item]:
        """The objects that name ``uid`` as an owner."""
        return list(self._dependents.get(uid, ()))

    def item_of(self, uid: str) -> Item | None:
        """Where the object with ``uid`` lives, if watched."""
        return self._by_uid.get(uid)

    def items_of(self, uids: Iterable[str]) -> list[Item]:
        """Where the objects with these uids live (unknown uids skipped)."""
        return [item for uid in uids if (item := self._by_uid.get(uid)) is not None]
