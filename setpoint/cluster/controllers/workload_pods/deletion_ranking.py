"""Which surplus pods a ReplicaSet deletes first (``getPodsToDelete`` + ``ActivePodsWithRanks``).

The first pods in the order are the cheapest to lose: not yet on a node, then Pending before
Unknown before Running, not ready before ready, a lower ``pod-deletion-cost``, more pods of
the same owners on the same node, ready for less time, more restarts, created more recently.
Durations are compared in powers of two (LogarithmicScaleDown, on by default), so pods of
roughly the same age fall through to the next criterion.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from setpoint.api.times import parse_time
from setpoint.cluster.controllers.workload_pods.pod_state import (
    is_pod_active,
    is_pod_ready,
    max_restart_count,
    pod_phase,
    ready_since,
)

__all__ = ["DELETION_COST_ANNOTATION", "pods_to_delete"]

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"

_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def _node(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _deletion_cost(pod: Mapping[str, Any]) -> int:
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    try:
        value = int(str(text)) if text is not None else 0
    except ValueError:
        return 0
    return value if -(2**31) <= value < 2**31 else 0


def _created(pod: Mapping[str, Any]) -> datetime | None:
    text = (pod.get("metadata") or {}).get("creationTimestamp")
    try:
        return parse_time(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def _log_bucket(moment: datetime, now: datetime) -> int:
    nanoseconds = (now - moment).total_seconds() * 1e9
    return -1 if nanoseconds <= 0 else int(math.log2(nanoseconds))


def _compare(
    a: Mapping[str, Any], b: Mapping[str, Any], ranks: Mapping[int, int], now: datetime
) -> int:
    """Negative when ``a`` should be deleted before ``b``."""
    node_a, node_b = _node(a), _node(b)
    if node_a != node_b and (not node_a or not node_b):
        return -1 if not node_a else 1
    phase_a, phase_b = _PHASE_ORDER.get(pod_phase(a), 0), _PHASE_ORDER.get(pod_phase(b), 0)
    if phase_a != phase_b:
        return phase_a - phase_b
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return -1 if not ready_a else 1
    cost_a, cost_b = _deletion_cost(a), _deletion_cost(b)
    if cost_a != cost_b:
        return -1 if cost_a < cost_b else 1
    rank_a, rank_b = ranks[id(a)], ranks[id(b)]
    if rank_a != rank_b:
        return -1 if rank_a > rank_b else 1
    if ready_a and ready_b:
        since_a, since_b = ready_since(a), ready_since(b)
        if since_a is not None and since_b is not None and since_a != since_b:
            diff = _log_bucket(since_a, now) - _log_bucket(since_b, now)
            if diff:
                return -1 if diff < 0 else 1
    restarts_a, restarts_b = max_restart_count(a), max_restart_count(b)
    if restarts_a != restarts_b:
        return -1 if restarts_a > restarts_b else 1
    created_a, created_b = _created(a), _created(b)
    if created_a is None or created_b is None:
        if created_a is None and created_b is None:
            return 0
        return -1 if created_a is None else 1
    diff = _log_bucket(created_a, now) - _log_bucket(created_b, now)
    return -1 if diff < 0 else (1 if diff > 0 else 0)


def pods_to_delete(
    pods: Sequence[Mapping[str, Any]],
    count: int,
    now: datetime,
    related_pods: Iterable[Mapping[str, Any]] | None = None,
) -> list[Mapping[str, Any]]:
    """The ``count`` pods to delete first out of ``pods``.

    ``related_pods`` are the active pods of the same owners (a Deployment's other ReplicaSets
    included): a pod shares its node with more of them ranks higher for deletion.
    """
    if count <= 0:
        return []
    on_node = Counter(_node(pod) for pod in (related_pods or pods) if is_pod_active(pod))
    ranks = {id(pod): on_node[_node(pod)] for pod in pods}

    def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
        return _compare(a, b, ranks, now)

    ordered = sorted(pods, key=functools.cmp_to_key(compare))
    return ordered[:count]
