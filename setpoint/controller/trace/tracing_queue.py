"""`TracingQueue`: the queue view a traced source's handler adds to, recording each enqueue."""

from __future__ import annotations

from typing import Any

from setpoint.api.gvk import ObjectKey
from setpoint.controller.trace.reconcile_trace import ReconcileTrace
from setpoint.controller.trace.records import Ref

__all__ = ["TracingQueue"]


class TracingQueue:
    """Adds to ``target`` (the work queue, or its low-priority view) and records an ``enqueue``
    with ``cause`` and ``own_write``; ``deduplicated`` when ``queue`` already held the key.
    Its dispatcher sets ``target``, ``cause`` and ``own_write`` for each event."""

    __slots__ = ("_is_queued", "cause", "controller", "own_write", "target", "trace")

    def __init__(self, trace: ReconcileTrace, controller: str, queue: Any) -> None:
        self.trace = trace
        self.controller = controller
        self._is_queued = getattr(queue, "is_queued", None)
        self.target: Any = queue
        self.cause: tuple[str, str | None, Ref | None, str | None] = ("event", None, None, None)
        self.own_write = False

    def add(self, key: ObjectKey, *args: Any) -> None:
        is_queued = self._is_queued
        deduplicated = bool(is_queued(key)) if is_queued is not None else False
        self.target.add(key, *args)
        self.trace.enqueue(self.controller, key, self.cause, self.own_write, deduplicated)
