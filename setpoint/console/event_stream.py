"""``text/event-stream`` (Server-Sent Events) both ways.

:func:`read_events` parses a stream the console reads (the audit feed, an operator's trace
stream) into ``(event, data)`` pairs; :class:`EventSink` writes the stream the page reads with
the browser's ``EventSource``, with a comment line every few seconds so that proxies and the
browser keep it open and a closed page is noticed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web

__all__ = ["KEEPALIVE_SECONDS", "EventSink", "read_events"]

#: Seconds between keep-alive comments on the page's streams.
KEEPALIVE_SECONDS = 10.0


async def read_events(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, str]]:
    """The events of an SSE response as ``(event name, data)``; comments are skipped."""
    name = "message"
    data: list[str] = []
    async for raw in response.content:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)


class EventSink:
    """The page's side of one SSE stream."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )

    async def open(self) -> None:
        """Send the headers."""
        await self.response.prepare(self.request)

    async def send(self, event: str, data: Any) -> None:
        """One event whose data is ``data`` as JSON (one line)."""
        payload = json.dumps(data, separators=(",", ":"), default=str)
        await self.response.write(f"event: {event}\ndata: {payload}\n\n".encode())

    async def keepalive(self) -> None:
        """A comment line: keeps the stream open, and fails once the page has gone."""
        await self.response.write(b": keepalive\n\n")
