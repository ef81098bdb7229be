"""`/metrics`: the shared Prometheus registry in text format (or OpenMetrics when asked)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from setpoint.client.metrics import REGISTRY
from setpoint.manager.metrics import ASYNCIO_TASKS, register_process_collectors

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["METRICS_PATH", "build_metrics_app"]

METRICS_PATH = "/metrics"


def build_metrics_app(registry: CollectorRegistry | None = None) -> web.Application:
    """An aiohttp application serving `registry` (default: setpoint's one registry)."""
    from aiohttp import web  # imported when a server starts, not before the first request

    if registry is None:
        register_process_collectors()
        registry = REGISTRY
    served = registry

    async def handle(request: web.Request) -> web.Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        if served is REGISTRY:
            ASYNCIO_TASKS.set(len(asyncio.all_tasks()))
        # Collecting runs every collector (the process collector reads /proc): keep it off
        # the event loop so a scrape never stalls reconciles.
        body = await asyncio.to_thread(encoder, served)
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response

    app = web.Application()
    app.router.add_get(METRICS_PATH, handle)
    return app
