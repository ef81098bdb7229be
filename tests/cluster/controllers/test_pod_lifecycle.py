"""Process lifecycle and graceful deletion.

Every process of a container ends with it, backgrounded and ``setsid`` ones included; a
deleted pod first shows its containers terminated and Ready=False (simulated or real), with
the preStop hook run before SIGTERM and the exit code the process gave, then disappears.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.test_pod_isolation import needs_isolation, pod
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"


def sleeps_marked(mark: str) -> list[int]:
    """PIDs of ``sleep <mark>N`` processes."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0] == b"sleep" and argv[1].startswith(mark.encode()):
            found.append(int(entry))
    return found


@pytest.fixture
async def api() -> AsyncIterator[RawAPI]:
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as client,
    ):
        yield client


def sleepers(marker: str) -> str:
    # Distinct sleep lengths mark this test's processes: one backgrounded, one in a
    # subshell (reparented), one in a new session.
    return f"sleep {marker}1 & (sleep {marker}2 &); setsid sleep {marker}3 &"


def marker() -> str:
    return str(int(uuid.uuid4().hex[:6], 16) + 100000)


@needs_isolation
async def test_a_container_ends_with_every_process_it_started(api: RawAPI) -> None:
    mark = marker()
    await api.request("POST", PODS, pod("forks", f"{sleepers(mark)} echo started"))

    async def succeeded() -> dict[str, Any] | None:
        status = (await api.request("GET", f"{PODS}/forks")).body.get("status") or {}
        return status if status.get("phase") == "Succeeded" else None

    status = await eventually(succeeded, "the pod Succeeded once its main process exited")

    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] and terminated["finishedAt"]
    assert await eventually(lambda: _none_left(mark), "no process left") is True


async def _none_left(mark: str) -> bool:
    return not sleeps_marked(mark)


@needs_isolation
async def test_deleting_a_pod_ends_its_setsid_and_background_processes(api: RawAPI) -> None:
    mark = marker()
    await api.request("POST", PODS, pod("daemons", f"{sleepers(mark)} exec sleep {mark}4"))

    async def all_running() -> bool:
        return len(sleeps_marked(mark)) == 4

    await eventually(all_running, "the four sleeps running")
    await api.request("DELETE", f"{PODS}/daemons", {"gracePeriodSeconds": 5})

    async def gone() -> bool:
        return (await api.request("GET", f"{PODS}/daemons")).status == 404

    await eventually(gone, "the pod deleted")
    assert sleeps_marked(mark) == []


async def watch_deletion(api: RawAPI, name: str, delete: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod's watch events from the DELETE until DELETED."""
    listed = await api.request("GET", f"{PODS}?fieldSelector=metadata.name%3D{name}")
    version = listed.body["metadata"]["resourceVersion"]
    events: list[dict[str, Any]] = []
    path = f"{PODS}?watch=true&fieldSelector=metadata.name%3D{name}&resourceVersion={version}"
    async with api.session.get(api.url + path) as response:
        await api.request("DELETE", f"{PODS}/{name}", delete)
        async with asyncio.timeout(20):
            async for line in response.content:
                if line.strip():
                    events.append(json.loads(line))
                    if events[-1]["type"] == "DELETED":
                        break
    return events


def ready_of(obj: dict[str, Any]) -> str:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "Ready"), "")


async def test_a_simulated_pod_is_reported_not_ready_and_terminated_before_it_is_deleted() -> None:
    async with (
        LocalCluster() as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await api.request(
            "POST",
            PODS,
            {
                "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        )

        async def ready() -> bool:
            return ready_of((await api.request("GET", f"{PODS}/web")).body) == "True"

        await eventually(ready, "the pod ready")
        events = await watch_deletion(api, "web", {"gracePeriodSeconds": 10})

    assert [e["type"] for e in events][-1] == "DELETED"
    not_ready = [e for e in events if e["type"] == "MODIFIED" and ready_of(e["object"]) == "False"]
    assert not_ready, [(e["type"], ready_of(e["object"])) for e in events]
    state = not_ready[0]["object"]["status"]["containerStatuses"][0]["state"]
    assert "terminated" in state
    conditions = {c["type"]: c["status"] for c in not_ready[0]["object"]["status"]["conditions"]}
    assert conditions["ContainersReady"] == "False"


@needs_isolation
async def test_pre_stop_runs_then_sigterm_and_the_exit_code_is_reported(api: RawAPI) -> None:
    script = "trap '[ -f hook-ran ] && exit 7 || exit 9' TERM; while :; do sleep 0.05; done"
    body = pod("graceful", script)
    container = body["spec"]["containers"][0]
    container["lifecycle"] = {"preStop": {"exec": {"command": ["sh", "-c", "touch hook-ran"]}}}
    await api.request("POST", PODS, body)

    async def running() -> bool:
        status = (await api.request("GET", f"{PODS}/graceful")).body.get("status") or {}
        return status.get("phase") == "Running"

    await eventually(running, "the pod running")
    events = await watch_deletion(api, "graceful", {"gracePeriodSeconds": 10})

    terminated = [
        e["object"]["status"]["containerStatuses"][0]["state"].get("terminated")
        for e in events
        if e["type"] == "MODIFIED"
    ]
    final = [t for t in terminated if t]
    assert final, events
    assert (final[0]["exitCode"], final[0]["reason"]) == (7, "Error")
    before_delete = events[-2]["object"]
    assert ready_of(before_delete) == "False"
    assert before_delete["status"]["phase"] == "Failed"


async def test_unconfined_a_backgrounded_child_ends_with_its_container() -> None:
    # --run-pods=unsafe: no PID namespace; the container's process group is killed when its
    # main process exits (a setsid child would escape it: docs/local-cluster.md says so).
    mark = marker()
    async with (
        LocalCluster(run_pods="unsafe") as cluster,
        raw_api(cluster.url, cluster.token) as client,
    ):
        await client.request("POST", PODS, pod("bg", f"sleep {mark}1 & echo bye"))

        async def succeeded() -> bool:
            status = (await client.request("GET", f"{PODS}/bg")).body.get("status") or {}
            return status.get("phase") == "Succeeded"

        await eventually(succeeded, "the pod Succeeded though its child was still sleeping")
        assert await eventually(lambda: _none_left(mark), "no process left") is True


@needs_isolation
async def test_a_deleted_pods_directory_and_logs_are_removed() -> None:
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as client,
    ):
        await client.request("POST", PODS, pod("tidy", "echo kept > file; echo logged; sleep 60"))
        created = (await client.request("GET", f"{PODS}/tidy")).body
        kubelet: Any = cluster.server.pod_runtime if cluster.server else None

        async def log_written() -> Any:
            path = kubelet.container_log_path(created["metadata"]["uid"], "app")
            return path if path is not None and path.stat().st_size else None

        directory = (await eventually(log_written, "the log written")).parents[2]
        await client.request("DELETE", f"{PODS}/tidy", {"gracePeriodSeconds": 1})

        async def removed() -> bool:
            return not directory.exists()

        await eventually(removed, "the pod's directory removed")


@needs_isolation
async def test_a_failing_pre_stop_hook_is_an_event_and_the_stop_goes_on(api: RawAPI) -> None:
    body = pod("hooked", "sleep 60")
    hook = {"exec": {"command": ["sh", "-c", "echo nope; exit 3"]}}
    body["spec"]["containers"][0]["lifecycle"] = {"preStop": hook}
    created = (await api.request("POST", PODS, body)).body
    uid = created["metadata"]["uid"]

    async def running() -> bool:
        status = (await api.request("GET", f"{PODS}/hooked")).body.get("status") or {}
        return status.get("phase") == "Running"

    await eventually(running, "the pod running")
    await api.request("DELETE", f"{PODS}/hooked", {"gracePeriodSeconds": 5})

    async def failed_hook() -> list[dict[str, Any]]:
        events = (await api.request("GET", "/api/v1/namespaces/default/events")).body["items"]
        return [e for e in events if e["reason"] == "FailedPreStopHook"]

    (event,) = await eventually(failed_hook, "a FailedPreStopHook event")
    assert event["type"] == "Warning"
    assert event["involvedObject"]["fieldPath"] == "spec.containers{app}"
    assert event["message"] == (
        'Exec lifecycle hook ([sh -c echo nope; exit 3]) for Container "app" in Pod '
        f"\"hooked_default({uid})\" failed - error: command 'sh -c echo nope; exit 3' exited "
        'with 3: , message: "nope\\n"'
    )
