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


def test_the_byte_estimate_is_within_ten_percent_of_the_memory_a_store_takes() -> None:
    import gc
    import tracemalloc

    import msgspec

    from setpoint.cache.cached_object import CachedObject, estimated_size
    from setpoint.cache.store import MutableStore

    def config_map(i: int, owned: bool) -> bytes:
        metadata: dict[str, object] = {
            "name": f"cm-{i}",
            "namespace": f"ns{i % 5}",
            "uid": f"{i:08d}-0000-4000-8000-000000000000",
            "resourceVersion": str(1000 + i),
            "creationTimestamp": "2026-11-23T22:00:00Z",
            "labels": {"app": f"a{i % 20}"},
        }
        if owned:
            metadata["ownerReferences"] = [
                {"apiVersion": "example.com/v1", "kind": "Widget", "name": f"w{i}",
                 "uid": f"{i:08d}-1111-4000-8000-000000000000", "controller": True}
            ]  # fmt: skip
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
        body["data"] = {"k": "v" * (50 + i % 500)}
        return msgspec.json.encode(body)

    for owned in (False, True):
        lines = [config_map(i, owned) for i in range(3000)]
        store = MutableStore()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for line in lines:
                store.upsert(CachedObject.from_json(line))
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        estimate = sum(estimated_size(obj) for obj in store)
        assert 0.9 <= estimate / grown <= 1.1, (owned, estimate, grown)
