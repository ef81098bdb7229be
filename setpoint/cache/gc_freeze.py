"""Freezing the garbage collector's view of the cache after a large sync.

CPython's cyclic garbage collector walks every tracked container in a generation each time it
collects it. After an initial list of tens of thousands of objects, the decoding leaves a large
population that survives into the oldest generation, and every full collection rescans all of it
although none of it is (or will ever be) garbage: the cache is acyclic and freed by reference
counting. ``gc.freeze()`` moves everything alive into a permanent generation that collections
skip, so full collections stay as cheap as they were before the sync. (CachedObject structs are
already untracked; freezing also covers the label/annotation dicts and the process's other
long-lived objects.)

Freezing is O(1) but it is pointless to repeat per object or per informer when several informers
finish together, so requests made during one loop iteration are coalesced into one freeze.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Final

__all__ = ["GC_FREEZE_MIN_OBJECTS", "request_gc_freeze"]

logger = logging.getLogger(__name__)

#: Syncs smaller than this do not request a freeze: the collector handles them cheaply, and
#: freezing too eagerly also pins short-lived cycles that happen to be alive at that moment.
GC_FREEZE_MIN_OBJECTS: Final = 1000

_pending: set[asyncio.AbstractEventLoop] = set()


def request_gc_freeze() -> None:
    """Schedule one ``gc.freeze()`` at the end of this loop iteration (coalesced)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _freeze(None)
        return
    if loop in _pending:
        return
    _pending.add(loop)
    loop.call_soon(_freeze, loop)


def _freeze(loop: asyncio.AbstractEventLoop | None) -> None:
    if loop is not None:
        _pending.discard(loop)
    gc.freeze()
    logger.debug("gc.freeze(): %d objects now in the permanent generation", gc.get_freeze_count())
