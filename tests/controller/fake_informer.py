"""An in-memory informer and cache implementing the protocols the controller uses.

Honest fakes: they hold CachedObjects in a dict, replay the store to late handlers as initial
adds, report sync through ``wait_for_sync`` with a timeout, and deliver events synchronously the
way the real informer does after each store change.
"""

from __future__ import annotations

import asyncio
from typing import Any

from setpoint.api.gvk import ObjectKey
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.source import InformerLike


class FakeInformer:
    def __init__(self, *, synced: bool = True) -> None:
        self.objects: dict[ObjectKey, CachedObject] = {}
        self.handlers: list[Any] = []
        self._synced = asyncio.Event()
        if synced:
            self._synced.set()

    @classmethod
    def holding(cls, *objects: CachedObject, synced: bool = True) -> FakeInformer:
        """An informer whose store already holds ``objects``."""
        informer = cls(synced=synced)
        for obj in objects:
            informer.upsert(obj)
        return informer

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    def mark_synced(self) -> None:
        self._synced.set()

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)
        for obj in list(self.objects.values()):
            handler.on_add(obj, True)

    def remove_event_handler(self, handler: Any) -> bool:
        if handler in self.handlers:
            self.handlers.remove(handler)
            return True
        return False

    async def wait_for_sync(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        async with asyncio.timeout(timeout):
            await self._synced.wait()

    # -- driving events ------------------------------------------------------------------------

    def upsert(self, obj: CachedObject) -> None:
        old = self.objects.get(obj.key)
        self.objects[obj.key] = obj
        for handler in list(self.handlers):
            if old is None:
                handler.on_add(obj, False)
            else:
                handler.on_update(old, obj)

    def delete(self, key: ObjectKey) -> None:
        old = self.objects.pop(key)
        for handler in list(self.handlers):
            handler.on_delete(old)


class FakeCache:
    def __init__(self) -> None:
        self.informers: dict[tuple[str, str, bool], FakeInformer] = {}

    def informer(self, api_version: str, kind: str, *, metadata_only: bool = False) -> FakeInformer:
        return self.informers.setdefault((api_version, kind, metadata_only), FakeInformer())

    async def informer_for(
        self, api_version: str, kind: str, *, metadata_only: bool = False
    ) -> InformerLike:
        return self.informer(api_version, kind, metadata_only=metadata_only)
