"""The cyclic garbage collector, paused while ``setpoint cluster serve`` starts.

Starting the local cluster allocates about 110,000 objects that live as long as the process
(modules, classes, tables, the bootstrap objects, the controllers), and the collector, run
every 700 allocations, walks all of them again at each full collection: 35-50 ms of the
0.3 s of CPU to a served ``/readyz`` on the development machine. So the entry point pauses it;
every command but ``cluster serve`` resumes it once its module is imported, and ``serve`` once
the cluster has started. Resuming freezes what exists (``gc.freeze``): later collections skip
those objects instead of walking them at every full collection for the rest of the process.
What is frozen is never collected: the imports leave about 1,800 unreachable objects (about
0.4 MiB: classes and functions discarded while classes are built), kept for the process's
life.

Only the entry point pauses (the ``setpoint`` script and ``python -m setpoint``): a program
that invokes the click group itself, as the tests do, keeps its collector as it was.
"""

from __future__ import annotations

import gc

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
