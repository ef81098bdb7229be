"""Reads never show a write that is not committed yet.

The SQLite backend applies a write to its in-memory view before the group commit; a GET, a
LIST or a watch's initial replay answered from that view could show a revision a crash then
takes back (and hand out again). Here the sync that would make a batch durable is held, then
made to fail: whatever a read answered must not contain it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from setpoint.cluster.apiserver.storage import SqliteStorage
from tests.cluster.hardening.conftest import served
from tests.cluster.storage.test_sqlite_commit_failure import (
    HANDSHAKE_TIMEOUT,
    Faults,
    faulty_connection,
)

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


async def test_reads_taken_during_a_failing_sync_never_show_it(tmp_path: Path) -> None:
    faults = Faults()
    storage = SqliteStorage(
        tmp_path / "data.db",
        connection_factory=faulty_connection(faults),
        fdatasync=faults.fdatasync,
    )
    try:
        async with served(storage) as (_, api):
            kept = await api.request("POST", CONFIGMAPS, configmap("kept"))
            assert kept.status == 201
            durable = int(kept.body["metadata"]["resourceVersion"])

            faults.holding_syncs = 1
            faults.failing_syncs = 1
            create = asyncio.create_task(api.request("POST", CONFIGMAPS, configmap("doomed")))
            assert await asyncio.to_thread(faults.sync_started.wait, HANDSHAKE_TIMEOUT)
            # Made while the write is applied in memory but not on disk.
            get = asyncio.create_task(api.request("GET", f"{CONFIGMAPS}/doomed"))
            listed = asyncio.create_task(api.request("GET", CONFIGMAPS))
            watched = asyncio.create_task(api.watch(f"{CONFIGMAPS}?watch=1&timeoutSeconds=1"))
            await asyncio.sleep(0.1)  # let the reads reach the server before the failure
            faults.release.set()

            assert (await create).status == 500
            assert (await get).status == 404
            body = (await listed).body
            assert [i["metadata"]["name"] for i in body["items"]] == ["kept"]
            assert int(body["metadata"]["resourceVersion"]) <= durable
            names = [e["object"]["metadata"]["name"] for e in await watched]
            assert "doomed" not in names
    finally:
        await storage.close()


async def test_a_list_never_reports_a_revision_lost_in_a_failed_commit(tmp_path: Path) -> None:
    faults = Faults()
    path = tmp_path / "data.db"
    storage = SqliteStorage(path, connection_factory=faulty_connection(faults))
    async with served(storage) as (_, api):
        faults.failing_commits = 1
        assert (await api.request("POST", CONFIGMAPS, configmap("lost"))).status == 500
        served_rv = int((await api.request("GET", CONFIGMAPS)).body["metadata"]["resourceVersion"])
    await storage.close()
    # After a restart the counter is at least every revision served before it.
    reopened = SqliteStorage(path)
    try:
        assert reopened.revision >= served_rv
        written = reopened.create("/core/configmaps/default/next", {"metadata": {"name": "n"}})
        assert written.revision > served_rv
    finally:
        await reopened.close()


async def test_a_no_op_write_on_an_uncommitted_change_never_reports_it(tmp_path: Path) -> None:
    faults = Faults()
    storage = SqliteStorage(
        tmp_path / "data.db",
        connection_factory=faulty_connection(faults),
        fdatasync=faults.fdatasync,
    )
    try:
        async with served(storage) as (_, api):
            assert (await api.request("POST", CONFIGMAPS, configmap("x"))).status == 201
            change = {"data": {"k": "v"}}
            patch_type = "application/merge-patch+json"
            faults.holding_syncs = 1
            faults.failing_syncs = 1
            first = asyncio.create_task(
                api.request("PATCH", f"{CONFIGMAPS}/x", change, content_type=patch_type)
            )
            assert await asyncio.to_thread(faults.sync_started.wait, HANDSHAKE_TIMEOUT)
            # The same change again: a no-op against the (uncommitted) state it sees.
            second = asyncio.create_task(
                api.request("PATCH", f"{CONFIGMAPS}/x", change, content_type=patch_type)
            )
            await asyncio.sleep(0.1)
            faults.release.set()
            assert (await first).status == 500
            reply = await second
            assert reply.status in (200, 409), reply.body
            if reply.status == 200:  # made again after the failure: a real, durable write
                assert reply.body["data"] == {"k": "v"}
                stored = await api.request("GET", f"{CONFIGMAPS}/x")
                assert (
                    stored.body["metadata"]["resourceVersion"]
                    == (reply.body["metadata"]["resourceVersion"])
                )
            else:
                stored = await api.request("GET", f"{CONFIGMAPS}/x")
                assert "data" not in stored.body
    finally:
        await storage.close()
