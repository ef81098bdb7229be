"""The cyclic garbage collector's settings for the commands that serve for a long time.

A server's heap is mostly what it built at start (modules, the built-in resources' schemas
and discovery documents) and what it keeps (stored objects, informer caches), and neither
is garbage. The collector still walks it: a full collection every time the surviving
objects grew by a quarter, and younger generations every 700 allocations. After start-up
the heap built so far is frozen (moved out of the collector's sight, as ``gc.freeze``
documents for long-running servers) and the youngest generation collects less often, so a
request's allocations are examined a few times fewer. Cycles are still found and freed.
"""

from __future__ import annotations

import gc
from typing import Final

#: Allocations (of container objects) between collections of the youngest generation.
#: CPython's default is 700; a request of the local API server allocates a few hundred.
YOUNG_THRESHOLD: Final = 10_000


def settle_after_start() -> None:
    """Freeze what start-up built and collect the youngest generation less often."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
