"""The cyclic garbage collector of the commands: paused while they start, tuned for serving.

Starting the local cluster allocates about 110,000 objects that live as long as the process
(modules, classes, tables, the bootstrap objects, the controllers), and the collector, run
every 700 allocations, walks all of them again at each full collection: 35-50 ms of the
0.3 s of CPU to a served ``/readyz`` on the development machine. So the entry point pauses it
(:func:`pause`); every command but ``cluster serve`` resumes it once its module is imported,
and ``serve`` once the cluster has started. Resuming freezes what exists (``gc.freeze``):
later collections skip those objects instead of walking them for the rest of the process.
What is frozen is never collected: a command's imports leave about 1,800 unreachable objects
(about 0.4 MiB: classes and functions discarded while classes are built), kept for the
process's life; ``serve`` collects them first (:func:`settle_after_start`).

A server then keeps what it stores (objects, informer caches), none of it garbage, while each
request allocates a few hundred short-lived objects: ``serve`` also collects the youngest
generation every 10,000 allocations instead of 700, so a request's objects are examined a few
times fewer. Cycles made later are still found and freed.

Only the entry point pauses (the ``setpoint`` script and ``python -m setpoint``): a program
that invokes the click group itself, as the tests do, keeps its collector as it was.
"""

from __future__ import annotations

import gc
from typing import Final

#: Allocations (of container objects) between collections of the youngest generation while
#: serving. CPython's default is 700; a request of the local API server allocates hundreds.
YOUNG_THRESHOLD: Final = 10_000

_paused = False


def pause() -> None:
    """Stop collecting until :func:`resume` (no-op if the collector is already off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze every object that exists and collect again (no-op unless :func:`pause` paused)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def settle_after_start() -> None:
    """A server that has started: its start-up garbage freed, the rest frozen, the youngest
    generation collected less often."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
