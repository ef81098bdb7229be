"""The first SIGTERM/SIGINT asks for a graceful stop; a second one forces the exit."""

from __future__ import annotations

import asyncio
import os
import signal

from setpoint.manager.signals import FORCED_EXIT_CODE, ShutdownSignals


async def test_first_signal_stops_gracefully_second_forces_exit() -> None:
    stop_requested = asyncio.Event()
    forced: list[int] = []
    signals = ShutdownSignals(stop_requested.set, force_exit=forced.append)
    assert signals.install()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stop_requested.wait(), 5)
        assert signals.received is signal.SIGTERM
        assert forced == []
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):
            if forced:
                break
            await asyncio.sleep(0.01)
        assert forced == [FORCED_EXIT_CODE]
    finally:
        signals.remove()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
