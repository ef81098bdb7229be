"""The kubelet's container restart and image pull back-off (``flowcontrol.NewBackOff(10s, 300s)``).

A container that keeps exiting is started again at once the first time, then after 10 s,
20 s, 40 s … up to 300 s; an image that cannot be pulled is retried on the same steps. Both
the process runtime (``--run-pods``) and the simulated one use these numbers, on the cluster
clock.
"""

from __future__ import annotations

from typing import Final

BACKOFF_BASE_SECONDS: Final = 10.0
BACKOFF_MAX_SECONDS: Final = 300.0


def backoff_seconds(failures: int) -> float:
    """The wait before the next start after ``failures`` restarts already made (0: none)."""
    if failures <= 0:
        return 0.0
    return float(min(BACKOFF_BASE_SECONDS * 2.0 ** (failures - 1), BACKOFF_MAX_SECONDS))


def pull_backoff_seconds(attempts: int) -> float:
    """The wait before pull attempt ``attempts + 1`` after ``attempts`` failed ones (≥ 1)."""
    return float(min(BACKOFF_BASE_SECONDS * 2.0 ** max(0, attempts - 1), BACKOFF_MAX_SECONDS))
