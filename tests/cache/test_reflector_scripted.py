"""Reflector and informer logic driven by scripted list/watch bytes (see scripted_client.py).

The same behaviours are checked against the real local cluster in test_reflector_cluster.py;
here the rare situations (410 in the middle of a stream, errors, silent streams) are forced.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator

import pytest

from setpoint.cache import (
    Backoff,
    CachedObject,
    CacheSyncTimeout,
    FunctionEventHandler,
    ReflectorOptions,
    SharedInformer,
)
from setpoint.cache.gc_freeze import GC_FREEZE_MIN_OBJECTS
from setpoint.client.errors import ConnectionFailed, Forbidden, Gone, ServerError

from .objects import bookmark_line, configmap, event_line, expired_line, list_body
from .recording import RecordingHandler, until
from .scripted_client import CONFIGMAPS, ScriptedClient

FAST = ReflectorOptions(backoff=lambda: Backoff(initial=0.001, maximum=0.005))


def status(code: int, reason: str, message: str) -> dict[str, object]:
    return {"kind": "Status", "status": "Failure", "code": code, "reason": reason,
            "message": message}  # fmt: skip


@pytest.fixture
async def running() -> AsyncIterator[list[SharedInformer]]:
    """Informers registered here are stopped after the test."""
    informers: list[SharedInformer] = []
    yield informers
    for informer in informers:
        await informer.stop()


def start(
    client: ScriptedClient,
    running: list[SharedInformer],
    options: ReflectorOptions = FAST,
    **kwargs: object,
) -> tuple[SharedInformer, RecordingHandler]:
    informer = SharedInformer(client, CONFIGMAPS, options=options, **kwargs)  # type: ignore[arg-type]
    handler = RecordingHandler()
    informer.add_event_handler(handler)
    informer.start()
    running.append(informer)
    return informer, handler


async def test_initial_sync_lists_all_pages_then_watches_from_the_list_version(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(
        list_body([configmap("a"), configmap("b")], rv="10", continue_token="page2"),
        list_body([configmap("c")], rv="10"),
    )
    informer, handler = start(client, running, label_selector="app=x", field_selector="a=b")
    await informer.wait_for_sync(timeout=10)
    assert informer.has_synced
    assert [c["continue_token"] for c in client.list_calls] == [None, "page2"]
    assert {c["limit"] for c in client.list_calls} == {500}
    assert client.list_calls[0]["label_selector"] == "app=x"
    assert client.list_calls[0]["field_selector"] == "a=b"
    assert handler.events == [
        ("add", "a", "1", True),
        ("add", "b", "1", True),
        ("add", "c", "1", True),
    ]
    await until(lambda: len(client.watch_calls) == 1, "the watch")
    watch = client.watch_calls[0]
    assert watch["resource_version"] == "10"
    assert watch["allow_bookmarks"] is True
    assert 300 <= watch["timeout_seconds"] <= 600
    assert watch["label_selector"] == "app=x"
    assert watch["field_selector"] == "a=b"


async def test_events_update_the_store_and_reach_handlers(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([configmap("a")], rv="10"))
    client.queue_watch(
        event_line("ADDED", configmap("b", rv="11")),
        event_line("MODIFIED", configmap("a", rv="12", data={"k": "new"})),
        event_line("DELETED", configmap("b", rv="13")),
        bookmark_line("20"),
    )
    informer, handler = start(client, running)
    await until(lambda: len(client.watch_calls) >= 2, "a re-watch after the stream ended")
    assert handler.events[1:] == [
        ("add", "b", "11", False),
        ("update", "a", "1", "12"),
        ("delete", "b", "13"),
    ]
    assert informer.store.get_by_name("a", "default").get("data") == {"k": "new"}  # type: ignore[union-attr]
    assert informer.store.get_by_name("b", "default") is None
    # The stream ended normally: watch again from the bookmark's version, without a relist.
    assert client.watch_calls[1]["resource_version"] == "20"
    assert len(client.list_calls) == 1


async def test_watched_objects_are_stored_exactly_whatever_their_metadata(
    running: list[SharedInformer],
) -> None:
    usual = configmap("a", rv="11", labels={"app": "x"}, data={"k": "v"})
    unusual = configmap("b", rv="12", selfLink="/api/v1/namespaces/default/configmaps/b")
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    client.queue_watch(event_line("ADDED", usual), event_line("ADDED", unusual))
    informer, handler = start(client, running)
    await until(lambda: len(handler.events) >= 2, "both events delivered")
    for obj in (usual, unusual):
        stored = informer.store.get_by_name(obj["metadata"]["name"], "default")
        assert stored == CachedObject.from_dict(obj)
        assert stored is not None and stored.to_dict() == CachedObject.from_dict(obj).to_dict()
    b = informer.store.get_by_name("b", "default")
    assert b is not None and b.metadata["selfLink"] == "/api/v1/namespaces/default/configmaps/b"


async def test_replayed_events_after_a_reconnect_are_not_delivered_twice(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    client.queue_watch(event_line("ADDED", configmap("a", rv="11")))
    client.queue_watch(
        event_line("ADDED", configmap("a", rv="11")),
        event_line("MODIFIED", configmap("a", rv="12")),
    )
    _, handler = start(client, running)
    await until(lambda: len(client.watch_calls) >= 3, "two re-watches")
    assert handler.events == [("add", "a", "11", False), ("update", "a", "11", "12")]


async def test_expired_error_event_relists_and_diffs_against_the_store(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(
        list_body([configmap("keep"), configmap("change"), configmap("vanish")], rv="10"),
        # While we were not watching: "change" changed, "vanish" was deleted, "new" was created.
        list_body([configmap("keep"), configmap("change", rv="30"), configmap("new", rv="31")],
                  rv="40"),
    )  # fmt: skip
    client.queue_watch(expired_line("10"))
    informer, handler = start(client, running)
    await until(lambda: len(client.list_calls) == 2 and len(client.watch_calls) == 2, "relist")
    assert handler.events[3:] == [
        ("update", "change", "1", "30"),
        ("add", "new", "31", False),
        ("delete", "vanish", "1"),
    ]
    assert sorted(o.name for o in informer.store.list()) == ["change", "keep", "new"]
    assert client.watch_calls[1]["resource_version"] == "40"


async def test_gone_when_opening_the_watch_relists(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([configmap("a")], rv="10"), list_body([], rv="50"))
    client.queue_watch(Gone(status(410, "Expired", "too old resource version: 10 (45)")))
    informer, handler = start(client, running)
    await until(lambda: len(client.watch_calls) == 2, "the watch after the relist")
    assert handler.events == [("add", "a", "1", True), ("delete", "a", "1")]
    assert len(informer.store) == 0
    assert client.watch_calls[1]["resource_version"] == "50"


async def test_recreated_object_during_the_gap_is_a_delete_then_an_add(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(
        list_body([configmap("a", uid="first")], rv="10"),
        list_body([configmap("a", uid="second", rv="44")], rv="50"),
    )
    client.queue_watch(expired_line())
    informer, handler = start(client, running)
    await until(lambda: len(client.list_calls) == 2 and len(client.watch_calls) == 2, "relist")
    assert handler.events[1:] == [("delete", "a", "1"), ("add", "a", "44", False)]
    assert informer.store.get_by_name("a", "default").uid == "second"  # type: ignore[union-attr]


async def test_list_errors_are_retried_with_backoff(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    client.queue_list(
        ConnectionFailed("connection refused"),
        ServerError(status(500, "InternalError", "etcd is sad")),
        list_body([configmap("a")], rv="10"),
    )
    informer, handler = start(client, running)
    await informer.wait_for_sync(timeout=10)
    assert len(client.list_calls) == 3
    assert informer.last_sync_error is None
    assert handler.names("add") == ["a"]


async def test_watch_errors_rewatch_from_the_last_version_without_relisting(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    client.queue_watch(event_line("ADDED", configmap("a", rv="11")), ConnectionFailed("reset"))
    client.queue_watch(ServerError(status(503, "ServiceUnavailable", "try later")))
    client.queue_watch(
        event_line("ERROR", status(500, "InternalError", "watch broke")),
    )
    _, handler = start(client, running)
    await until(lambda: len(client.watch_calls) >= 4, "re-watches")
    assert [c["resource_version"] for c in client.watch_calls[:4]] == ["10", "11", "11", "11"]
    assert len(client.list_calls) == 1
    assert handler.events == [("add", "a", "11", False)]


async def test_a_silent_stream_is_cut_and_rewatched(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    client.queue_watch(bookmark_line("15"), then_hang=True)
    options = ReflectorOptions(idle_timeout=0.05, backoff=FAST.backoff)
    start(client, running, options=options)
    await until(lambda: len(client.watch_calls) >= 2, "the re-watch of a silent stream")
    assert client.watch_calls[1]["resource_version"] == "15"
    assert len(client.list_calls) == 1
    await until(lambda: client.open_watches <= 1, "the silent stream to be closed")


async def test_a_stream_with_lines_coming_is_never_cut_as_idle(
    running: list[SharedInformer],
) -> None:
    """Lines every 0.05 s for 1.5 s, three times the idle timeout: one watch throughout."""
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    lines = [bookmark_line(str(11 + i)) for i in range(30)]
    client.queue_watch(*lines, then_hang=True, pace=0.05)
    options = ReflectorOptions(idle_timeout=0.5, backoff=FAST.backoff)
    start(client, running, options=options)
    await until(lambda: client.watch_calls, "the watch")
    await asyncio.sleep(1.4)
    assert len(client.watch_calls) == 1
    await until(lambda: len(client.watch_calls) >= 2, "the re-watch once the stream went silent")
    assert client.watch_calls[1]["resource_version"] == "40"


async def test_undecodable_events_are_skipped_and_the_watch_goes_on(
    running: list[SharedInformer], caplog: pytest.LogCaptureFixture
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    bad = configmap("bad", rv="11")
    bad["metadata"]["labels"] = {"a": 1}
    client.queue_watch(event_line("ADDED", bad), event_line("ADDED", configmap("good", rv="12")))
    with caplog.at_level(logging.ERROR):
        _, handler = start(client, running)
        await until(lambda: len(client.watch_calls) >= 2, "the re-watch")
    assert handler.events == [("add", "good", "12", False)]
    assert "skipping ADDED event at resourceVersion 11" in caplog.text
    assert client.watch_calls[1]["resource_version"] == "12"


async def test_a_failing_handler_is_logged_and_others_still_get_events(
    running: list[SharedInformer], caplog: pytest.LogCaptureFixture
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([configmap("a")], rv="10"))
    client.queue_watch(event_line("MODIFIED", configmap("a", rv="11")), then_hang=True)

    def explode(obj: CachedObject, initial: bool) -> None:
        raise RuntimeError("handler bug")

    def divide_by_zero(old: CachedObject, new: CachedObject) -> None:
        1 / 0  # noqa: B018 - the handler bug under test

    informer = SharedInformer(client, CONFIGMAPS, options=FAST)
    informer.add_event_handler(FunctionEventHandler(add=explode, update=divide_by_zero))
    good = RecordingHandler()
    informer.add_event_handler(good)
    with caplog.at_level(logging.ERROR):
        informer.start()
        running.append(informer)
        await until(lambda: len(good.events) == 2, "both events")
    assert good.events == [("add", "a", "1", True), ("update", "a", "1", "11")]
    assert "handler bug" in caplog.text and "ZeroDivisionError" in caplog.text
    assert informer.is_running


async def test_a_late_handler_gets_the_current_objects_replayed(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([configmap("a"), configmap("b")], rv="10"))
    informer, _ = start(client, running)
    await informer.wait_for_sync(timeout=10)
    late = RecordingHandler()
    informer.add_event_handler(late)
    assert sorted(late.events) == [("add", "a", "1", True), ("add", "b", "1", True)]
    assert informer.remove_event_handler(late)
    assert not informer.remove_event_handler(late)


async def test_sync_timeout_names_the_resource_and_says_forbidden(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    message = (
        'configmaps is forbidden: User "system:serviceaccount:op:op" cannot list resource '
        '"configmaps" in API group "" in the namespace "team-a"'
    )
    client.queue_list(*[Forbidden(status(403, "Forbidden", message))] * 50)
    informer, _ = start(client, running, namespaces=["team-a"])
    await until(lambda: informer.last_sync_error is not None, "the first failed list")
    with pytest.raises(CacheSyncTimeout) as caught:
        await informer.wait_for_sync(timeout=0.05)
    text = str(caught.value)
    assert "configmaps/v1 (ConfigMap)" in text
    assert "forbidden (RBAC)" in text
    assert 'cannot list resource "configmaps"' in text
    assert 'list and watch on configmaps in namespace "team-a"' in text
    assert isinstance(caught.value.cause, Forbidden)


async def test_sync_timeout_of_a_hanging_list_names_the_resource() -> None:
    client = ScriptedClient()  # no list response: the list hangs
    informer = SharedInformer(client, CONFIGMAPS)
    with pytest.raises(
        CacheSyncTimeout, match=r"timed out after 0.01s .*configmaps.*never started"
    ):
        await informer.wait_for_sync(timeout=0.01)


async def test_one_store_for_several_namespaces(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    responses = {
        "ns1": list_body([configmap("a", "ns1")], rv="10"),
        "ns2": list_body([configmap("b", "ns2")], rv="10"),
    }

    async def list_raw(resource: object, namespace: str | None = None, **kw: object) -> bytes:
        client.list_calls.append({"namespace": namespace, **kw})
        return responses[str(namespace)]

    client.list_raw = list_raw  # type: ignore[method-assign]
    informer, handler = start(client, running, namespaces=["ns1", "ns2"])
    await informer.wait_for_sync(timeout=10)
    assert sorted(c["namespace"] for c in client.list_calls) == ["ns1", "ns2"]
    assert sorted(o.key.__str__() for o in informer.store.list()) == ["ns1/a", "ns2/b"]
    assert handler.names("add") == ["a", "b"]


async def test_decoding_a_large_list_yields_to_the_event_loop(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    count = 2000
    client.queue_list(list_body([configmap(f"o{i}") for i in range(count)], rv="10"))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        ticks_at_list: list[int] = []
        client.on_list = lambda: ticks_at_list.append(ticks)
        options = ReflectorOptions(slice_seconds=0.0, backoff=FAST.backoff)
        informer, handler = start(client, running, options=options)
        await informer.wait_for_sync(timeout=30)
        ticks_during_sync = ticks - ticks_at_list[0]
    finally:
        task.cancel()
    assert len(handler.events) == count
    # With a zero slice, decoding and dispatch yield at every check point: other tasks ran
    # many times while the list was being processed.
    assert ticks_during_sync > count // 32


async def test_large_sync_freezes_the_gc(running: list[SharedInformer]) -> None:
    client = ScriptedClient()
    count = GC_FREEZE_MIN_OBJECTS + 10
    client.queue_list(list_body([configmap(f"o{i}") for i in range(count)], rv="10"))
    gc.unfreeze()
    try:
        informer, _ = start(client, running)
        await informer.wait_for_sync(timeout=30)
        await until(lambda: gc.get_freeze_count() > 0, "gc.freeze()")
    finally:
        gc.unfreeze()


async def test_object_counts_are_exported_as_metrics(running: list[SharedInformer]) -> None:
    from prometheus_client import generate_latest

    from setpoint.api.gvk import ResourceInfo
    from setpoint.cache.cached_object import CachedObject, estimated_size
    from setpoint.client.metrics import REGISTRY

    client = ScriptedClient()
    objects = [configmap("a"), configmap("b")]
    client.queue_list(list_body(objects, rv="10"))
    # A kind of its own, so that informers of other tests do not add to the sums.
    resource = ResourceInfo(
        group="metrics.example.com", version="v1", kind="Gauge", resource="gauges",
        namespaced=True, list_kind="GaugeList",
    )  # fmt: skip
    informer = SharedInformer(client, resource, namespaces=["metrics-ns"], options=FAST)
    informer.start()
    running.append(informer)
    await informer.wait_for_sync(timeout=10)
    text = generate_latest(REGISTRY).decode()
    kind = 'group="metrics.example.com",kind="Gauge",version="v1"'
    assert f"setpoint_cache_objects{{{kind}}} 2.0" in text
    expected = sum(estimated_size(CachedObject.from_dict(obj)) for obj in objects)
    assert f"setpoint_cache_bytes{{{kind}}} {float(expected)}" in text
    label = 'resource="gauges.metrics.example.com/v1 (Gauge) in namespaces metrics-ns"'
    assert f"setpoint_cache_lists_total{{{label}}} 1.0" in text


async def test_expired_continue_token_restarts_the_list_from_the_first_page(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(
        list_body([configmap("a")], rv="10", continue_token="t1"),
        Gone(status(410, "Expired", "The provided continue parameter is too old")),
        list_body([configmap("a")], rv="20", continue_token="t2"),
        list_body([configmap("b")], rv="20"),
    )
    informer, handler = start(client, running)
    await informer.wait_for_sync(timeout=10)
    assert [c["continue_token"] for c in client.list_calls] == [None, "t1", None, "t2"]
    assert handler.names("add") == ["a", "b"]
    assert informer.reflectors[0].last_resource_version == "20"


async def test_expiring_again_right_after_a_relist_backs_off(
    running: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(*(list_body([configmap("a")], rv=str(10 + i)) for i in range(3)))
    client.queue_watch(event_line("MODIFIED", configmap("a", rv="11")), expired_line())
    client.queue_watch(expired_line())  # no progress since the relist
    informer, _ = start(client, running)
    reflector = informer.reflectors[0]
    await until(lambda: reflector.lists == 3, "the third list")
    # The first 410 (after progress) relisted at once; the second was treated as a failure.
    assert reflector._backoff.failures == 1


async def test_a_watch_closed_at_once_without_events_backs_off(
    running: list[SharedInformer],
) -> None:
    # A proxy or a broken server that answers every watch with an empty, finished stream must
    # not be hammered with watch requests in a hot loop: such a watch counts as a failure.
    client = ScriptedClient()
    client.queue_list(list_body([], rv="10"))
    for _ in range(3):
        client.queue_watch()  # ends at once, not a single line
    informer, _ = start(client, running)
    reflector = informer.reflectors[0]
    await until(lambda: len(client.watch_calls) >= 4, "the re-watches")
    assert reflector._backoff.failures >= 3
    assert "very short watch" in str(reflector.last_error)
    assert [c["resource_version"] for c in client.watch_calls[:4]] == ["10"] * 4
    assert len(client.list_calls) == 1


async def test_a_watch_that_delivers_events_resets_the_backoff(
    running: list[SharedInformer],
) -> None:
    # After an outage the delay has grown; once a watch proves the server healthy again (an
    # event arrives), the next blip must be retried quickly, not after the outage's long delay.
    client = ScriptedClient()
    client.queue_list(
        ConnectionFailed("refused"),
        ConnectionFailed("refused"),
        ConnectionFailed("refused"),
        list_body([], rv="10"),
    )
    client.queue_watch(event_line("ADDED", configmap("a", rv="11")), ConnectionFailed("reset"))
    informer, handler = start(client, running)
    reflector = informer.reflectors[0]
    await until(lambda: len(client.watch_calls) >= 2, "the re-watch after the blip")
    assert handler.events == [("add", "a", "11", False)]
    assert reflector._backoff.failures == 1  # the blip alone, not the outage's three failures


async def test_a_relisted_object_that_cannot_be_decoded_is_not_reported_deleted(
    running: list[SharedInformer], caplog: pytest.LogCaptureFixture
) -> None:
    # The object still exists on the server; only its new version is unreadable. Reporting it
    # deleted would make controllers clean up after a live object. Like an undecodable watch
    # event, it is skipped: the store keeps the version it had.
    client = ScriptedClient()
    broken = configmap("broken", rv="30")
    broken["metadata"]["labels"] = {"a": 1}
    client.queue_list(
        list_body([configmap("ok"), configmap("broken")], rv="10"),
        list_body([configmap("ok"), broken], rv="40"),
    )
    client.queue_watch(expired_line("10"))
    with caplog.at_level(logging.ERROR):
        informer, handler = start(client, running)
        await until(lambda: len(client.list_calls) == 2 and len(client.watch_calls) == 2, "relist")
    assert handler.events[2:] == []
    kept = informer.store.get_by_name("broken", "default")
    assert kept is not None and kept.resource_version == "1"
    assert "skipping a listed object" in caplog.text
