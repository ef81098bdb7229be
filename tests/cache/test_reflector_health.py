"""A reflector knows since when it cannot list or watch; the manager's probes read it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from setpoint.cache import Backoff, ReflectorOptions, SharedInformer
from setpoint.client.errors import ConnectionFailed
from setpoint.manager.cache_health import CacheHealth, InformersFailing

from .objects import configmap, list_body
from .recording import until
from .scripted_client import CONFIGMAPS, ScriptedClient

FAST = ReflectorOptions(backoff=lambda: Backoff(initial=0.001, maximum=0.005))


@pytest.fixture
async def informers() -> AsyncIterator[list[SharedInformer]]:
    started: list[SharedInformer] = []
    yield started
    for informer in started:
        await informer.stop()


def start(client: ScriptedClient, informers: list[SharedInformer]) -> SharedInformer:
    informer = SharedInformer(client, CONFIGMAPS, options=FAST)  # type: ignore[arg-type]
    informer.start()
    informers.append(informer)
    return informer


async def test_a_failing_list_is_reported_with_its_error(
    informers: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(ConnectionFailed("connection refused"))  # then the next list hangs
    informer = start(client, informers)
    (reflector,) = informer.reflectors
    await until(lambda: reflector.failing_since is not None, "the failure")
    health = CacheHealth(lambda: informers, unready_after=0.01, unhealthy_after=3600)
    await asyncio.sleep(0.05)
    seconds, error = informer.failing(asyncio.get_running_loop().time())
    assert seconds > 0 and isinstance(error, ConnectionFailed)
    with pytest.raises(InformersFailing, match=r"configmaps/v1 \(ConfigMap\): cannot list/watch"):
        health.readiness_check()
    health.liveness_check()  # not yet past the liveness threshold


async def test_an_accepted_watch_counts_as_working_again(
    informers: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(ConnectionFailed("refused"), list_body([configmap("a")], rv="5"))
    client.queue_watch(ConnectionFailed("reset"))
    client.queue_watch(then_hang=True)  # accepted, then quiet
    informer = start(client, informers)
    (reflector,) = informer.reflectors
    await until(lambda: len(client.watch_calls) == 2, "the second watch")
    await until(lambda: reflector.failing_since is None, "recovery")
    CacheHealth(lambda: informers, unready_after=0.001).readiness_check()


async def test_a_server_that_closes_every_watch_at_once_stays_failing(
    informers: list[SharedInformer],
) -> None:
    client = ScriptedClient()
    client.queue_list(list_body([], rv="5"))
    client.queue_watch(ConnectionFailed("reset"))
    for _ in range(5):
        client.queue_watch()  # accepted, then closed without a line: a "very short watch"
    client.queue_watch(then_hang=True)
    informer = start(client, informers)
    (reflector,) = informer.reflectors
    await until(lambda: reflector.failing_since is not None, "the first failure")
    first = reflector.failing_since
    await until(lambda: len(client.watch_calls) >= 4, "more watches")
    await until(lambda: reflector.failing_since is not None, "failing again")
    assert reflector.failing_since == first  # the outage did not start over
