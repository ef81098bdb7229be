"""Probes that follow the cache: an operator whose informers cannot list or watch is not fine.

A controller reading a cache that no longer follows the API server acts on a frozen world. The
manager therefore adds a readiness check (``/readyz/informers``) that fails once some informer
has been unable to list or watch for ``unready_after`` seconds, and a liveness check
(``/healthz/informers``) that fails after the longer ``unhealthy_after``, so that a supervisor
restarts a process that cannot recover by itself (e.g. its credentials or the server's
certificate changed). Both recover as soon as the informer lists or watches again. The reason
(informer, how long, last error) is in the check's body and logged once per change of state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Final

from setpoint.cache.informer import SharedInformer
from setpoint.client.errors import ApiError

__all__ = [
    "DEFAULT_UNHEALTHY_AFTER_S",
    "DEFAULT_UNREADY_AFTER_S",
    "CacheHealth",
    "InformersFailing",
]

log = logging.getLogger("setpoint.manager")

#: Readiness fails after this long without list/watch: longer than an API server restart or a
#: few reflector backoffs (0.8 s doubling), short enough to show a real outage within a minute.
DEFAULT_UNREADY_AFTER_S: Final = 30.0
#: Liveness fails after this long: a process that cannot watch for 3 minutes is restarted (a
#: fresh process re-reads its credentials, CA and configuration).
DEFAULT_UNHEALTHY_AFTER_S: Final = 180.0
#: How often the state is re-evaluated for the log when no probe asks.
MONITOR_INTERVAL_S: Final = 2.0


class InformersFailing(Exception):
    """Some informers cannot list or watch; the message names them, for how long and why."""


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, ApiError):
        return f"{error.reason or 'error'} ({error.code}): {error.message}"
    return f"{type(error).__name__}: {error}"


class CacheHealth:
    """Evaluates the informers of a cache against two thresholds (seconds of failure)."""

    def __init__(
        self,
        informers: Callable[[], Iterable[SharedInformer]],
        *,
        unready_after: float = DEFAULT_UNREADY_AFTER_S,
        unhealthy_after: float = DEFAULT_UNHEALTHY_AFTER_S,
    ) -> None:
        self._informers = informers
        self.unready_after = unready_after
        self.unhealthy_after = unhealthy_after
        self._reported: dict[str, str] = {}

    def failures(self, threshold: float) -> list[str]:
        """One line per informer failing for at least ``threshold`` seconds."""
        now = asyncio.get_running_loop().time()
        lines = []
        for informer in self._informers():
            seconds, error = informer.failing(now)
            if seconds > 0 and seconds >= threshold:
                lines.append(
                    f"{informer.description}: cannot list/watch for {seconds:.0f}s "
                    f"(last error: {_describe(error)})"
                )
        return lines

    def _check(self, probe: str, threshold: float) -> None:
        failing = self.failures(threshold)
        self._report(probe, failing)
        if failing:
            raise InformersFailing("; ".join(failing))

    def readiness_check(self) -> None:
        """Raise :class:`InformersFailing` past ``unready_after`` (a readyz check)."""
        self._check("readyz", self.unready_after)

    def liveness_check(self) -> None:
        """Raise :class:`InformersFailing` past ``unhealthy_after`` (a healthz check)."""
        self._check("healthz", self.unhealthy_after)

    def _report(self, probe: str, failing: list[str]) -> None:
        state = "failing" if failing else "ok"
        previous = self._reported.get(probe, "ok")
        if state == previous:
            return
        self._reported[probe] = state
        if failing:
            log.error("/%s fails: %s", probe, "; ".join(failing))
        else:
            log.info("/%s informers check passes again: every informer lists and watches", probe)

    async def monitor(self) -> None:
        """Re-evaluate both checks every few seconds, so that changes are logged even when no
        probe asks (run until cancelled)."""
        while True:
            for probe, threshold in (
                ("readyz", self.unready_after),
                ("healthz", self.unhealthy_after),
            ):
                self._report(probe, self.failures(threshold))
            await asyncio.sleep(MONITOR_INTERVAL_S)
