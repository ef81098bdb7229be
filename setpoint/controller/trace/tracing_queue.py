"""`TracingQueue`: the queue view a traced source's handler adds to, recording each enqueue."""

from __future__ import annotations

from typing import Any

from setpoint.api.gvk import ObjectKey
from setpoint.controller.trace.reconcile_trace import ReconcileTrace
from setpoint.controller.trace.records import Ref

__all__ = ["TracingQueue"]


class TracingQueue:
    """Adds to ``target`` (the work queue, or its low-priority view) and records an ``enqueue``
    with ``cause``; ``deduplicated`` when ``queue`` already held the key."""

    __slots__ = ("cause", "controller", "own_write", "queue", "target", "trace")

    def __init__(
        self,
        trace: ReconcileTrace,
        controller: str,
        queue: Any,
        target: Any,
        cause: tuple[str, str | None, Ref | None, str | None],
        own_write: bool,
    ) -> None:
        self.trace = trace
        self.controller = controller
        self.queue = queue
        self.target = target
        self.cause = cause
        self.own_write = own_write

    def add(self, key: ObjectKey, *args: Any) -> None:
        is_queued = getattr(self.queue, "is_queued", None)
        deduplicated = bool(is_queued(key)) if is_queued is not None else False
        self.target.add(key, *args)
        self.trace.enqueue(
            self.controller, key, self.cause, own_write=self.own_write, deduplicated=deduplicated
        )
