"""Event handlers: how an informer tells its users that an object was added, updated or deleted.

Handlers are plain synchronous callbacks run on the event loop right after the store changed;
they must be quick (typically: map the object to a key and add it to a work queue). A handler
that raises is logged with the resource and object, and the informer carries on: one broken
handler never stops the others or the watch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from setpoint.cache.cached_object import CachedObject
from setpoint.cache.store import Delta, DeltaType

__all__ = ["EventHandler", "FunctionEventHandler", "HandlerRegistry"]

logger = logging.getLogger(__name__)


@runtime_checkable
class EventHandler(Protocol):
    """Receives an informer's events. Methods are called on the event loop; keep them quick."""

    def on_add(self, obj: CachedObject, is_initial_list: bool) -> None:
        """``obj`` appeared. ``is_initial_list`` is True for the initial list and for the replay
        a handler gets when it is added to a running informer."""

    def on_update(self, old: CachedObject, new: CachedObject) -> None:
        """``old`` changed into ``new``."""

    def on_delete(self, obj: CachedObject) -> None:
        """``obj`` is gone (its last known state). Also sent for objects found missing by a
        relist, whose deletion the watch never delivered."""


@dataclass(frozen=True, slots=True)
class FunctionEventHandler:
    """An :class:`EventHandler` made of optional functions (missing ones ignore the event)."""

    add: Callable[[CachedObject, bool], None] | None = None
    update: Callable[[CachedObject, CachedObject], None] | None = None
    delete: Callable[[CachedObject], None] | None = None

    def on_add(self, obj: CachedObject, is_initial_list: bool) -> None:
        """Call ``add`` if given."""
        if self.add is not None:
            self.add(obj, is_initial_list)

    def on_update(self, old: CachedObject, new: CachedObject) -> None:
        """Call ``update`` if given."""
        if self.update is not None:
            self.update(old, new)

    def on_delete(self, obj: CachedObject) -> None:
        """Call ``delete`` if given."""
        if self.delete is not None:
            self.delete(obj)


class HandlerRegistry:
    """The handlers of one informer and the safe delivery of deltas to them."""

    def __init__(self, description: str) -> None:
        self._description = description
        # Replaced (never mutated) on add/remove, so delivery iterates it without a copy even
        # when a handler adds or removes handlers.
        self._handlers: tuple[EventHandler, ...] = ()

    def __len__(self) -> int:
        return len(self._handlers)

    def add(self, handler: EventHandler) -> None:
        """Register ``handler`` (the same handler twice receives events twice)."""
        for method in ("on_add", "on_update", "on_delete"):
            if not callable(getattr(handler, method, None)):
                raise TypeError(
                    f"event handler {handler!r} has no {method}() method; "
                    "implement EventHandler or use FunctionEventHandler"
                )
        self._handlers = (*self._handlers, handler)

    def remove(self, handler: EventHandler) -> bool:
        """Unregister ``handler``; returns False if it was not registered."""
        handlers = list(self._handlers)
        try:
            handlers.remove(handler)
        except ValueError:
            return False
        self._handlers = tuple(handlers)
        return True

    def deliver(self, delta: Delta, *, is_initial_list: bool = False) -> None:
        """Send one delta to every handler, logging (never raising) handler failures."""
        for handler in self._handlers:
            self.deliver_to(handler, delta, is_initial_list=is_initial_list)

    def deliver_to(self, handler: EventHandler, delta: Delta, *, is_initial_list: bool) -> None:
        """Send one delta to one handler, logging (never raising) its failure."""
        try:
            if delta.type is DeltaType.ADD:
                handler.on_add(delta.obj, is_initial_list)
            elif delta.type is DeltaType.UPDATE:
                assert delta.old is not None
                handler.on_update(delta.old, delta.obj)
            else:
                handler.on_delete(delta.obj)
        except Exception:
            logger.exception(
                "event handler %r failed on %s of %r (%s); the informer carries on",
                handler,
                delta.type.value,
                delta.obj,
                self._description,
            )
