"""An API server started in the test's own event loop over a storage the test chooses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import Storage
from tests.cluster.raw_api import RawAPI, raw_api


@asynccontextmanager
async def served(storage: Storage) -> AsyncIterator[tuple[APIServer, RawAPI]]:
    """An HTTP-only API server over ``storage`` and a raw client of it."""
    server = APIServer(storage, https_port=None)
    await server.start()
    try:
        async with raw_api(server.url, server.token) as api:
            yield server, api
    finally:
        await server.stop()
