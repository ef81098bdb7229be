"""Rounds of ``kill -9`` against ``setpoint cluster serve --data-dir`` under reads and writes.

Each round starts the server on the same data directory, checks everything the earlier rounds
observed, then runs concurrent writers, readers and a watcher until the server is killed at a
random moment. What the clients saw is kept in a :class:`Observed` and checked after restart:

- every acknowledged write is present (at its revision or a later one);
- the revision counter is at or above every revision ever served (none is lost or reused),
  and the next write gets a revision above all of them;
- the first list after a restart is not older than the last list before the crash;
- a watch from a served revision either replays exactly the acknowledged writes after it, in
  order, or is refused with 410 Expired / 504 Too large.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.cluster.serve_process import ServeProcess, connection_of

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
WRITERS = 8
READERS = 4
#: The server is killed this long (seconds, uniformly drawn) after the load starts.
KILL_AFTER = (0.2, 1.2)
WATCHES_CHECKED = 3


@dataclass
class Observed:
    """What clients were told, across every round."""

    acknowledged: dict[str, int] = field(default_factory=dict)  # name -> revision acknowledged
    acknowledged_revisions: set[int] = field(default_factory=set)
    served: set[int] = field(default_factory=set)  # every resourceVersion any answer carried
    last_list: int = 0
    rounds: int = 0
    #: Set when a read returned a revision above every acknowledged write: the moment at which
    #: a server that serves uncommitted writes is most likely to lose one in a crash.
    ahead: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Connection:
    url: str
    session: aiohttp.ClientSession
    context: ssl.SSLContext | None

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        async with self.session.request(
            method,
            self.url + path,
            data=data,
            ssl=self.context if self.context is not None else False,
            headers={"Content-Type": "application/json"},
        ) as response:
            return response.status, await response.json(content_type=None)

    async def watch(self, revision: int) -> list[dict[str, Any]]:
        path = f"{CONFIGMAPS}?watch=1&resourceVersion={revision}&timeoutSeconds=1"
        async with self.session.get(
            self.url + path, ssl=self.context if self.context is not None else False
        ) as response:
            assert response.status == 200, await response.text()
            return [json.loads(line) async for line in response.content if line.strip()]


def _rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def _writer(conn: Connection, seen: Observed, prefix: str) -> None:
    mine: list[str] = []
    count = 0
    while True:
        if mine and random.random() < 0.4:
            name = random.choice(mine)
            body = {"data": {"n": str(count)}}
            status, reply = await _patch(conn, name, body)
            expected = 200
        else:
            name = f"{prefix}-{count}"
            body = {"metadata": {"name": name}, "data": {"n": str(count)}}
            status, reply = await conn.call("POST", CONFIGMAPS, body)
            expected = 201
        count += 1
        assert status == expected, reply
        revision = _rv(reply)
        seen.acknowledged[name] = revision
        seen.acknowledged_revisions.add(revision)
        seen.served.add(revision)
        if expected == 201:
            mine.append(name)


async def _patch(conn: Connection, name: str, body: Any) -> tuple[int, Any]:
    async with conn.session.patch(
        f"{conn.url}{CONFIGMAPS}/{name}",
        data=json.dumps(body),
        ssl=conn.context if conn.context is not None else False,
        headers={"Content-Type": "application/merge-patch+json"},
    ) as response:
        return response.status, await response.json(content_type=None)


async def _reader(conn: Connection, seen: Observed) -> None:
    previous = 0
    while True:
        # A one-item page carries the list's resourceVersion without listing everything.
        status, listed = await conn.call("GET", f"{CONFIGMAPS}?limit=1")
        assert status == 200, listed
        revision = _rv(listed)
        assert revision >= previous, "list resourceVersions went backwards"
        previous = revision
        seen.served.add(revision)
        seen.served.update(_rv(item) for item in listed["items"])
        seen.last_list = max(seen.last_list, revision)
        if revision > max(seen.acknowledged_revisions, default=0):
            seen.ahead.set()


async def check_after_restart(conn: Connection, seen: Observed) -> None:
    """Everything :class:`Observed` promises, against the restarted server."""
    status, listed = await conn.call("GET", CONFIGMAPS)
    assert status == 200, listed
    list_revision = _rv(listed)
    stored = {item["metadata"]["name"]: _rv(item) for item in listed["items"]}
    missing = sorted(name for name in seen.acknowledged if name not in stored)
    assert not missing, f"acknowledged writes lost: {missing[:10]}"
    older = sorted(n for n, rv in seen.acknowledged.items() if stored[n] < rv)
    assert not older, f"acknowledged writes rolled back: {older[:10]}"
    newest_served = max(seen.served, default=0)
    assert list_revision >= newest_served, (
        f"served revision {newest_served} before the crash, the server restarted at "
        f"{list_revision}: it would be handed out again"
    )
    assert list_revision >= seen.last_list, "a list after the restart is older than before it"
    probe = f"probe-{seen.rounds}"
    status, created = await conn.call("POST", CONFIGMAPS, {"metadata": {"name": probe}})
    assert status == 201, created
    assert _rv(created) > newest_served, "a revision served before the crash was reused"
    seen.acknowledged[probe] = _rv(created)
    seen.acknowledged_revisions.add(_rv(created))
    seen.served.add(_rv(created))
    seen.last_list = max(seen.last_list, list_revision)
    candidates = sorted(seen.served)
    for revision in random.sample(candidates, min(WATCHES_CHECKED, len(candidates))):
        await _check_watch(conn, seen, revision, _rv(created))


async def _check_watch(conn: Connection, seen: Observed, start: int, upto: int) -> None:
    events = await conn.watch(start)
    if events and events[0]["type"] == "ERROR":
        assert events[0]["object"]["code"] in (410, 504), events[0]
        return
    revisions = [_rv(event["object"]) for event in events]
    assert all(r > start for r in revisions), (start, revisions[:5])
    assert revisions == sorted(set(revisions)), "watch events out of order or repeated"
    expected = {r for r in seen.acknowledged_revisions if start < r <= upto}
    missing = sorted(expected - set(revisions))
    assert not missing, f"watch from {start} skipped acknowledged revisions {missing[:10]}"


async def crash_round(tmp_path: Path, data_dir: Path, seen: Observed) -> None:
    """Start, check what earlier rounds saw, load, kill -9 at a random moment."""
    seen.rounds += 1
    server = ServeProcess(tmp_path / f"kubeconfig-{seen.rounds}", "--data-dir", str(data_dir))
    try:
        url, token, context = connection_of(server.wait_for_kubeconfig())
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            conn = Connection(url, session, context)
            if seen.rounds > 1:
                await check_after_restart(conn, seen)
            load = [
                asyncio.create_task(_writer(conn, seen, f"r{seen.rounds}w{i}"))
                for i in range(WRITERS)
            ] + [asyncio.create_task(_reader(conn, seen)) for _ in range(READERS)]
            seen.ahead.clear()
            await asyncio.sleep(KILL_AFTER[0])
            seen.ahead.clear()
            # Half the rounds kill at a random moment, half right after a read got ahead of
            # every acknowledged write (or at the deadline if none does).
            if seen.rounds % 2:
                await asyncio.sleep(random.uniform(0, KILL_AFTER[1] - KILL_AFTER[0]))
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(seen.ahead.wait(), KILL_AFTER[1] - KILL_AFTER[0])
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait()
            results = await asyncio.gather(*load, return_exceptions=True)
            for result in results:
                # The load ends with the server: only connection failures are expected.
                if isinstance(result, AssertionError):
                    raise result
    finally:
        server.close()


async def final_check(tmp_path: Path, data_dir: Path, seen: Observed) -> None:
    """One more start after the last crash, checked like the others."""
    seen.rounds += 1
    server = ServeProcess(tmp_path / "kubeconfig-final", "--data-dir", str(data_dir))
    try:
        url, token, context = connection_of(server.wait_for_kubeconfig())
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            await check_after_restart(Connection(url, session, context), seen)
    finally:
        server.terminate()
