"""The API server's clock for the times it writes: creation and deletion timestamps, the times
of ``managedFields`` entries and of the conditions it sets itself.

kube-apiserver takes these from its own clock, which the controllers and the kubelet share
with it. A local cluster on a manual clock (``--clock manual``, a ``FakeClock`` in tests) must
stamp a new object with that clock's time, or a CronJob created "now" would look created
weeks before its first schedule. The stamping code is deep in the registry and shared by every
server in the process, so the clock is looked up by the running event loop: each server
registers its clock for the loop it serves on (:func:`register`), and :func:`server_time`
reads it; anywhere else (no loop, or a loop with no registered clock) it is the real time.
"""

from __future__ import annotations

import asyncio
import time
import weakref

from setpoint.api.clock import SYSTEM_CLOCK, Clock

__all__ = ["register", "server_time", "unregister"]

_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Clock] = weakref.WeakKeyDictionary()
# Whether a clock other than the real one was ever registered in this process: until then the
# mapping is not asked (its len() is a Python call, and every create stamps two times). Never
# set back: a server on another thread may be registering meanwhile.
_any_registered = False


def register(clock: Clock) -> None:
    """Stamp times written on the running loop with ``clock`` (the real clock: no entry)."""
    global _any_registered
    loop = asyncio.get_running_loop()
    if clock is SYSTEM_CLOCK:
        _CLOCKS.pop(loop, None)
    else:
        _CLOCKS[loop] = clock
        _any_registered = True


def unregister(clock: Clock) -> None:
    """Undo :func:`register` for the running loop (when ``clock`` is still the one there)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if _CLOCKS.get(loop) is clock:
        del _CLOCKS[loop]


def server_time() -> float:
    """Seconds since the epoch on the clock of the server serving on this loop."""
    if _any_registered and _CLOCKS:
        try:
            clock = _CLOCKS.get(asyncio.get_running_loop())
        except RuntimeError:
            clock = None
        if clock is not None:
            return clock.now().timestamp()
    return time.time()
