"""The cache's Prometheus collector, scraped from another thread as the manager does."""

from __future__ import annotations

import sys
import threading
import time

from prometheus_client import generate_latest

from setpoint.cache import SharedInformer
from setpoint.client.metrics import REGISTRY

from .scripted_client import CONFIGMAPS, ScriptedClient


def test_scraping_while_informers_are_created_never_fails() -> None:
    # /metrics is encoded in a worker thread while the event loop may create informers (a
    # controller watching a new kind): the scrape must not see the informer set change under it.
    client = ScriptedClient()
    alive: list[SharedInformer] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            try:
                generate_latest(REGISTRY)
            except Exception as exc:
                failures.append(exc)
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible to expose the race
    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        deadline = time.monotonic() + 0.7  # a bound on the stress, not a timing assertion
        while time.monotonic() < deadline and not failures:
            alive.append(SharedInformer(client, CONFIGMAPS))
            if len(alive) > 100:
                alive.clear()
    finally:
        stop.set()
        scraper.join()
        sys.setswitchinterval(interval)
    assert failures == []
