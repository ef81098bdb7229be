"""The load generator: the same aiohttp + msgspec client code against every target.

Each function drives one scenario against one base URL and returns plain numbers. Request
counts are bounded, and the long-running ones also stop at a time budget, so a slow target makes
a phase report how far it got instead of hanging the run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import aiohttp
import msgspec

from bench.config_maps import config_map_body, namespace_body

#: aiohttp's default line limit (64 KiB) is fine for 1 KiB events; big list bodies are read whole.
WATCH_READ_BUFFER: Final = 2 * 1024 * 1024
#: Page size of paginated lists: what reflectors (client-go's and setpoint's) ask for.
LIST_PAGE_SIZE: Final = 500
#: Lists are timed several times and the median reported: one sample is too noisy on 2 cores.
LIST_REPEATS: Final = 5
#: How long watchers may take to receive the last event after the last write.
WATCH_DRAIN_TIMEOUT_SECONDS: Final = 60.0
#: How often the fan-out phase checks whether every watcher has everything.
WATCH_POLL_SECONDS: Final = 0.01

_decode = msgspec.json.Decoder().decode


class _WatchEvent(msgspec.Struct):
    type: str


class _ListMeta(msgspec.Struct):
    continue_: str | None = msgspec.field(default=None, name="continue")


class _CountingList(msgspec.Struct):
    metadata: _ListMeta | None = None
    items: list[msgspec.Raw] | None = None


class BenchError(RuntimeError):
    """A target answered a benchmark request with an unexpected status."""


@dataclass(frozen=True)
class CreateRun:
    """What a batch of creates achieved."""

    created: int
    seconds: float
    json_bytes: int

    @property
    def per_second(self) -> float:
        """Creates per second."""
        return self.created / self.seconds if self.seconds > 0 else 0.0


def session(concurrency: int, headers: dict[str, str]) -> aiohttp.ClientSession:
    """A client session with ``concurrency`` keep-alive connections to 127.0.0.1."""
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    return aiohttp.ClientSession(
        connector=connector,
        headers=headers,
        read_bufsize=WATCH_READ_BUFFER,
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
    )


async def ensure_namespace(http: aiohttp.ClientSession, base_url: str, name: str) -> None:
    """Create namespace ``name`` (an existing one is fine; emulators may not need it)."""
    async with http.post(
        f"{base_url}/api/v1/namespaces",
        data=namespace_body(name),
        headers={"Content-Type": "application/json"},
    ) as response:
        await response.read()
        if response.status not in (200, 201, 409):
            raise BenchError(f"creating namespace {name}: HTTP {response.status}")


async def create_objects(
    http: aiohttp.ClientSession,
    collection_url: str,
    count: int,
    concurrency: int,
    body_for: Callable[[int], bytes],
    *,
    budget_seconds: float | None = None,
) -> CreateRun:
    """POST ``body_for(i)`` for i in 0..count-1 to ``collection_url``, ``concurrency`` at once.

    Stops early when ``budget_seconds`` have passed; the result says how many were created.
    ``json_bytes`` sums the stored objects as the server returned them.
    """
    indexes: Iterator[int] = iter(range(count))
    created = 0
    json_bytes = 0
    started = time.perf_counter()
    deadline = None if budget_seconds is None else started + budget_seconds
    headers = {"Content-Type": "application/json"}

    async def worker() -> None:
        nonlocal created, json_bytes
        for index in indexes:
            if deadline is not None and time.perf_counter() > deadline:
                return
            async with http.post(collection_url, data=body_for(index), headers=headers) as response:
                answer = await response.read()
                if response.status not in (200, 201):  # KMock answers 200
                    detail = answer[:300].decode(errors="replace")
                    raise BenchError(f"POST {collection_url}: HTTP {response.status}: {detail}")
            created += 1
            json_bytes += len(answer)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return CreateRun(created, time.perf_counter() - started, json_bytes)


async def create_config_maps(
    http: aiohttp.ClientSession,
    base_url: str,
    namespace: str,
    count: int,
    concurrency: int,
    *,
    prefix: str,
    budget_seconds: float | None = None,
) -> CreateRun:
    """Create ConfigMaps ``prefix-000000``... in ``namespace`` (see :func:`create_objects`)."""
    return await create_objects(
        http,
        f"{base_url}/api/v1/namespaces/{namespace}/configmaps",
        count,
        concurrency,
        lambda index: config_map_body(f"{prefix}-{index:06d}", namespace, index),
        budget_seconds=budget_seconds,
    )


async def time_list(
    http: aiohttp.ClientSession,
    base_url: str,
    namespace: str,
    expected: int,
    *,
    page_size: int | None = None,
) -> float:
    """Median milliseconds to list the ConfigMaps of ``namespace`` and split the items out.

    The clock covers sending the request(s), the server's work, reading every body and
    splitting it into items with msgspec (items stay raw, as the runtime's cache reads them).
    With ``page_size`` the list is paginated (``limit`` + ``continue``) as reflectors list.
    """
    url = f"{base_url}/api/v1/namespaces/{namespace}/configmaps"
    samples: list[float] = []
    for _ in range(LIST_REPEATS):
        started = time.perf_counter()
        got = 0
        params: dict[str, str] = {} if page_size is None else {"limit": str(page_size)}
        while True:
            async with http.get(url, params=params) as response:
                body = await response.read()
                if response.status != 200:
                    raise BenchError(f"GET {url}: HTTP {response.status}")
            page = msgspec.json.decode(body, type=_CountingList)
            got += len(page.items or ())
            token = page.metadata.continue_ if page.metadata else None
            if page_size is None or not token:
                break
            params = {"limit": str(page_size), "continue": token}
        samples.append((time.perf_counter() - started) * 1000)
        # One more with the controllers: the root CA publisher's kube-root-ca.crt.
        if got not in (expected, expected + 1):
            raise BenchError(f"GET {url}: expected {expected} items, got {got}")
    return statistics.median(samples)


async def watch_fanout(
    http: aiohttp.ClientSession,
    base_url: str,
    namespace: str,
    *,
    watchers: int,
    events: int,
    writer_concurrency: int,
    budget_seconds: float | None = None,
) -> tuple[float, CreateRun]:
    """Events per second delivered to ``watchers`` concurrent watches of ``namespace``.

    The watchers connect first (on an empty namespace, so emulators that replay existing objects
    replay nothing); then up to ``events`` ConfigMaps are created (fewer if ``budget_seconds``
    runs out). The rate is all delivered events (watchers x creates) over the time from the
    first write to the last delivery. Also returns what the writes stored.
    """
    url = f"{base_url}/api/v1/namespaces/{namespace}/configmaps"
    connected = 0
    all_connected = asyncio.Event()
    received = [0] * watchers
    last_at = [0.0] * watchers

    async def watcher(slot: int) -> None:
        nonlocal connected
        params = {"watch": "true", "allowWatchBookmarks": "true"}
        async with http.get(url, params=params) as response:
            if response.status != 200:
                raise BenchError(f"watch {url}: HTTP {response.status}")
            connected += 1
            if connected == watchers:
                all_connected.set()
            async for line in response.content:
                if not line.strip():
                    continue
                if msgspec.json.decode(line, type=_WatchEvent).type == "ADDED":
                    received[slot] += 1
                    last_at[slot] = time.perf_counter()

    tasks = [asyncio.create_task(watcher(slot)) for slot in range(watchers)]
    try:
        async with asyncio.timeout(WATCH_DRAIN_TIMEOUT_SECONDS):
            await all_connected.wait()
        # A watch is registered on the server when its response headers are sent; give the
        # servers' watch plumbing one breath before writing.
        await asyncio.sleep(0.2)
        started = time.perf_counter()
        writes = await create_config_maps(
            http,
            base_url,
            namespace,
            events,
            writer_concurrency,
            prefix="fanout",
            budget_seconds=budget_seconds,
        )
        async with asyncio.timeout(WATCH_DRAIN_TIMEOUT_SECONDS):
            while min(received) < writes.created:
                for task in tasks:
                    if task.done():
                        task.result()  # a watcher that failed or ended early: say why
                        raise BenchError(f"watch {url} ended after {received} events")
                # Only the waiting is polled; delivery times come from the watchers' clocks.
                await asyncio.sleep(WATCH_POLL_SECONDS)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if writes.created == 0:
        return 0.0, writes
    return watchers * writes.created / (max(last_at) - started), writes
