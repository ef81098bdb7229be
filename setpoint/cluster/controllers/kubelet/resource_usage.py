"""What a pod's containers use now: CPU (nanocores) and memory (bytes), for ``metrics.k8s.io``.

A kubelet reports usage from cAdvisor; the metrics server turns cumulative CPU time into a
rate over a window. Here:

- a ``--run-pods`` container is its process and every descendant (found through ``/proc``):
  memory is their resident set, CPU the rate of their ``utime + stime`` between two readings of
  the same container (the first reading: since the process started);
- a simulated container uses what its pod's annotations say
  (``setpoint.dev/simulated-cpu: 250m``, ``setpoint.dev/simulated-memory: 64Mi``, each for
  every container of the pod), and nothing when they are absent. Change the annotations
  (``kubectl annotate pod ... --overwrite``, or the workload's pod template) to make a
  HorizontalPodAutoscaler react.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from setpoint.cluster.apiserver.kinds.resource_metrics import ContainerUsage
from setpoint.cluster.controllers.scheduler.quantities import quantity

SIMULATED_CPU: Final = "setpoint.dev/simulated-cpu"
SIMULATED_MEMORY: Final = "setpoint.dev/simulated-memory"
#: The window a reading covers when nothing was read before (metrics-server's resolution).
DEFAULT_WINDOW_SECONDS: Final = 15.0
_PROC: Final = Path("/proc")
_MAX_REMEMBERED: Final = 10_000
_CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_SIZE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def simulated_usage(
    pod: Mapping[str, Any], containers: Iterable[str], now: float
) -> list[ContainerUsage]:
    """The usage a simulated pod's annotations declare (0 when they are absent)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    cpu = quantity(annotations.get(SIMULATED_CPU, 0))
    memory = quantity(annotations.get(SIMULATED_MEMORY, 0))
    nanocores = int(max(cpu, Decimal(0)) * 1_000_000_000)
    memory_bytes = int(max(memory, Decimal(0)))
    return [
        ContainerUsage(name, nanocores, memory_bytes, now, DEFAULT_WINDOW_SECONDS)
        for name in containers
    ]


def process_tree(root: int) -> list[int]:
    """``root`` and every process descending from it (those alive now)."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        stat = _read_stat(int(entry.name))
        if stat is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
    tree = []
    pending = [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, ()))
    return tree


def _read_stat(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, utime + stime in ticks, start time in ticks) of ``pid``, or None."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _resident_bytes(pid: int) -> int:
    try:
        pages = int((_PROC / str(pid) / "statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * _PAGE_SIZE


def _boot_time() -> float:
    try:
        for line in (_PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return 0.0


class ProcessUsage:
    """Turns cumulative CPU time of process trees into rates between readings."""

    def __init__(self) -> None:
        # container id -> (cpu seconds, reading time)
        self._last: dict[str, tuple[float, float]] = {}
        self._boot = _boot_time()

    def read(self, container_id: str, name: str, root_pid: int | None) -> ContainerUsage:
        """The usage of the process tree under ``root_pid`` (zero when it is gone)."""
        now = time.time()
        if root_pid is None:
            return ContainerUsage(name, 0, 0, now, DEFAULT_WINDOW_SECONDS)
        cpu_ticks = 0
        memory = 0
        root_start: float | None = None
        for pid in process_tree(root_pid):
            stat = _read_stat(pid)
            if stat is None:
                continue
            cpu_ticks += stat[1]
            memory += _resident_bytes(pid)
            if pid == root_pid:
                root_start = self._boot + stat[2] / _CLOCK_TICKS
        cpu_seconds = cpu_ticks / _CLOCK_TICKS
        previous = self._last.get(container_id)
        if previous is not None and previous[0] <= cpu_seconds and now > previous[1]:
            used, since = cpu_seconds - previous[0], previous[1]
        else:
            used, since = cpu_seconds, root_start if root_start is not None else now
        window = max(now - since, 0.001)
        if len(self._last) > _MAX_REMEMBERED:
            self._last.clear()  # containers come and go: never grow without bound
        self._last[container_id] = (cpu_seconds, now)
        return ContainerUsage(name, int(used / window * 1_000_000_000), memory, now, window)

    def forget(self, container_ids: Iterable[str]) -> None:
        """Drop the readings of containers that are gone."""
        for container_id in container_ids:
            self._last.pop(container_id, None)
