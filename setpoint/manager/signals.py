"""SIGTERM/SIGINT handling: the first signal asks for a graceful stop, a second one forces exit.

This is controller-runtime's `SetupSignalHandler`: Kubernetes sends SIGTERM and waits the pod's
grace period, so the first signal starts an orderly shutdown (finish in-flight reconciles,
release the lease); an operator that is stuck can still be killed at once with a second Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["FORCED_EXIT_CODE", "SHUTDOWN_SIGNALS", "ShutdownSignals"]

log = logging.getLogger("setpoint.manager.signals")

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# controller-runtime exits with 1 on the second signal.
FORCED_EXIT_CODE = 1


class ShutdownSignals:
    """Installs handlers on the running loop; `on_shutdown` is called on the first signal."""

    def __init__(
        self,
        on_shutdown: Callable[[], None],
        *,
        force_exit: Callable[[int], None] | None = None,
    ) -> None:
        self._on_shutdown = on_shutdown
        self._force_exit = force_exit or _exit_now
        self._loop: asyncio.AbstractEventLoop | None = None
        self._installed: list[signal.Signals] = []
        self.received: signal.Signals | None = None

    def install(self) -> bool:
        """Install on the running loop; False where that is impossible (not the main thread)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        for sig in SHUTDOWN_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._handle, sig)
            except (ValueError, RuntimeError, NotImplementedError):
                self.remove()
                return False
            self._installed.append(sig)
        return True

    def remove(self) -> None:
        """Restore the default handling of the signals."""
        if self._loop is not None:
            for sig in self._installed:
                self._loop.remove_signal_handler(sig)
        self._installed.clear()

    def _handle(self, sig: signal.Signals) -> None:
        if self.received is None:
            self.received = sig
            log.info("received %s, shutting down gracefully (send it again to force)", sig.name)
            self._on_shutdown()
            return
        log.warning("received %s again, exiting immediately", sig.name)
        self._force_exit(FORCED_EXIT_CODE)


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
