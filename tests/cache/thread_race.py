"""Running a reader in another thread against writes on this one, to expose data races.

The manager encodes /metrics and sync reconcilers read the cache in worker threads while the
event loop changes the same structures. A race there shows up only when a thread switch lands in
the middle of an iteration, so the switch interval is cut to the minimum for the duration, and a
garbage collection (which runs Python callbacks, and so may switch threads, even inside a
C-level ``list(d.items())``) is made to happen often and to yield.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable

# How long the writes go on at most: the races these tests look for show up within tens of
# milliseconds; this is a bound on the stress, not a timing assertion.
STRESS_SECONDS = 0.7
# A collection every few dozen allocations, so that one lands inside the readers' copies.
GC_THRESHOLD = 50


def _yield_during_collection(phase: str, info: dict[str, int]) -> None:
    time.sleep(0)


def reader_failures(read: Callable[[], object], write: Callable[[], None]) -> list[BaseException]:
    """Call ``read`` in a loop in another thread while calling ``write`` in a loop here.

    Returns what ``read`` raised (it stops at its first failure, and so do the writes).
    """
    failures: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                read()
            except Exception as exc:
                failures.append(exc)
                return

    interval = sys.getswitchinterval()
    thresholds = gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(GC_THRESHOLD)
    gc.callbacks.append(_yield_during_collection)
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        deadline = time.monotonic() + STRESS_SECONDS
        while time.monotonic() < deadline and not failures:
            write()
    finally:
        stop.set()
        thread.join()
        gc.callbacks.remove(_yield_during_collection)
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(interval)
    return failures
