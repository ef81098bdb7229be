"""The reconcile trace: a bounded, in-memory record of why each reconcile ran and what it did.

Off unless asked for (``Manager(trace_capacity=N)``, ``setpoint run --trace``; on by default
under ``setpoint dev`` and ``setpoint demo``). When on, the runtime appends one record to a
ring (:class:`~setpoint.api.record_ring.RecordRing`) at each step an event takes through a
controller:

- ``watch``: a watch event delivered to one of the controller's sources, and whether it carries
  the controller's own write;
- ``enqueue``: a key queued, with its cause — the event and the handler or mapping function
  that produced the key, a requeue, a backoff, a resync — and whether it was already queued;
- ``dequeue``: a worker took the key, after how long in the queue;
- ``reconcileStart`` / ``reconcileEnd``: the reconcile, its duration, result, one-line error and
  backoff;
- ``write``: each write the reconcile issued through ``ctx.client``, with a JSON patch from
  the cached object to the server's answer;
- ``event``: each Kubernetes Event it recorded.

Records of one reconcile share its ``reconcileId`` (the id its log lines carry, see
:mod:`setpoint.controller.log_context`). Secret values never enter the ring
(:mod:`setpoint.api.secret_redaction`). The manager serves the ring on its metrics endpoint
(:mod:`setpoint.manager.debug_endpoints`). When tracing is off every hook is a single
``is not None`` check.
"""

from __future__ import annotations

from setpoint.controller.trace.reconcile_trace import DEFAULT_TRACE_CAPACITY, ReconcileTrace
from setpoint.controller.trace.records import TraceRecord
from setpoint.controller.trace.tracing_queue import TracingQueue

__all__ = ["DEFAULT_TRACE_CAPACITY", "ReconcileTrace", "TraceRecord", "TracingQueue"]
