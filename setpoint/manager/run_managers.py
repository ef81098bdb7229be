"""Running several managers in one process, with one set of signal handlers for all of them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from setpoint.manager.manager import Manager
from setpoint.manager.signals import ShutdownSignals

__all__ = ["run_managers"]


async def run_managers(managers: Sequence[Manager], *, handle_signals: bool = True) -> None:
    """Run managers together until a signal or until one of them fails.

    The first SIGTERM/SIGINT stops them all gracefully; a second one exits at once. When one
    fails (leadership lost, a runnable crashed) the others are stopped gracefully too, and the
    first failure is raised once all have stopped. (Each `Manager.run()` would install its own
    signal handlers, and only the last one installed would see the signals.)
    """

    def stop_all() -> None:
        for manager in managers:
            manager.request_stop()

    signals = ShutdownSignals(stop_all) if handle_signals else None
    if signals is not None:
        signals.install()
    failures: list[BaseException] = []

    async def run_one(manager: Manager) -> None:
        try:
            await manager.run(handle_signals=False)
        except Exception as error:
            failures.append(error)
            stop_all()

    try:
        await asyncio.gather(*(run_one(manager) for manager in managers))
    finally:
        if signals is not None:
            signals.remove()
    if failures:
        raise failures[0]
