"""Reading a process container's log file as ``pods/log`` answers it (``kuberuntime/logs``).

Each stored line is ``<RFC3339Nano time> <stream> <F|P> <text>``. The answer is the text
(with the time and one space in front when ``timestamps`` is asked), the last ``tailLines``
lines, cut at ``limitBytes``; with ``follow`` new lines are sent as they are written until
the container instance exits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

from setpoint.api.clock import Clock
from setpoint.cluster.apiserver.http.pod_endpoints import LogOptions
from setpoint.cluster.controllers.kubelet.process_pod import ProcessContainer

#: How often a followed log is checked for new lines (real time: processes are real).
FOLLOW_POLL_SECONDS: Final = 0.05


def _render(line: str, timestamps: bool) -> str:
    parts = line.rstrip("\n").split(" ", 3)
    if len(parts) < 4:
        return ""
    moment, _stream, tag, text = parts
    ending = "\n" if tag == "F" else ""
    return f"{moment} {text}{ending}" if timestamps else f"{text}{ending}"


async def read_log(
    container: ProcessContainer, options: LogOptions, clock: Clock
) -> AsyncIterator[bytes]:
    """The log of ``container``'s current (or previous) instance."""
    number = container.restart_count - 1 if options.previous else container.restart_count
    path: Path = container.log_path(max(number, 0))
    instance = container.instances[number] if 0 <= number < len(container.instances) else None
    try:
        opened = path.open(encoding="utf-8")
    except FileNotFoundError:
        return
    sent = 0
    with opened as log_file:
        lines = log_file.readlines()
        if options.tail_lines is not None:
            lines = lines[-options.tail_lines :] if options.tail_lines > 0 else []
        for line in lines:
            chunk = _render(line, options.timestamps).encode()
            if options.limit_bytes is not None:
                chunk = chunk[: max(0, options.limit_bytes - sent)]
            if chunk:
                sent += len(chunk)
                yield chunk
        if not options.follow or options.previous or instance is None:
            return
        pending = ""
        while True:
            more = log_file.readline()
            if more:
                pending += more
                if not pending.endswith("\n"):
                    continue
                chunk = _render(pending, options.timestamps).encode()
                pending = ""
                if options.limit_bytes is not None:
                    chunk = chunk[: max(0, options.limit_bytes - sent)]
                    if not chunk:
                        return
                sent += len(chunk)
                yield chunk
                continue
            if instance.finished_at is not None:
                return
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
