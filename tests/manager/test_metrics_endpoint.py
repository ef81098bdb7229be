"""/metrics serves setpoint's one registry in Prometheus text format."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from prometheus_client import CollectorRegistry, Counter

from setpoint.client.metrics import REQUESTS_TOTAL
from setpoint.manager.http_endpoint import HttpEndpoint, parse_bind_address
from setpoint.manager.metrics import LEADER_MASTER_STATUS
from setpoint.manager.metrics_endpoint import build_metrics_app


async def serve(registry: CollectorRegistry | None) -> HttpEndpoint:
    address = parse_bind_address("127.0.0.1:0")
    assert address is not None
    endpoint = HttpEndpoint(build_metrics_app(registry), address)
    await endpoint.start()
    return endpoint


@pytest.fixture
async def metrics_url() -> AsyncIterator[str]:
    endpoint = await serve(None)
    try:
        yield endpoint.url + "/metrics"
    finally:
        await endpoint.stop()


async def scrape(url: str, accept: str = "") -> tuple[int, str, str]:
    headers = {"Accept": accept} if accept else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        return response.status, response.headers["Content-Type"], await response.text()


async def test_shared_registry_with_client_leader_and_process_metrics(metrics_url: str) -> None:
    REQUESTS_TOTAL.labels(code="200", method="GET", host="metrics-test:6443").inc()
    LEADER_MASTER_STATUS.labels(name="metrics-test-lease").set(1)
    status, content_type, body = await scrape(metrics_url)
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    assert 'rest_client_requests_total{code="200",host="metrics-test:6443",method="GET"}' in body
    assert 'leader_election_master_status{name="metrics-test-lease"} 1.0' in body
    assert "# TYPE process_cpu_seconds_total counter" in body
    assert "python_info" in body
    assert "python_gc_collections_total" in body


async def test_the_asyncio_task_count_follows_the_event_loop(metrics_url: str) -> None:
    def tasks(body: str) -> float:
        line = next(ln for ln in body.splitlines() if ln.startswith("setpoint_asyncio_tasks "))
        return float(line.split()[1])

    before = tasks((await scrape(metrics_url))[2])
    sleepers = [asyncio.create_task(asyncio.sleep(60)) for _ in range(25)]
    try:
        during = tasks((await scrape(metrics_url))[2])
    finally:
        for sleeper in sleepers:
            sleeper.cancel()
        await asyncio.gather(*sleepers, return_exceptions=True)
    after = tasks((await scrape(metrics_url))[2])
    assert during == before + 25
    assert after == before


async def test_openmetrics_when_asked(metrics_url: str) -> None:
    _, content_type, body = await scrape(metrics_url, "application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert body.rstrip().endswith("# EOF")


async def test_a_given_registry_is_served_alone() -> None:
    registry = CollectorRegistry()
    Counter("widgets_made", "Widgets made.", registry=registry).inc(3)
    endpoint = await serve(registry)
    try:
        _, _, body = await scrape(endpoint.url + "/metrics")
    finally:
        await endpoint.stop()
    assert "widgets_made_total 3.0" in body
    assert "rest_client_requests_total" not in body
