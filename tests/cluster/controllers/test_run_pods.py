"""``--run-pods``: containers' commands run as local processes; logs, restarts, deletion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def clock_and_api() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock()
    async with (
        LocalCluster(clock=clock, run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        yield clock, api


def shell_pod(name: str, script: str, restart: str = "Never", **extra: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "busybox", "command": ["sh", "-c", script], **extra}
    return {
        "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": [container]},
    }


async def status_when(api: RawAPI, name: str, check: Any) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        reply = await api.request("GET", f"{PODS}/{name}")
        status = reply.body.get("status") or {}
        return status if check(status) else None

    return await eventually(probe, f"pod {name} status")


async def test_the_command_runs_with_the_pod_env_and_its_exit_code_sets_the_phase(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    _, api = clock_and_api
    await api.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "cfg"}, "data": {"greeting": "hello"}},
    )
    env = [
        {"name": "PLAIN", "value": "v"},
        {"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "greeting"}}},
        {"name": "ME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    await api.request(
        "POST", PODS, shell_pod("env", "echo $PLAIN $GREETING $ME; echo oops >&2; exit 3", env=env)
    )

    status = await status_when(api, "env", lambda s: s.get("phase") == "Failed")

    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    logs = await api.request("GET", f"{PODS}/env/log")
    assert logs.raw.decode().splitlines() == ["v hello env", "oops"]
    tail = await api.request("GET", f"{PODS}/env/log?tailLines=1&timestamps=true")
    stamp, text = tail.raw.decode().rstrip("\n").split(" ", 1)
    assert text == "oops"
    assert stamp.endswith("Z") and "T" in stamp


async def test_a_missing_config_map_keeps_the_container_waiting(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    _, api = clock_and_api
    env = [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k"}}}]
    await api.request("POST", PODS, shell_pod("waits", "true", env=env))

    status = await status_when(
        api,
        "waits",
        lambda s: "waiting" in (s.get("containerStatuses") or [{}])[0].get("state", {}),
    )

    waiting = status["containerStatuses"][0]["state"]["waiting"]
    assert waiting == {
        "reason": "CreateContainerConfigError",
        "message": 'configmap "nope" not found',
    }
    assert status["phase"] == "Pending"


async def test_a_failing_container_restarts_with_crash_loop_back_off(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    await api.request("POST", PODS, shell_pod("crash", "echo boom; exit 1", restart="OnFailure"))

    def backing_off(status: dict[str, Any]) -> bool:
        state = (status.get("containerStatuses") or [{}])[0].get("state", {})
        return state.get("waiting", {}).get("reason") == "CrashLoopBackOff"

    status = await status_when(api, "crash", backing_off)
    container = status["containerStatuses"][0]
    assert container["restartCount"] == 1  # the first restart is immediate
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert container["state"]["waiting"]["message"].startswith(
        "back-off 10s restarting failed container=app pod=crash_default("
    )
    assert status["phase"] == "Running"
    previous = await api.request("GET", f"{PODS}/crash/log?previous=true")
    assert previous.raw == b"boom\n"

    clock.advance(10)

    await status_when(
        api, "crash", lambda s: (s.get("containerStatuses") or [{}])[0].get("restartCount") == 2
    )


async def test_deletion_stops_the_process_then_removes_the_pod(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    _, api = clock_and_api
    body = shell_pod("sleeper", "echo up; exec sleep 300", restart="Always")
    await api.request("POST", PODS, body)
    await status_when(api, "sleeper", lambda s: s.get("phase") == "Running")

    answer = await api.request("DELETE", f"{PODS}/sleeper")
    assert answer.body["metadata"]["deletionTimestamp"]

    async def gone() -> bool:
        return (await api.request("GET", f"{PODS}/sleeper")).status == 404

    await eventually(gone, "the pod removed once its process stopped")
    events = (await api.request("GET", "/api/v1/namespaces/default/events")).body["items"]
    reasons = [e["reason"] for e in events if e["involvedObject"]["name"] == "sleeper"]
    assert "Killing" in reasons


async def test_args_without_a_command_are_for_the_image_entrypoint_so_nothing_runs(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    # memcached's image runs its entrypoint with these args; run as a program, "-m=64" would be
    # a missing executable and the container would crash-loop.
    _, api = clock_and_api
    pod = {
        "metadata": {"name": "cache"},
        "spec": {
            "containers": [{"name": "memcached", "image": "memcached", "args": ["-m=64", "-v"]}]
        },
    }
    assert (await api.request("POST", PODS, pod)).status == 201
    status = await status_when(api, "cache", lambda s: s.get("phase") == "Running")
    (container,) = status["containerStatuses"]
    assert container["ready"] is True and "running" in container["state"]
    assert container["restartCount"] == 0


async def test_args_naming_a_program_run_as_the_command_of_an_image_without_entrypoint(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    # busybox, alpine, ubuntu ... have no entrypoint: their args are the command (client test
    # suites write pods this way, then exec into them).
    _, api = clock_and_api
    container = {"name": "main", "image": "busybox", "args": ["/bin/sh", "-c", "echo up; exit 3"]}
    pod = {
        "metadata": {"name": "shell"},
        "spec": {"restartPolicy": "Never", "containers": [container]},
    }
    assert (await api.request("POST", PODS, pod)).status == 201
    status = await status_when(api, "shell", lambda s: s.get("phase") == "Failed")
    (state,) = status["containerStatuses"]
    assert state["state"]["terminated"]["exitCode"] == 3
    logs = await api.request("GET", f"{PODS}/shell/log")
    assert logs.raw == b"up\n"


async def test_a_container_failing_its_exec_liveness_probe_is_killed_and_restarted(
    clock_and_api: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = clock_and_api
    probe = {
        "exec": {"command": ["cat", "healthy"]},
        "initialDelaySeconds": 5,
        "periodSeconds": 2,
        "failureThreshold": 2,
    }
    pod = shell_pod("sick", "sleep 600", restart="Always", livenessProbe=probe)
    pod["spec"]["terminationGracePeriodSeconds"] = 5
    await api.request("POST", PODS, pod)
    await status_when(api, "sick", lambda s: s.get("phase") == "Running")
    clock.advance(4)  # inside the initial delay: no probe yet

    async def restarted() -> dict[str, Any] | None:
        clock.advance(1)
        status = (await api.request("GET", f"{PODS}/sick")).body.get("status") or {}
        statuses = status.get("containerStatuses") or [{}]
        return statuses[0] if statuses[0].get("restartCount") == 1 else None

    container = await eventually(restarted, "the restart after two failed probes")
    assert container["lastState"]["terminated"]["exitCode"] == 143  # SIGTERM
    events = (await api.request("GET", "/api/v1/namespaces/default/events")).body["items"]
    about = [
        (e["type"], e["reason"], e["message"])
        for e in events
        if e["involvedObject"]["name"] == "sick"
    ]
    assert ("Normal", "Killing", "Container app failed liveness probe, will be restarted") in about
    unhealthy = [m for t, r, m in about if (t, r) == ("Warning", "Unhealthy")]
    assert unhealthy and unhealthy[0].startswith("Liveness probe failed: cat:"), unhealthy
