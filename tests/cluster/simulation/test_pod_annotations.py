"""Simulated pods steered by their annotations, on a manual cluster clock: an exit code, a
crash loop with the kubelet's back-off, an image pull failure, a readiness delay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"


@pytest.fixture
async def clock_and_api() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock()
    async with (
        LocalCluster(clock=clock, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        yield clock, api


def _pod(name: str, annotations: dict[str, str], restart: str = "Always") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "restartPolicy": restart,
            "containers": [{"name": "app", "image": "registry.example/app:1.0"}],
        },
    }


async def _create(api: RawAPI, pod: dict[str, Any]) -> None:
    reply = await api.request("POST", PODS, pod)
    assert reply.status == 201, reply.body


async def _container(api: RawAPI, name: str, check: Any, what: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        status = (await api.request("GET", f"{PODS}/{name}")).body.get("status") or {}
        statuses = status.get("containerStatuses") or []
        if statuses and check(status, statuses[0]):
            return {"pod": status, **statuses[0]}
        return None

    return await eventually(found, what)


async def _event_messages(api: RawAPI, name: str) -> list[tuple[str, str, str]]:
    items = (await api.request("GET", EVENTS)).body["items"]
    return [
        (e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name
    ]


async def test_a_pod_fails_with_the_exit_code_of_its_annotation(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    await _create(
        api,
        _pod(
            "exit3",
            {"simulate.setpoint.dev/exit-code": "3", "simulate.setpoint.dev/run-for": "2m"},
            "Never",
        ),
    )
    await _container(api, "exit3", lambda p, c: "running" in c["state"], "running")
    clock.advance(119)
    status = await _container(api, "exit3", lambda p, c: p["phase"] == "Running", "still running")
    assert status["state"].keys() == {"running"}
    clock.advance(1)
    status = await _container(api, "exit3", lambda p, c: p["phase"] == "Failed", "Failed")
    terminated = status["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert status["restartCount"] == 0


async def test_a_crash_loop_backs_off_and_counts_restarts_as_the_clock_moves(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    await _create(api, _pod("crash", {"simulate.setpoint.dev/exit-code": "1"}))
    await _container(api, "crash", lambda p, c: "running" in c["state"], "running")
    # Runs 1 s, exits 1, restarted at once (restartCount 1), exits again: back-off 10 s.
    clock.advance(1)
    await _container(api, "crash", lambda p, c: c["restartCount"] == 1, "first restart")
    clock.advance(1)
    status = await _container(
        api, "crash", lambda p, c: "waiting" in c["state"], "CrashLoopBackOff"
    )
    uid = (await api.request("GET", f"{PODS}/crash")).body["metadata"]["uid"]
    assert status["state"]["waiting"] == {
        "reason": "CrashLoopBackOff",
        "message": f"back-off 10s restarting failed container=app pod=crash_default({uid})",
    }
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["pod"]["phase"] == "Running"
    assert status["ready"] is False
    clock.advance(10)
    await _container(api, "crash", lambda p, c: c["restartCount"] == 2, "second restart")
    clock.advance(1)
    status = await _container(api, "crash", lambda p, c: "waiting" in c["state"], "back-off again")
    assert status["state"]["waiting"]["message"].startswith("back-off 20s ")
    # An hour later the back-off is capped at 5 minutes and the restarts kept counting.
    clock.advance(3600)
    status = await _container(api, "crash", lambda p, c: c["restartCount"] > 10, "many restarts")
    assert 10 < status["restartCount"] < 20
    events = await _event_messages(api, "crash")
    assert (
        "Warning",
        "BackOff",
        f"Back-off restarting failed container app in pod crash_default({uid})",
    ) in events


async def test_an_image_that_cannot_be_pulled_backs_off(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    await _create(api, _pod("nopull", {"simulate.setpoint.dev/image-pull-error": ""}))
    status = await _container(api, "nopull", lambda p, c: "waiting" in c["state"], "waiting")
    waiting = status["state"]["waiting"]
    reference = "registry.example/app:1.0"
    assert waiting == {
        "reason": "ErrImagePull",
        "message": "rpc error: code = NotFound desc = failed to pull and unpack image "
        f'"{reference}": '
        f'failed to resolve reference "{reference}": {reference}: not found',
    }
    assert status["pod"]["phase"] == "Pending"
    clock.advance(1)
    status = await _container(
        api,
        "nopull",
        lambda p, c: c["state"].get("waiting", {}).get("reason") == "ImagePullBackOff",
        "ImagePullBackOff",
    )
    assert status["state"]["waiting"]["message"] == f'Back-off pulling image "{reference}"'
    assert status["started"] is False and status["restartCount"] == 0
    events = await _event_messages(api, "nopull")
    assert ("Normal", "Pulling", f'Pulling image "{reference}"') in events
    assert ("Warning", "Failed", "Error: ErrImagePull") in events
    assert ("Normal", "BackOff", f'Back-off pulling image "{reference}"') in events
    assert ("Warning", "Failed", "Error: ImagePullBackOff") in events
    assert not any(reason == "Started" for _, reason, _ in events)


async def test_a_readiness_delay_holds_the_pod_unready_until_the_clock_passes_it(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    await _create(api, _pod("slow", {"simulate.setpoint.dev/ready-after": "30s"}))
    status = await _container(api, "slow", lambda p, c: "running" in c["state"], "running")
    assert status["ready"] is False
    clock.advance(29)
    status = await _container(api, "slow", lambda p, c: True, "status")
    assert status["ready"] is False
    clock.advance(1)
    status = await _container(api, "slow", lambda p, c: c["ready"], "ready")
    ready = {c["type"]: c["status"] for c in status["pod"]["conditions"]}
    assert ready["Ready"] == "True"


async def test_an_unreadable_annotation_is_reported_and_ignored(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    _, api = clock_and_api
    await _create(api, _pod("typo", {"simulate.setpoint.dev/exit-code": "three"}))
    await _container(api, "typo", lambda p, c: "running" in c["state"], "running")

    async def warned() -> list[tuple[str, str, str]]:
        return [e for e in await _event_messages(api, "typo") if e[1] == "InvalidSimulation"]

    events = await eventually(warned, "an InvalidSimulation event")
    assert events == [
        (
            "Warning",
            "InvalidSimulation",
            "simulate.setpoint.dev/exit-code: 'three' is not an exit code (0-255)",
        )
    ]
