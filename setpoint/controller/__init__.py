"""Work queue, controllers, builder, predicates, event recorder and finalizer helpers.

The write side of the runtime, in the order an event travels:

- :mod:`~setpoint.controller.source` — where events come from (a kind in the shared cache, an
  informer, a channel of your own);
- :mod:`~setpoint.controller.predicates` — which events count;
- :mod:`~setpoint.controller.handlers` — which keys an event enqueues (the object, its owner, or
  whatever a function says);
- :mod:`~setpoint.controller.workqueue` — dedup, one worker per key, delays and backoff
  (:mod:`~setpoint.controller.rate_limiters`);
- :mod:`~setpoint.controller.controller` — workers calling your reconciler and acting on its
  :class:`Result` (:mod:`~setpoint.controller.reconcile`);
- :mod:`~setpoint.controller.builder` — the fluent wiring of all of the above for a manager.

Helpers for reconcilers: :mod:`~setpoint.controller.finalizers`,
:mod:`~setpoint.controller.create_or_update`, :mod:`~setpoint.controller.recorder` (Events),
owner references and status conditions (re-exported from :mod:`setpoint.api`), and
:mod:`~setpoint.controller.log_context` (controller/key/reconcile id on every log line).
Metrics use controller-runtime's names (:mod:`~setpoint.controller.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from setpoint.api.lazy_exports import load_lazy_export
from setpoint.controller import log_context
from setpoint.controller.builder import Builder, ManagerLike
from setpoint.controller.controller import (
    DEFAULT_CACHE_SYNC_TIMEOUT,
    DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
    DEFAULT_MAX_CONCURRENT_RECONCILES,
    CacheSyncTimeoutError,
    Controller,
    ReconcileCancelledError,
    ReconcileTimeoutError,
)
from setpoint.controller.create_or_update import (
    OperationResult,
    create_or_patch,
    create_or_update,
)
from setpoint.controller.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    Handler,
)
from setpoint.controller.predicates import (
    AnnotationsChanged,
    FunctionPredicate,
    GenerationChanged,
    LabelsChanged,
    LabelSelectorPredicate,
    Predicate,
    ResourceVersionChanged,
    and_,
    not_,
    or_,
    predicate_for,
)
from setpoint.controller.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    client_go_default_rate_limiter,
    default_controller_rate_limiter,
)
from setpoint.controller.reconcile import Reconciler, Request, Result, RetryLater, TerminalError
from setpoint.controller.source import ChannelSource, InformerSource, KindSource, Source
from setpoint.controller.workqueue import QueueShutDown, WorkQueue

if TYPE_CHECKING:
    from setpoint.api.conditions import (
        find_status_condition,
        is_condition_true,
        remove_status_condition,
        set_status_condition,
    )
    from setpoint.api.owners import (
        AlreadyOwnedError,
        controller_of,
        controller_reference,
        is_controlled_by,
        owner_reference,
        set_controller_reference,
        set_owner_reference,
    )
    from setpoint.controller.finalizers import (
        FinalizerOutcome,
        FinalizerResult,
        Finalizers,
        ensure_finalizer,
        handle_finalizer,
        remove_finalizer,
    )
    from setpoint.controller.recorder import EventRecorder

# Helpers for reconcilers (public name -> the module that defines it) are imported on first use: a
# program pays only for those it uses (setpoint run's start-up). Not create_or_update: a function
# of that name would lose to its module, which the import system sets on the package when
# something imports it first.
_LAZY_EXPORTS: dict[str, str] = {
    "find_status_condition": "setpoint.api.conditions",
    "is_condition_true": "setpoint.api.conditions",
    "remove_status_condition": "setpoint.api.conditions",
    "set_status_condition": "setpoint.api.conditions",
    "AlreadyOwnedError": "setpoint.api.owners",
    "controller_of": "setpoint.api.owners",
    "controller_reference": "setpoint.api.owners",
    "is_controlled_by": "setpoint.api.owners",
    "owner_reference": "setpoint.api.owners",
    "set_controller_reference": "setpoint.api.owners",
    "set_owner_reference": "setpoint.api.owners",
    "FinalizerOutcome": "setpoint.controller.finalizers",
    "FinalizerResult": "setpoint.controller.finalizers",
    "Finalizers": "setpoint.controller.finalizers",
    "ensure_finalizer": "setpoint.controller.finalizers",
    "handle_finalizer": "setpoint.controller.finalizers",
    "remove_finalizer": "setpoint.controller.finalizers",
    "EventRecorder": "setpoint.controller.recorder",
}

__all__ = [
    "DEFAULT_CACHE_SYNC_TIMEOUT",
    "DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT",
    "DEFAULT_MAX_CONCURRENT_RECONCILES",
    "AlreadyOwnedError",
    "AnnotationsChanged",
    "BucketRateLimiter",
    "Builder",
    "CacheSyncTimeoutError",
    "ChannelSource",
    "Controller",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventRecorder",
    "FinalizerOutcome",
    "FinalizerResult",
    "Finalizers",
    "FunctionPredicate",
    "GenerationChanged",
    "Handler",
    "InformerSource",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "KindSource",
    "LabelSelectorPredicate",
    "LabelsChanged",
    "ManagerLike",
    "MaxOfRateLimiter",
    "OperationResult",
    "Predicate",
    "QueueShutDown",
    "RateLimiter",
    "ReconcileCancelledError",
    "ReconcileTimeoutError",
    "Reconciler",
    "Request",
    "ResourceVersionChanged",
    "Result",
    "RetryLater",
    "Source",
    "TerminalError",
    "WorkQueue",
    "and_",
    "client_go_default_rate_limiter",
    "controller_of",
    "controller_reference",
    "create_or_patch",
    "create_or_update",
    "default_controller_rate_limiter",
    "ensure_finalizer",
    "find_status_condition",
    "handle_finalizer",
    "is_condition_true",
    "is_controlled_by",
    "log_context",
    "not_",
    "or_",
    "owner_reference",
    "predicate_for",
    "remove_finalizer",
    "remove_status_condition",
    "set_controller_reference",
    "set_owner_reference",
    "set_status_condition",
]


def __getattr__(name: str) -> Any:
    return load_lazy_export(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_EXPORTS})
