"""The controller: sources feed a work queue, N workers run the reconciler on its keys.

::

    sources ──(handler + predicates)──► WorkQueue ──► worker x N ──► reconcile(request)
                                            ▲                              │
                                            └── add_after / rate-limited ◄─┘

Result handling (controller-runtime's, on one screen in :meth:`Controller._reconcile`):

============================  =================================  ==========================
reconcile outcome             queue action                       ``reconcile_total{result}``
============================  =================================  ==========================
``None`` / ``Result()``       ``forget``                         ``success``
``Result(requeue_after=T)``   ``forget`` + ``add_after(T)``      ``requeue_after``
``Result(requeue_at=when)``   ``forget`` + ``add_after(when-now)``  ``requeue_after``
``Result(requeue=True)``      ``add_rate_limited``               ``requeue``
raises ``RetryLater(after=)`` ``add_after`` / ``add_rate_limited``  ``error``
raises ``Conflict`` (409)     ``add_rate_limited``               ``error``
raises ``TerminalError``      ``forget`` (no retry)              ``error``
raises anything else          ``add_rate_limited`` (backoff)     ``error``
============================  =================================  ==========================

Logs read well: an expected retry (``RetryLater``) and a 409 from an optimistic write (the
object changed since it was read; the next reconcile reads the new version) are one INFO line;
a ``TerminalError`` is one ERROR line; any other exception is an ERROR with its traceback the
first time, then one line per retry while the key keeps failing the same way. Exceptions never
end a worker. Async reconcilers run on the event loop; sync ones run in a thread pool with the
logging context copied in.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.client.errors import AlreadyExists, Conflict, Forbidden
from setpoint.client.metrics import CounterCell, HistogramCell
from setpoint.controller import metrics
from setpoint.controller.log_context import reconcile_context
from setpoint.controller.own_writes import OwnWrites
from setpoint.controller.rate_limiters import RateLimiter
from setpoint.controller.reconcile import (
    ReconcilerLike,
    Request,
    Result,
    RetryLater,
    TerminalError,
)
from setpoint.controller.source import Source
from setpoint.controller.trace import ReconcileTrace
from setpoint.controller.workqueue import PRIORITY_LOW, QueueShutDown, WorkQueue

if TYPE_CHECKING:
    # Imported when a sync reconciler needs a pool (concurrent.futures loads it on demand).
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "DEFAULT_CACHE_SYNC_TIMEOUT",
    "DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT",
    "DEFAULT_MAX_CONCURRENT_RECONCILES",
    "OUTCOME_FAILURE_RETRY_DELAY",
    "PROGRAMMING_ERRORS",
    "SYNC_TIMEOUT_GRACE",
    "CacheSyncTimeoutError",
    "Controller",
    "ReconcileCancelledError",
    "ReconcileTimeoutError",
]

logger = logging.getLogger("setpoint.controller")

# controller-runtime defaults: one worker keeps reconciles of different keys ordered and easy to
# reason about (raise it for throughput); two minutes for caches to sync before giving up;
# thirty seconds for in-flight reconciles to finish on shutdown (the manager's default).
DEFAULT_MAX_CONCURRENT_RECONCILES = 1
DEFAULT_CACHE_SYNC_TIMEOUT = 120.0
DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT = 30.0
# Extra time the controller gives sources past cache_sync_timeout, so that a source's own
# timeout error (which says why, e.g. RBAC) wins over the controller's generic one.
SYNC_TIMEOUT_GRACE = 1.0
# When acting on a reconcile's outcome fails (e.g. a buggy custom rate limiter), the key is
# retried after this long: slow enough not to spin on the bug, soon enough not to be forgotten.
OUTCOME_FAILURE_RETRY_DELAY = 10.0

#: Exceptions that signal a bug in the reconciler rather than a failure of the world. Python has
#: no panic/error split; these are counted in ``controller_runtime_reconcile_panics_total`` (as
#: well as in the errors) so dashboards can tell broken code from a flaky API server.
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError,
    NameError,
    TypeError,
    AssertionError,
    IndexError,
    KeyError,
    ZeroDivisionError,
    RecursionError,
    NotImplementedError,
)


class CacheSyncTimeoutError(TimeoutError):
    """The controller's sources did not sync within ``cache_sync_timeout``."""


class ReconcileTimeoutError(TimeoutError):
    """A reconcile ran longer than the controller's ``reconcile_timeout``."""


class ReconcileCancelledError(RuntimeError):
    """Something the reconciler awaited was cancelled (the worker itself was not)."""


class Controller:
    """Runs a reconciler over the keys its sources produce.

    ``reconciler`` is an object with a ``reconcile(request)`` method or a function of the
    request, async or sync. Options follow controller-runtime: ``max_concurrent_reconciles``
    (default 1), ``rate_limiter`` (default per-key exponential 5 ms → 1000 s),
    ``reconcile_timeout`` (off by default), ``cache_sync_timeout`` (2 min). ``executor`` runs
    sync reconcilers (default: a pool of one thread per worker, owned by the controller).
    ``need_leader_election`` tells the manager whether to run this controller only while leader
    (default True). Two running controllers may not share a name (their metrics and logs would
    mix), unless ``skip_name_validation`` is set (e.g. one controller in two managers).

    An async reconcile that exceeds ``reconcile_timeout`` is cancelled and retried. A sync one
    cannot be interrupted (Python cannot stop a thread): the timeout is counted and logged at
    once, but the key stays in flight until the thread returns, then it is retried, so one key
    never runs twice at the same time.

    ``clock`` (default: the system clock) times delayed re-runs (``requeue_after``/``requeue_at``,
    backoff); a ``FakeClock`` makes them fire on ``advance()``. ``resync_period`` (seconds,
    default off) re-queues every key of ``resync_keys()`` at low priority that often.
    ``ignore_own_writes`` (default False, as controller-runtime: the events of the reconcile's
    own writes wake it again) drops the events that carry exactly what a write recorded in
    :attr:`own_writes` returned; see :mod:`.own_writes` for when that is unsafe.
    """

    #: Names of the controllers running in this process (see ``skip_name_validation``).
    _running_names: ClassVar[set[str]] = set()

    def __init__(
        self,
        name: str,
        reconciler: ReconcilerLike,
        *,
        sources: Sequence[Source] = (),
        max_concurrent_reconciles: int = DEFAULT_MAX_CONCURRENT_RECONCILES,
        rate_limiter: RateLimiter | None = None,
        reconcile_timeout: float | None = None,
        cache_sync_timeout: float = DEFAULT_CACHE_SYNC_TIMEOUT,
        executor: Executor | None = None,
        need_leader_election: bool = True,
        skip_name_validation: bool = False,
        clock: Clock = SYSTEM_CLOCK,
        resync_period: float | None = None,
        resync_keys: Callable[[], Any] | None = None,
        ignore_own_writes: bool = False,
    ) -> None:
        if not name:
            raise ValueError("Controller: name must not be empty (it labels logs and metrics)")
        if (
            isinstance(max_concurrent_reconciles, bool)
            or not isinstance(max_concurrent_reconciles, int)
            or max_concurrent_reconciles < 1
        ):
            raise ValueError(
                f"max_concurrent_reconciles: must be an integer >= 1, "
                f"got {max_concurrent_reconciles!r}"
            )
        if reconcile_timeout is not None and not reconcile_timeout > 0:
            raise ValueError(f"reconcile_timeout: must be > 0 seconds, got {reconcile_timeout!r}")
        if not cache_sync_timeout > 0:
            raise ValueError(f"cache_sync_timeout: must be > 0 seconds, got {cache_sync_timeout!r}")
        if resync_period is not None and not resync_period > 0:
            raise ValueError(f"resync_period: must be > 0 seconds, got {resync_period!r}")
        self.clock = clock
        #: Resource versions of this controller's writes (see :mod:`.own_writes`); None: off,
        #: the default.
        self.own_writes: OwnWrites | None = OwnWrites() if ignore_own_writes else None
        self.resync_period = resync_period
        self._resync_keys = resync_keys
        self._resync_task: asyncio.Task[None] | None = None
        # key -> the last unexpected error's signature: its traceback was logged once.
        self._last_error: dict[Request, str] = {}
        self.name = name
        self.reconciler = reconciler
        self._reconcile_fn, self._is_async = _resolve_reconcile_function(reconciler)
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.reconcile_timeout = reconcile_timeout
        self.cache_sync_timeout = cache_sync_timeout
        self.need_leader_election = need_leader_election
        self.skip_name_validation = skip_name_validation
        self._holds_name = False
        self.executor = executor
        self._own_executor: ThreadPoolExecutor | None = None
        self.queue: WorkQueue[Request] = WorkQueue(
            name, controller=name, rate_limiter=rate_limiter, clock=clock
        )
        self._sources: list[Source] = list(sources)
        self._workers: list[asyncio.Task[None]] = []
        self._started = False
        self._stopping = False
        self._stopped = asyncio.Event()
        # When a stop() stops waiting for in-flight reconciles (loop time; None: no limit).
        self._drain_deadline: float | None = None
        self._drain_deadline_moved = asyncio.Event()
        self._active = metrics.active_count(name)
        # Cells: the success count and the time are written by every reconcile.
        self._total = {
            result: CounterCell(metrics.RECONCILE_TOTAL.labels(name, result))
            for result in ("success", "error", "requeue", "requeue_after")
        }
        self._errors = metrics.RECONCILE_ERRORS.labels(name)
        self._terminal = metrics.TERMINAL_RECONCILE_ERRORS.labels(name)
        self._panics = metrics.RECONCILE_PANICS.labels(name)
        self._timeouts = metrics.RECONCILE_TIMEOUTS.labels(name)
        self._time = HistogramCell(metrics.RECONCILE_TIME.labels(name))
        #: The primary kind ``(apiVersion, kind)`` (set by the builder; None: not known).
        self.for_kind: tuple[str, str] | None = None
        #: The reconcile trace (None: off, the default; see :meth:`attach_trace`).
        self.trace: ReconcileTrace | None = None
        #: Keys whose last reconcile failed and will be retried -> its one-line error.
        self.failures: dict[Request, str] = {}

    def __repr__(self) -> str:
        return f"<Controller {self.name} workers={self.max_concurrent_reconciles}>"

    def attach_trace(self, trace: ReconcileTrace) -> None:
        """Record this controller's steps in ``trace`` (before :meth:`start`)."""
        if self._started:
            raise RuntimeError(f"controller {self.name}: attach_trace() must come before start()")
        self.trace = trace
        if self.for_kind is not None:
            trace.controllers[self.name] = self.for_kind

    @property
    def started(self) -> bool:
        """True once :meth:`start` has brought up the workers."""
        return self._started

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources feeding this controller."""
        return tuple(self._sources)

    async def watch(self, source: Source) -> None:
        """Add a source; on a running controller it starts and syncs right away."""
        if self._stopping:
            raise RuntimeError(f"controller {self.name}: cannot watch a source after stop()")
        self._sources.append(source)
        if self._started:
            self._share_own_writes(source)
            self._share_trace(source)
            await source.start(self.queue)
            await self._wait_for_sync([source])

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the sources, wait for them to sync, then start the workers.

        Raises :class:`CacheSyncTimeoutError` when a source does not sync in time (the sources
        are stopped again), so a missing RBAC permission shows up as an error, not a hang.
        """
        if self._started or self._stopping:
            raise RuntimeError(f"controller {self.name}: start() may be called only once")
        if not self.skip_name_validation:
            if self.name in Controller._running_names:
                raise ValueError(
                    f"controller name {self.name!r} is already used by a running controller; "
                    "names label metrics and logs, so they must be unique (name it with "
                    "named(...), or set skip_name_validation=True)"
                )
            Controller._running_names.add(self.name)
            self._holds_name = True
        try:
            for source in self._sources:
                self._share_own_writes(source)
                self._share_trace(source)
                await source.start(self.queue)
            await self._wait_for_sync(self._sources)
        except BaseException:
            await self._stop_sources()
            self._release_name()
            raise
        if self._stopping:
            # stop() was called while the sources started or synced; detach any source that
            # finished starting after stop() detached the others.
            await self._stop_sources()
            return
        metrics.MAX_CONCURRENT_RECONCILES.labels(self.name).set(self.max_concurrent_reconciles)
        if not self._is_async and self.executor is None:
            # One thread per worker: the loop's shared default pool may be smaller than
            # max_concurrent_reconciles, or busy with other controllers' work.
            from concurrent.futures import ThreadPoolExecutor

            self._own_executor = ThreadPoolExecutor(
                max_workers=self.max_concurrent_reconciles,
                thread_name_prefix=f"setpoint-{self.name}",
            )
        self._workers = [
            asyncio.create_task(self._worker(), name=f"setpoint-controller-{self.name}-{i}")
            for i in range(self.max_concurrent_reconciles)
        ]
        if self.resync_period is not None and self._resync_keys is not None:
            self._resync_task = asyncio.create_task(
                self._resync(self.resync_period), name=f"setpoint-controller-{self.name}-resync"
            )
        self._started = True
        logger.info(
            "controller %s started with %d worker(s)",
            self.name,
            self.max_concurrent_reconciles,
            extra={"controller": self.name},
        )

    async def _wait_for_sync(self, sources: Sequence[Source]) -> None:
        if not sources:
            return
        # Sources time out on their own first, with their diagnosis (e.g. "forbidden (RBAC)");
        # the controller's own deadline, a little later, only catches sources that hang.
        deadline = self.cache_sync_timeout + SYNC_TIMEOUT_GRACE
        try:
            async with asyncio.timeout(deadline):
                await asyncio.gather(*(s.wait_for_sync(self.cache_sync_timeout) for s in sources))
        except TimeoutError as exc:
            if isinstance(exc, CacheSyncTimeoutError):
                raise
            detail = f": {exc}" if str(exc) else ""
            raise CacheSyncTimeoutError(
                f"controller {self.name}: timed out after {self.cache_sync_timeout:g}s waiting "
                f"for caches to sync ({', '.join(map(repr, sources))}){detail}"
            ) from exc

    async def stop(
        self,
        timeout: float | None = DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,  # noqa: ASYNC109 - a drain deadline, then cancel
    ) -> None:
        """Stop taking new work, let in-flight reconciles finish for ``timeout`` s, then cancel.

        Keys still queued are dropped (they are re-listed on the next start). Idempotent; a
        second call while the first drains can only shorten the drain (e.g. ``stop(timeout=0)``
        when leadership is lost mid-shutdown cancels the in-flight reconciles at once).
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + max(timeout, 0.0)
        if self._stopping:
            if deadline is not None and (
                self._drain_deadline is None or deadline < self._drain_deadline
            ):
                self._drain_deadline = deadline
                self._drain_deadline_moved.set()
            await self._stopped.wait()
            return
        self._stopping = True
        self._drain_deadline = deadline
        if self._resync_task is not None:
            self._resync_task.cancel()
        self.queue.shut_down()
        try:
            if self._workers:
                pending = await self._drain(set(self._workers))
                if pending:
                    logger.warning(
                        "controller %s: %d reconcile(s) still running at the shutdown "
                        "deadline; cancelling",
                        self.name,
                        len(pending),
                        extra={"controller": self.name},
                    )
                    for task in pending:
                        task.cancel()
                    await asyncio.gather(*pending, return_exceptions=True)
            await self._stop_sources()
        finally:
            if self._own_executor is not None:
                # Threads of timed-out or cancelled sync reconciles cannot be interrupted;
                # don't wait for them, and drop work that never started.
                self._own_executor.shutdown(wait=False, cancel_futures=True)
                self._own_executor = None
            self._release_name()
            self._stopped.set()
            logger.info("controller %s stopped", self.name, extra={"controller": self.name})

    async def _drain(self, workers: set[asyncio.Task[None]]) -> set[asyncio.Task[None]]:
        """Wait for the workers until the drain deadline (which a later stop() may move)."""
        loop = asyncio.get_running_loop()
        pending = workers
        while pending:
            self._drain_deadline_moved.clear()
            deadline = self._drain_deadline
            remaining = None if deadline is None else max(0.0, deadline - loop.time())
            moved = asyncio.ensure_future(self._drain_deadline_moved.wait())
            try:
                done, _ = await asyncio.wait(
                    pending | {moved}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                moved.cancel()
            pending = pending - done
            if moved not in done and not done:
                break  # the deadline passed
        return pending

    def _release_name(self) -> None:
        if self._holds_name:
            Controller._running_names.discard(self.name)
            self._holds_name = False

    async def wait_stopped(self) -> None:
        """Wait until :meth:`stop` has finished."""
        await self._stopped.wait()

    async def __aenter__(self) -> Controller:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _stop_sources(self) -> None:
        for source in self._sources:
            try:
                await source.stop()
            except Exception:
                logger.exception("controller %s: stopping source %r failed", self.name, source)

    def _share_own_writes(self, source: Source) -> None:
        if hasattr(source, "own_writes") and getattr(source, "own_writes", None) is None:
            source.own_writes = self.own_writes

    def _share_trace(self, source: Source) -> None:
        if self.trace is not None and hasattr(source, "trace"):
            traced: Any = source
            traced.trace = self.trace
            traced.controller_name = self.name

    async def _resync(self, period: float) -> None:
        """Every ``period``: queue every known key at low priority (level-based safety net)."""
        assert self._resync_keys is not None
        while True:
            await self.clock.sleep(period)
            try:
                keys = list(self._resync_keys())
            except Exception:
                logger.exception("controller %s: listing keys to resync failed", self.name)
                continue
            trace = self.trace
            for key in keys:
                if trace is not None:
                    queued = self.queue.is_queued(key)
                    trace.enqueue(self.name, key, _RESYNC_CAUSE, deduplicated=queued)
                self.queue.add(key, PRIORITY_LOW)
            logger.debug("controller %s: resync queued %d key(s)", self.name, len(keys))

    # -- the loop -------------------------------------------------------------------------------

    async def _worker(self) -> None:
        queue = self.queue
        while True:
            try:
                request = await queue.get()
            except QueueShutDown:
                return
            try:
                if self._stopping:
                    return  # keys still queued at shutdown are dropped
                await self._reconcile(request)
            except Exception:
                # Never reached by reconciler errors (handled in _reconcile); this guards the
                # worker against bugs in pluggable parts, since a dead worker stops the controller.
                logger.exception(
                    "controller %s: handling the outcome of reconciling %s failed; retrying in %gs",
                    self.name, request, OUTCOME_FAILURE_RETRY_DELAY,
                    extra={"controller": self.name, "key": str(request)},
                )  # fmt: skip
                queue.add_after(request, OUTCOME_FAILURE_RETRY_DELAY)
            finally:
                queue.done(request)
            # A reconcile answered from the cache never suspends, nor does get() on a non-empty
            # queue: without this, a backlog would keep the watches, lease renewals and probes
            # from running until it is worked off.
            await asyncio.sleep(0)

    async def _reconcile(self, request: Request) -> None:
        queue = self.queue
        trace = self.trace
        self._active.count += 1
        started = time.monotonic()
        key = str(request)
        # What the trace records of the outcome (set on the way; cheap when it is off).
        result_name = "success"
        error_text: str | None = None
        backoff: float | None = None
        requeue_after: float | None = None
        with reconcile_context(self.name, key) as reconcile_id:
            if trace is not None:
                trace.reconcile_begin(
                    self.name, request, queue.last_wait, queue.num_requeues(request), reconcile_id
                )
            try:
                try:
                    result = await self._invoke(request)
                except asyncio.CancelledError as cancelled:
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise  # the worker itself is being cancelled (shutdown)
                    # A CancelledError escaping from something the reconciler awaited: an
                    # error like any other, not a reason to lose the worker.
                    raise ReconcileCancelledError(
                        f"reconcile of {request} raised CancelledError"
                    ) from cancelled
            except TerminalError as exc:
                queue.forget(request)
                result_name, error_text = "error", _one_line(exc)
                self.failures.pop(request, None)
                self._last_error.pop(request, None)
                self._errors.inc()
                self._terminal.inc()
                self._total["error"].inc()
                logger.error(
                    "reconcile %s %s failed with a terminal error (not retried): %s",
                    self.name, request, _describe(exc), extra=self._extra(key, reconcile_id),
                )  # fmt: skip
            except RetryLater as exc:
                self._errors.inc()
                self._total["error"].inc()
                result_name, error_text = "error", _one_line(exc)
                self.failures[request] = error_text
                if exc.after is None:
                    backoff = queue.add_rate_limited(request)
                    when = f"retry {queue.num_requeues(request)}"
                else:
                    queue.forget(request)
                    queue.add_after(request, exc.after)
                    backoff = exc.after
                    when = f"retrying in {exc.after:g}s"
                logger.info(
                    "reconcile %s %s: %s (%s)",
                    self.name,
                    request,
                    exc,
                    when,
                    extra=self._extra(key, reconcile_id),
                )
            except Conflict as exc:
                backoff = queue.add_rate_limited(request)
                result_name, error_text = "error", _one_line(exc)
                self.failures[request] = error_text
                self._errors.inc()
                self._total["error"].inc()
                what = (
                    "it already exists (created since it was read)"
                    if isinstance(exc, AlreadyExists)
                    else "conflict, the object changed since it was read"
                )
                logger.info(
                    "reconcile %s %s: %s (%s); retrying with the new version",
                    self.name, request, what, exc, extra=self._extra(key, reconcile_id),
                )  # fmt: skip
            except Forbidden as exc:
                # RBAC refused a request: one line naming the rule to grant, no traceback.
                backoff = queue.add_rate_limited(request)
                result_name, error_text = "error", _one_line(exc)
                self.failures[request] = error_text
                self._errors.inc()
                self._total["error"].inc()
                missing = exc.missing_permission
                logger.error(
                    "reconcile %s %s failed (retry %d): forbidden: %s%s",
                    self.name, request, queue.num_requeues(request), exc.message,
                    f"; missing permission: {missing} (declare it in the reconciler's "
                    "permissions and regenerate config/rbac)" if missing else "",
                    extra=self._extra(key, reconcile_id),
                )  # fmt: skip
            except Exception as exc:
                backoff = queue.add_rate_limited(request)
                result_name, error_text = "error", _one_line(exc)
                self.failures[request] = error_text
                self._errors.inc()
                self._total["error"].inc()
                if isinstance(exc, ReconcileTimeoutError):
                    self._timeouts.inc()
                if isinstance(exc, PROGRAMMING_ERRORS):
                    self._panics.inc()
                signature = f"{type(exc).__qualname__}: {exc}"
                repeated = self._last_error.get(request) == signature
                self._last_error[request] = signature
                logger.error(
                    "reconcile %s %s failed (retry %d): %s%s",
                    self.name, request, queue.num_requeues(request), _describe(exc),
                    " (same error as before; traceback logged once)" if repeated else "",
                    exc_info=None if repeated else exc, extra=self._extra(key, reconcile_id),
                )  # fmt: skip
            else:
                if self._last_error:
                    self._last_error.pop(request, None)
                if self.failures:
                    self.failures.pop(request, None)
                delay = None if result is None else result.delay(self.clock.now())
                if result is None or result.is_zero:
                    queue.forget(request)
                    self._total["success"].inc()
                elif delay is not None:
                    queue.forget(request)
                    queue.add_after(request, delay)
                    self._total["requeue_after"].inc()
                    result_name, requeue_after = "requeueAfter", delay
                else:
                    backoff = queue.add_rate_limited(request)
                    self._total["requeue"].inc()
                    result_name = "requeue"
            finally:
                duration = time.monotonic() - started
                self._time.observe(duration)
                self._active.count -= 1
                if trace is not None and result_name == "success":
                    trace.reconcile_end(self.name, request, reconcile_id, duration, "success")
                elif trace is not None:
                    self._trace_end(
                        trace, request, reconcile_id, duration, result_name,
                        requeue_after, error_text, backoff,
                    )  # fmt: skip

    def _trace_end(
        self,
        trace: ReconcileTrace,
        request: Request,
        reconcile_id: str,
        duration: float,
        result: str,
        requeue_after: float | None,
        error: str | None,
        backoff: float | None,
    ) -> None:
        """The trace records of a reconcile's end: the end, then the re-queue it caused."""
        trace.reconcile_end(
            self.name,
            request,
            reconcile_id,
            duration,
            result,
            requeue_after=requeue_after,
            error=error,
            backoff=backoff if result != "requeueAfter" else None,
        )
        if result == "requeueAfter":
            cause, delay = "requeueAfter", requeue_after
        elif result == "requeue":
            cause, delay = "requeue", backoff
        elif backoff is not None:
            cause, delay = "backoff", backoff
        else:
            return
        trace.enqueue(
            self.name,
            request,
            (cause, None, None, None),
            deduplicated=self.queue.is_queued(request),
            delay=delay,
        )

    def _extra(self, key: str, reconcile_id: str) -> dict[str, str]:
        """The ``extra`` of a reconcile's log lines (built only when one is written)."""
        return {"controller": self.name, "key": key, "reconcile_id": reconcile_id}

    async def _invoke(self, request: Request) -> Result | None:
        thread: asyncio.Future[Any] | None = None
        if self._is_async:
            awaitable: Awaitable[Any] = self._reconcile_fn(request)
        else:
            context = contextvars.copy_context()
            thread = asyncio.get_running_loop().run_in_executor(
                self.executor or self._own_executor, context.run, self._reconcile_fn, request
            )
            # Shielded: a timeout must not pretend the thread stopped (see below).
            awaitable = asyncio.shield(thread)
        if self.reconcile_timeout is None:
            result = await awaitable
        else:
            try:
                async with asyncio.timeout(self.reconcile_timeout) as scope:
                    result = await awaitable
            except TimeoutError as exc:
                if not scope.expired():
                    raise
                if thread is not None:
                    # A thread cannot be interrupted. Keep the key in flight until it returns,
                    # so that the retry never runs alongside it.
                    logger.warning(
                        "sync reconcile of %s exceeded reconcile_timeout (%gs); waiting for its "
                        "thread to return before retrying",
                        request, self.reconcile_timeout,
                        extra={"controller": self.name, "key": str(request)},
                    )  # fmt: skip
                    await asyncio.gather(thread, return_exceptions=True)
                raise ReconcileTimeoutError(
                    f"reconcile of {request} exceeded reconcile_timeout "
                    f"({self.reconcile_timeout:g}s)"
                ) from exc
        if result is None:
            return None
        if inspect.isawaitable(result):  # a sync callable that returned a coroutine
            result = await result
        if result is not None and not isinstance(result, Result):
            raise TypeError(f"reconciler returned {type(result).__name__}; expected Result or None")
        return result


_RESYNC_CAUSE: Final = ("resync", None, None, None)
#: Longest error text a trace record keeps.
_MAX_ERROR_TEXT = 500


def _one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, cut to a readable length."""
    text = " ".join(_describe(exc).split())
    return text if len(text) <= _MAX_ERROR_TEXT else text[: _MAX_ERROR_TEXT - 1] + "…"


def _describe(exc: BaseException) -> str:
    """``Type: message`` for one-line logs (the message alone is often ambiguous)."""
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _resolve_reconcile_function(
    reconciler: ReconcilerLike,
) -> tuple[Callable[[Request], Any], bool]:
    method = getattr(reconciler, "reconcile", None)
    fn: Any = method if callable(method) else reconciler
    if not callable(fn):
        raise TypeError(
            f"reconciler must be an async/sync function of the request or an object with a "
            f"reconcile(request) method, got {reconciler!r}"
        )
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with async __call__
    )
    return cast(Callable[[Request], Any], fn), is_async
