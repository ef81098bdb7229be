"""A thin HTTP client for the tests that check status codes, headers and raw bodies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp


@dataclass
class Reply:
    """Status, headers and decoded JSON body (None when not JSON) of one request."""

    status: int
    headers: Any
    body: Any
    raw: bytes


class RawAPI:
    """Requests against the local cluster's plain-HTTP listener with its bearer token."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        data: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """Send a request; ``body`` is JSON-encoded unless raw ``data`` is given."""
        sent_headers = {"Content-Type": content_type, **(headers or {})}
        if data is None and body is not None:
            data = json.dumps(body).encode()
        async with self.session.request(
            method, self.url + path, data=data, headers=sent_headers
        ) as response:
            raw = await response.read()
            try:
                decoded = json.loads(raw) if raw else None
            except ValueError:
                decoded = None
            return Reply(response.status, response.headers, decoded, raw)

    async def watch(self, path: str) -> list[dict[str, Any]]:
        """Every event of a watch until the server ends the stream (use timeoutSeconds)."""
        async with self.session.get(self.url + path) as response:
            assert response.status == 200, await response.text()
            return [json.loads(line) async for line in response.content if line.strip()]


@asynccontextmanager
async def raw_api(url: str, token: str) -> AsyncIterator[RawAPI]:
    """A :class:`RawAPI` for the duration of a test."""
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        yield RawAPI(session, url)
