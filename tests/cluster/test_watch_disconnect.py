"""A watcher that disconnects ends its stream quietly: a client going away is no server error."""

from __future__ import annotations

import asyncio
import logging
import types

import pytest
from aiohttp import web
from aiohttp.client_exceptions import ClientConnectionResetError

from setpoint.cluster.apiserver.http import watch_stream
from tests.cluster.raw_api import RawAPI


class _GoneAfterFirstEvent(web.StreamResponse):
    """A stream whose client is gone once the marked object's event is to be written (the
    transport says so on the next write, as aiohttp does for a closed connection)."""

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        if b"client-gone" in bytes(data):
            raise ClientConnectionResetError("Cannot write to closing transport")
        await super().write(data)


async def test_a_watch_whose_client_is_gone_ends_without_an_internal_error(
    api: RawAPI, namespace: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    web_module = types.SimpleNamespace(StreamResponse=_GoneAfterFirstEvent)
    monkeypatch.setattr(watch_stream, "web", web_module)
    caplog.set_level(logging.ERROR, logger="setpoint.cluster")
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = (await api.request("GET", path)).body["metadata"]["resourceVersion"]
    async with api.session.get(
        f"{api.url}{path}?watch=1&resourceVersion={start}&timeoutSeconds=60"
    ) as response:
        assert (await api.request("POST", path, {"metadata": {"name": "first"}})).status == 201
        assert b"first" in await response.content.readline()
        reply = await api.request("POST", path, {"metadata": {"name": "client-gone"}})
        assert reply.status == 201
        # The server ends the stream at the failed write.
        rest = await asyncio.wait_for(response.content.read(), 30)
    assert b"client-gone" not in rest
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
