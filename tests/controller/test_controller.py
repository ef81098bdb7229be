"""Controller result handling, concurrency, lifecycle and logging, over an in-memory informer."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter

import pytest

from setpoint.api.gvk import ObjectKey
from setpoint.cache import Backoff, ReflectorOptions, SharedInformer
from setpoint.cache.cached_object import CachedObject
from setpoint.client.errors import Forbidden
from setpoint.client.metrics import REGISTRY
from setpoint.controller import log_context
from setpoint.controller.controller import CacheSyncTimeoutError, Controller
from setpoint.controller.handlers import EnqueueRequestForObject
from setpoint.controller.predicates import predicate_for
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request, Result, TerminalError
from setpoint.controller.source import ChannelSource, InformerSource

from ..cache.scripted_client import CONFIGMAPS, ScriptedClient
from .fake_informer import FakeInformer
from .objects import cached
from .waiting import wait_until


def sample(name: str, controller: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(name, {"controller": controller, **labels})
    return value or 0.0


def make_controller(
    name: str, reconciler: object, informer: FakeInformer, **options: object
) -> Controller:
    options.setdefault("rate_limiter", ItemExponentialFailureRateLimiter(0.001, 0.01))
    source = InformerSource(informer, EnqueueRequestForObject())
    return Controller(name, reconciler, sources=[source], **options)  # type: ignore[arg-type]


async def test_reconciles_every_object_once_and_counts_success() -> None:
    informer = FakeInformer()
    for i in range(5):
        informer.upsert(cached(f"cm{i}"))
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    controller = make_controller("t-success", reconcile, informer)
    async with controller:
        await wait_until(lambda: len(seen) == 5)
        informer.upsert(cached("cm5"))
        await wait_until(lambda: len(seen) == 6)
    assert sorted(r.name for r in seen) == [f"cm{i}" for i in range(6)]
    assert sample("controller_runtime_reconcile_total", "t-success", result="success") == 6
    assert sample("controller_runtime_max_concurrent_reconciles", "t-success") == 1


async def test_a_backlog_of_reconciles_that_never_wait_does_not_starve_the_event_loop() -> None:
    """Reconciles answered from the cache never suspend; the worker still lets other tasks (the
    watches, lease renewals, probes) run between them instead of working the whole backlog
    first."""
    informer = FakeInformer()
    for i in range(500):
        informer.upsert(cached(f"cm{i}"))
    reconciled: list[str] = []
    reconciled_when_other_task_ran: list[int] = []

    async def reconcile(request: Request) -> None:
        reconciled.append(request.name)

    async def other_task() -> None:
        while len(reconciled) < 500:
            if reconciled:
                reconciled_when_other_task_ran.append(len(reconciled))
            await asyncio.sleep(0)

    controller = make_controller("t-yield", reconcile, informer)
    other = asyncio.create_task(other_task())
    async with controller:
        await wait_until(lambda: len(reconciled) == 500)
    await other
    # The other task ran many times while the backlog was being worked through.
    assert len([n for n in reconciled_when_other_task_ran if n < 500]) > 100


async def test_requeue_after_runs_again_without_counting_an_error() -> None:
    informer = FakeInformer.holding(cached("a"))
    calls = 0

    async def reconcile(request: Request) -> Result:
        nonlocal calls
        calls += 1
        return Result(requeue_after=0.01) if calls < 3 else Result()

    async with make_controller("t-requeue-after", reconcile, informer) as controller:
        await wait_until(lambda: calls == 3)
        assert controller.queue.num_requeues(ObjectKey("default", "a")) == 0
    assert sample("controller_runtime_reconcile_total", "t-requeue-after", result="requeue_after")
    assert sample("controller_runtime_reconcile_errors_total", "t-requeue-after") == 0


async def test_errors_are_retried_with_backoff_and_logged_with_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    informer = FakeInformer.holding(cached("flaky", "ns1"))
    calls = 0
    requeues_seen: list[int] = []
    controller: Controller

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        requeues_seen.append(controller.queue.num_requeues(request))
        if calls < 4:
            raise RuntimeError("API hiccup")

    controller = make_controller("t-errors", reconcile, informer)
    with caplog.at_level(logging.ERROR, logger="setpoint.controller"):
        async with controller:
            await wait_until(lambda: calls == 4)
            await wait_until(lambda: controller.queue.num_requeues(ObjectKey("ns1", "flaky")) == 0)
    assert requeues_seen == [0, 1, 2, 3]
    assert sample("controller_runtime_reconcile_errors_total", "t-errors") == 3
    assert sample("controller_runtime_reconcile_total", "t-errors", result="error") == 3
    assert sample("controller_runtime_reconcile_panics_total", "t-errors") == 0
    failures = [r for r in caplog.records if "API hiccup" in r.getMessage()]
    assert len(failures) == 3
    assert all("ns1/flaky" in r.getMessage() for r in failures)
    assert all(getattr(r, "key", None) == "ns1/flaky" for r in failures)


async def test_terminal_error_is_not_retried() -> None:
    informer = FakeInformer.holding(cached("bad"))
    calls = 0

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        raise TerminalError("spec.size must be positive")

    async with make_controller("t-terminal", reconcile, informer):
        await wait_until(lambda: calls == 1)
        await asyncio.sleep(0.05)
    assert calls == 1
    assert sample("controller_runtime_terminal_reconcile_errors_total", "t-terminal") == 1
    assert sample("controller_runtime_reconcile_errors_total", "t-terminal") == 1


async def test_programming_errors_count_as_panics_and_keep_the_worker_alive() -> None:
    informer = FakeInformer.holding(cached("a"), cached("b"))
    done: list[str] = []

    async def reconcile(request: Request) -> None:
        if request.name == "a" and "a-failed" not in done:
            done.append("a-failed")
            raise KeyError("missing")
        done.append(request.name)

    async with make_controller("t-panics", reconcile, informer):
        await wait_until(lambda: "a" in done and "b" in done)
    assert sample("controller_runtime_reconcile_panics_total", "t-panics") == 1


async def test_requeue_flag_uses_the_rate_limiter() -> None:
    informer = FakeInformer.holding(cached("a"))
    calls = 0

    async def reconcile(request: Request) -> Result:
        nonlocal calls
        calls += 1
        return Result(requeue=calls < 2)

    async with make_controller("t-requeue", reconcile, informer):
        await wait_until(lambda: calls == 2)
    assert sample("controller_runtime_reconcile_total", "t-requeue", result="requeue") == 1


async def test_wrong_return_type_is_an_error(caplog: pytest.LogCaptureFixture) -> None:
    informer = FakeInformer.holding(cached("a"))
    calls = 0

    async def reconcile(request: Request) -> object:
        nonlocal calls
        calls += 1
        return "done"

    with caplog.at_level(logging.ERROR, logger="setpoint.controller"):
        async with make_controller("t-bad-return", reconcile, informer):
            await wait_until(lambda: calls >= 2)
    assert "expected Result or None" in caplog.text


async def test_sync_reconciler_runs_in_a_thread_with_the_log_context() -> None:
    informer = FakeInformer.holding(cached("a", "ns1"))
    seen: list[tuple[int, dict[str, str]]] = []

    def reconcile(request: Request) -> None:
        seen.append((threading.get_ident(), log_context.current()))

    async with make_controller("t-sync", reconcile, informer):
        await wait_until(lambda: len(seen) == 1)
    thread, context = seen[0]
    assert thread != threading.get_ident()
    assert context["controller"] == "t-sync"
    assert context["key"] == "ns1/a"
    assert context["reconcile_id"]


async def test_reconciler_object_with_async_method() -> None:
    informer = FakeInformer.holding(cached("a"))

    class Reconciler:
        def __init__(self) -> None:
            self.requests: list[Request] = []

        async def reconcile(self, request: Request) -> Result | None:
            self.requests.append(request)
            return None

    reconciler = Reconciler()
    async with make_controller("t-object", reconciler, informer):
        await wait_until(lambda: len(reconciler.requests) == 1)


async def test_reconcile_timeout_is_an_error_and_retried() -> None:
    informer = FakeInformer.holding(cached("slow"))
    calls = 0

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(10)

    async with make_controller("t-timeout", reconcile, informer, reconcile_timeout=0.05):
        await wait_until(lambda: calls == 2)
    assert sample("controller_runtime_reconcile_timeouts_total", "t-timeout") == 1


async def test_workers_run_in_parallel_but_never_on_the_same_key() -> None:
    informer = FakeInformer()
    for i in range(4):
        informer.upsert(cached(f"k{i}"))
    running: Counter[str] = Counter()
    overlap: list[str] = []
    peak = 0
    total = 0

    async def reconcile(request: Request) -> None:
        nonlocal peak, total
        running[request.name] += 1
        if running[request.name] > 1:
            overlap.append(request.name)
        peak = max(peak, sum(running.values()))
        informer.upsert(cached(request.name, resource_version=str(total)))  # re-add mid-flight
        await asyncio.sleep(0.005)
        running[request.name] -= 1
        total += 1

    async with make_controller("t-parallel", reconcile, informer, max_concurrent_reconciles=4):
        await wait_until(lambda: total >= 40)
    assert overlap == []
    assert peak > 1


async def test_start_fails_when_caches_do_not_sync() -> None:
    informer = FakeInformer(synced=False)
    controller = make_controller("t-nosync", lambda r: None, informer, cache_sync_timeout=0.05)
    with pytest.raises(CacheSyncTimeoutError, match="t-nosync"):
        await controller.start()
    assert informer.handlers == []  # the source was stopped again


async def test_start_waits_for_sync_before_reconciling() -> None:
    informer = FakeInformer.holding(cached("a"), synced=False)
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    controller = make_controller("t-waitsync", reconcile, informer)
    starting = asyncio.create_task(controller.start())
    await asyncio.sleep(0.02)
    assert not starting.done() and seen == []
    informer.mark_synced()
    await asyncio.wait_for(starting, 5)
    await wait_until(lambda: len(seen) == 1)
    await controller.stop()


async def test_stop_lets_in_flight_reconciles_finish() -> None:
    informer = FakeInformer.holding(cached("a"))
    started = asyncio.Event()
    finished: list[str] = []

    async def reconcile(request: Request) -> None:
        started.set()
        await asyncio.sleep(0.05)
        finished.append(request.name)

    controller = make_controller("t-drain", reconcile, informer)
    await controller.start()
    await asyncio.wait_for(started.wait(), 5)
    await controller.stop(timeout=5)
    assert finished == ["a"]
    informer.upsert(cached("b"))  # after stop: ignored
    await asyncio.sleep(0.01)
    assert finished == ["a"]


async def test_stop_cancels_reconciles_that_outlive_the_timeout() -> None:
    informer = FakeInformer.holding(cached("a"))
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(request: Request) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller = make_controller("t-cancel", reconcile, informer)
    await controller.start()
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(controller.stop(timeout=0.02), 5)
    assert cancelled.is_set()
    assert sample("controller_runtime_active_workers", "t-cancel") == 0


async def test_predicates_filter_events() -> None:
    informer = FakeInformer.holding(cached("keep"), cached("drop"))
    seen: list[str] = []

    async def reconcile(request: Request) -> None:
        seen.append(request.name)

    source = InformerSource(
        informer, EnqueueRequestForObject(), [predicate_for(lambda o: o.name != "drop")]
    )
    controller = Controller("t-predicates", reconcile, sources=[source])
    async with controller:
        await wait_until(lambda: seen == ["keep"])
        informer.upsert(cached("drop", resource_version="2"))
        informer.upsert(cached("keep", resource_version="2"))
        await wait_until(lambda: seen == ["keep", "keep"])


async def test_log_records_carry_controller_key_and_reconcile_id() -> None:
    informer = FakeInformer.holding(cached("a", "ns1"))
    records: list[logging.LogRecord] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Capture()
    handler.addFilter(log_context.LogContextFilter())
    user_logger = logging.getLogger("tests.controller.user")
    user_logger.addHandler(handler)
    user_logger.setLevel(logging.INFO)
    adapter = log_context.ReconcileLoggerAdapter(user_logger, {})

    async def reconcile(request: Request) -> None:
        user_logger.info("plain line")
        adapter.info("adapted line")

    try:
        async with make_controller("t-logs", reconcile, informer):
            await wait_until(lambda: len(records) == 2)
    finally:
        user_logger.removeHandler(handler)
    plain, adapted = records
    for record in records:
        assert getattr(record, "controller", None) == "t-logs"
        assert getattr(record, "key", None) == "ns1/a"
    assert getattr(plain, "reconcile_id", "") == getattr(adapted, "reconcile_id", "x")
    assert "key=ns1/a" in adapted.getMessage()
    assert log_context.current()["controller"] == ""  # nothing leaks out of the reconcile


def test_invalid_options_are_rejected_with_the_field_name() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Controller("x", lambda r: None, max_concurrent_reconciles=0)
    with pytest.raises(ValueError, match="reconcile_timeout"):
        Controller("x", lambda r: None, reconcile_timeout=0)
    with pytest.raises(ValueError, match="name"):
        Controller("", lambda r: None)
    with pytest.raises(TypeError, match="reconcile"):
        Controller("x", 42)  # type: ignore[arg-type]


def test_result_validation() -> None:
    from datetime import timedelta

    assert Result(requeue_after=timedelta(seconds=2)).requeue_after_seconds == 2.0
    assert Result().is_zero
    # A deadline computed as `schedule - now` that already passed means "now", not an error.
    assert Result(requeue_after=-1).requeue_after_seconds == 0.0
    assert not Result(requeue_after=-1).is_zero
    with pytest.raises(TypeError, match="requeue_after"):
        Result(requeue_after="5s")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=float("inf"))
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=float("nan"))


async def test_sync_reconcile_timeout_never_overlaps_with_its_own_retry() -> None:
    informer = FakeInformer.holding(cached("slow-sync"))
    running = 0
    overlaps = 0
    calls = 0
    lock = threading.Lock()

    def reconcile(request: Request) -> None:
        nonlocal running, overlaps, calls
        with lock:
            running += 1
            calls += 1
            overlaps += running > 1
            first = calls == 1
        if first:
            threading.Event().wait(0.2)  # outlives the timeout
        with lock:
            running -= 1

    async with make_controller("t-sync-timeout", reconcile, informer, reconcile_timeout=0.05):
        await wait_until(lambda: calls >= 2)
    assert overlaps == 0
    assert sample("controller_runtime_reconcile_timeouts_total", "t-sync-timeout") == 1


async def test_channel_source_delivers_generic_events() -> None:
    channel: asyncio.Queue[CachedObject] = asyncio.Queue()
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    source = ChannelSource(channel, EnqueueRequestForObject())
    async with Controller("t-channel", reconcile, sources=[source]):
        await channel.put(cached("external", "ns1"))
        await wait_until(lambda: seen == [ObjectKey("ns1", "external")])


async def test_watch_on_a_running_controller_starts_the_source_at_once() -> None:
    first, second = FakeInformer(), FakeInformer()
    first.upsert(cached("a"))
    second.upsert(cached("b"))
    seen: set[str] = set()

    async def reconcile(request: Request) -> None:
        seen.add(request.name)

    controller = make_controller("t-late-watch", reconcile, first)
    async with controller:
        await wait_until(lambda: seen == {"a"})
        await controller.watch(InformerSource(second, EnqueueRequestForObject()))
        await wait_until(lambda: seen == {"a", "b"})
    with pytest.raises(RuntimeError, match="after stop"):
        await controller.watch(InformerSource(second, EnqueueRequestForObject()))
    with pytest.raises(RuntimeError, match="only once"):
        await controller.start()


async def test_two_running_controllers_may_not_share_a_name() -> None:
    informer = FakeInformer()
    first = make_controller("t-same-name", lambda r: None, informer)
    second = make_controller("t-same-name", lambda r: None, informer)
    async with first:
        with pytest.raises(ValueError, match="already used"):
            await second.start()
        await second.stop()  # must not release the name the first one holds
        third = make_controller("t-same-name", lambda r: None, informer)
        with pytest.raises(ValueError, match="already used"):
            await third.start()
        twin = make_controller("t-same-name", lambda r: None, informer, skip_name_validation=True)
        async with twin:
            pass
    reused = make_controller("t-same-name", lambda r: None, informer)
    async with reused:  # the name is free again once the first stopped
        pass


async def test_cancelled_error_from_inside_a_reconcile_does_not_kill_the_worker() -> None:
    informer = FakeInformer.holding(cached("a"))
    calls = 0

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            inner = asyncio.create_task(asyncio.sleep(10))
            await asyncio.sleep(0)
            inner.cancel()
            await inner  # raises CancelledError into the reconcile

    async with make_controller("t-inner-cancel", reconcile, informer):
        await wait_until(lambda: calls == 2)  # the only worker survived and retried
    assert sample("controller_runtime_reconcile_errors_total", "t-inner-cancel") == 1


class BrokenRateLimiter(ItemExponentialFailureRateLimiter):
    """A custom rate limiter with a bug: its first answer is not a usable delay."""

    def when(self, item: object) -> float:
        if self.num_requeues(item) == 0:
            super().when(item)
            return float("nan")
        return super().when(item)


async def test_a_broken_custom_rate_limiter_does_not_kill_the_worker(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Rate limiters are pluggable: a bug in one must cost a retry, not the only worker (which
    # would silently stop the whole controller).
    informer = FakeInformer.holding(cached("a"))
    seen: list[str] = []

    async def reconcile(request: Request) -> None:
        seen.append(request.name)
        if request.name == "a" and seen.count("a") == 1:
            raise RuntimeError("first try fails")

    controller = make_controller(
        "t-broken-limiter", reconcile, informer, rate_limiter=BrokenRateLimiter(0.001, 0.01)
    )
    with caplog.at_level(logging.ERROR, logger="setpoint.controller"):
        async with controller:
            await wait_until(lambda: "a" in seen)
            informer.upsert(cached("b"))
            await wait_until(lambda: "b" in seen)
    assert "default/a" in caplog.text


async def test_stop_while_start_waits_for_sync_leaves_the_controller_stopped() -> None:
    # A shutdown signal can arrive while the caches are still syncing; the start that then
    # completes must not bring workers up behind the back of the stop that already returned.
    informer = FakeInformer.holding(cached("a"), synced=False)
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    controller = make_controller("t-stop-in-start", reconcile, informer)
    starting = asyncio.create_task(controller.start())
    await wait_until(lambda: len(informer.handlers) == 1)  # the source is attached
    await controller.stop(timeout=1)
    informer.mark_synced()
    await asyncio.wait_for(starting, 5)
    assert not controller.started
    informer.upsert(cached("b"))
    await asyncio.sleep(0.01)
    assert seen == []


async def test_sync_timeout_of_a_forbidden_kind_says_forbidden_at_controller_start() -> None:
    # controller-runtime #1653: a missing RBAC rule must show up as "forbidden" in the error
    # that fails the start, not as a bare timeout.
    client = ScriptedClient()
    message = 'configmaps is forbidden: User "op" cannot list resource "configmaps"'
    status = {"kind": "Status", "code": 403, "reason": "Forbidden", "message": message}
    client.queue_list(*[Forbidden(status)] * 1000)
    options = ReflectorOptions(backoff=lambda: Backoff(initial=0.001, maximum=0.005))
    informer = SharedInformer(client, CONFIGMAPS, options=options)
    informer.start()
    try:
        source = InformerSource(informer, EnqueueRequestForObject())
        controller = Controller(
            "t-forbidden", lambda r: None, sources=[source], cache_sync_timeout=0.2
        )
        with pytest.raises(CacheSyncTimeoutError) as caught:
            await controller.start()
    finally:
        await informer.stop()
    assert "t-forbidden" in str(caught.value)
    assert "forbidden (RBAC)" in str(caught.value)


async def test_a_second_stop_with_a_shorter_timeout_cancels_the_draining_reconciles() -> None:
    # A manager that loses leadership while controllers drain must be able to cut the drain
    # short: stop(timeout=0) during a graceful stop(timeout=60) cancels what is in flight.
    informer = FakeInformer.holding(cached("a"))
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(request: Request) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller = make_controller("t-abort-drain", reconcile, informer)
    await controller.start()
    await asyncio.wait_for(started.wait(), 5)
    graceful = asyncio.create_task(controller.stop(timeout=60))
    await asyncio.sleep(0.01)
    assert not graceful.done()
    await asyncio.wait_for(controller.stop(timeout=0), 5)
    assert cancelled.is_set()
    await asyncio.wait_for(graceful, 5)


async def test_a_second_stop_with_a_longer_timeout_does_not_extend_the_drain() -> None:
    informer = FakeInformer.holding(cached("a"))
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(request: Request) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller = make_controller("t-no-extend", reconcile, informer)
    await controller.start()
    await asyncio.wait_for(started.wait(), 5)
    first = asyncio.create_task(controller.stop(timeout=0.05))
    await asyncio.sleep(0)
    await asyncio.wait_for(controller.stop(timeout=60), 5)
    assert cancelled.is_set() and first.done()


async def test_active_workers_counts_reconciles_in_flight_across_same_named_controllers() -> None:
    release = asyncio.Event()
    running: list[str] = []

    async def reconcile(request: Request) -> None:
        running.append(request.name)
        await release.wait()

    first = make_controller(
        "t-active", reconcile, FakeInformer.holding(cached("a")), skip_name_validation=True
    )
    second = make_controller(
        "t-active",
        reconcile,
        FakeInformer.holding(cached("b"), cached("c")),
        skip_name_validation=True,
        max_concurrent_reconciles=2,
    )
    async with first, second:
        await wait_until(lambda: len(running) == 3)
        assert sample("controller_runtime_active_workers", "t-active") == 3
        release.set()
        await wait_until(lambda: sample("controller_runtime_active_workers", "t-active") == 0)
