"""The cache's Prometheus collector, scraped from another thread as the manager does."""

from __future__ import annotations

from prometheus_client import generate_latest

from setpoint.cache import SharedInformer
from setpoint.client.metrics import REGISTRY

from .scripted_client import CONFIGMAPS, ScriptedClient
from .thread_race import reader_failures


def test_scraping_while_informers_are_created_never_fails() -> None:
    # /metrics is encoded in a worker thread while the event loop may create informers (a
    # controller watching a new kind): the scrape must not see the informer set change under it.
    client = ScriptedClient()
    alive: list[SharedInformer] = []

    def create_informers() -> None:
        alive.append(SharedInformer(client, CONFIGMAPS))
        if len(alive) > 100:
            alive.clear()

    assert reader_failures(lambda: generate_latest(REGISTRY), create_informers) == []
