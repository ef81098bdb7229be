"""The bearer token never reaches the request log, even from the query string."""

from __future__ import annotations

import logging
from urllib.parse import quote

import pytest

from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.hardening.conftest import served


async def test_a_token_in_the_query_string_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    storage = MemoryStorage()
    async with served(storage) as (server, api):
        token = server.token
        with caplog.at_level(logging.DEBUG, logger="setpoint.cluster.apiserver.requests"):
            for query in (f"access_token={token}", f"x={quote(token, safe='')}", f"token={token}"):
                await api.request("GET", f"/api/v1/namespaces?{query}")
        logged = "\n".join(r.getMessage() for r in caplog.records)
        assert "/api/v1/namespaces" in logged
        assert token not in logged
        assert quote(token, safe="") not in logged
    await storage.close()
