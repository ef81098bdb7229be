"""Waiting for an ``fdatasync`` from the event loop without a thread: Linux AIO, through caio.

``IOCB_CMD_FDSYNC`` (Linux 4.18 and later) has the kernel run the ``fdatasync`` in its own worker
and signal an eventfd that the event loop watches (caio's ``linux_aio_asyncio``). No Python
thread takes part, so a batch's sync costs no hand-off of the GIL and no wake-up of a thread:
measured on the SQLite storage, about a third of the context switches per create and no futex
calls (docs/benchmarks.md). :func:`open_kernel_sync` returns None where that is not available
(another OS, an older kernel, a sandbox that refuses the calls, caio not installed); the storage
then runs ``os.fdatasync`` on its thread
(:class:`~setpoint.cluster.apiserver.storage.file_thread.FileThread`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

# Syncs in flight at once: the storage has at most one.
_MAX_REQUESTS = 4


class KernelSync(Protocol):
    """The part of caio's asyncio context the storage uses."""

    async def fdsync(self, fd: int) -> Any:
        """``fdatasync(fd)`` run by the kernel; raises if it fails."""

    def close(self) -> None:
        """Release the AIO context and stop watching its eventfd."""


async def open_kernel_sync(probe_directory: Path) -> KernelSync | None:
    """A Linux AIO context for the running loop, or None where it cannot sync.

    It is tried once on a descriptor of ``probe_directory`` of its own (never on the file it
    will sync: a failure there could consume an I/O error report meant for that file).
    """
    try:
        from caio import linux_aio_asyncio
    except ImportError:
        return None
    try:
        context_class: Any = linux_aio_asyncio.AsyncioContext  # caio's class is untyped
        context: Any = context_class(max_requests=_MAX_REQUESTS, loop=asyncio.get_running_loop())
    except Exception as exc:  # no AIO in this kernel or sandbox
        log.debug("Linux AIO unavailable (%s); syncing on a thread", exc)
        return None
    probe = os.open(probe_directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        await context.fdsync(probe)
    except Exception as exc:  # e.g. EINVAL before Linux 4.18
        log.debug("Linux AIO cannot fdatasync (%s); syncing on a thread", exc)
        context.close()
        return None
    finally:
        os.close(probe)
    sync: KernelSync = context
    return sync
