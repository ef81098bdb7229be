"""Pod Stage files in kwok's format, applied with kubectl, move pods on the cluster clock;
a Stage the simulation cannot run is refused with one line naming it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from setpoint import Client, kinds
from setpoint.api.clock import FakeClock
from setpoint.testing import BackgroundCluster, advance_clock, apply_stages
from tests.cluster.kubectl_runner import Kubectl

STAGES = Path(__file__).parent / "stages"
PATIENCE_SECONDS = 20.0


@pytest.fixture
def background(tmp_path: Path) -> Iterator[BackgroundCluster]:
    background = BackgroundCluster(clock=FakeClock()).start()
    try:
        yield background
    finally:
        background.stop()


@pytest.fixture
def cluster(background: BackgroundCluster, tmp_path: Path) -> tuple[FakeClock, Kubectl]:
    clock = background.cluster.clock if background.cluster is not None else None
    assert isinstance(clock, FakeClock)
    return clock, Kubectl(background.kubeconfig_path, tmp_path / "cache")


def _until(check: Callable[[], Any], what: str, patience: float = PATIENCE_SECONDS) -> Any:
    deadline = time.monotonic() + patience
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached; last value: {last!r}")


def _advance_until(clock: FakeClock, check: Callable[[], Any], what: str, step: float = 6) -> Any:
    """Move the clock 6 s at a time (the longest delay of the general stages) until
    ``check`` passes: a stage's delay starts when the kubelet sees the pod, which a test
    cannot observe, so one step may come too early."""
    for _ in range(10):
        clock.advance(step)
        try:
            return _until(check, what, patience=1.0)
        except AssertionError:
            continue
    return _until(check, what)


def _pod(kubectl: Kubectl, name: str) -> dict[str, Any] | None:
    result = kubectl.run("get", "pod", name, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def _phase(kubectl: Kubectl, name: str) -> str | None:
    pod = _pod(kubectl, name)
    return None if pod is None else (pod.get("status") or {}).get("phase")


def test_general_pod_stages_run_a_pod_and_a_job_on_the_clock(
    cluster: tuple[FakeClock, Kubectl],
) -> None:
    clock, kubectl = cluster
    applied = kubectl.run("apply", "-f", str(STAGES / "general"))
    assert "stage.kwok.x-k8s.io/create created" in applied.stdout
    kubectl.run("run", "web", "--image=nginx")
    # Every general stage waits 1 s plus up to 5 s of jitter: nothing happens until then.
    pod = _until(lambda: _pod(kubectl, "web"), "the pod")
    assert "podIP" not in pod.get("status", {})
    pod = _advance_until(
        clock,
        lambda: (p := _pod(kubectl, "web")) and p["status"].get("podIP") and p,
        "create (an IP, ContainerCreating)",
    )
    assert pod["status"]["phase"] == "Pending"
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting == {"reason": "ContainerCreating"}
    _advance_until(clock, lambda: _phase(kubectl, "web") == "Running", "ready (Running)")
    pod = _pod(kubectl, "web")
    assert pod is not None
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert ready["Ready"] == "True" and ready["PodScheduled"] == "True"
    assert pod["status"]["containerStatuses"][0]["ready"] is True

    kubectl.run("create", "job", "once", "--image=busybox")
    _advance_until(  # create, ready, then complete (the pod is a Job's)
        clock,
        lambda: '"Complete"' in kubectl.run("get", "job", "once", "-o", "json").stdout,
        "the Job complete (complete: Succeeded)",
    )

    kubectl.run("delete", "pod", "web", "--wait=false")
    # delete: 1 s, or up to the end of the grace period (30 s).
    _advance_until(clock, lambda: _pod(kubectl, "web") is None, "delete (the pod gone)", 31)


def test_fast_stages_and_a_chaos_stage(cluster: tuple[FakeClock, Kubectl]) -> None:
    clock, kubectl = cluster
    kubectl.run("apply", "-f", str(STAGES / "fast"), "-f", str(STAGES / "chaos"))
    kubectl.run("run", "quick", "--image=nginx")
    _until(lambda: _phase(kubectl, "quick") == "Running", "ready (at once)")
    kubectl.run(
        "run",
        "broken",
        "--image=nginx",
        "--labels=fail.stage.example.com=true",
        "--annotations=fail.stage.example.com/exit-code=3",
        "--annotations=fail.stage.example.com/delay=0s",
    )
    _until(lambda: _phase(kubectl, "broken") == "Running", "ready first")
    # The chaos stage: its delay (0s) plus up to 1 s of jitter.
    _advance_until(clock, lambda: _phase(kubectl, "broken") == "Failed", "the chaos stage", 1)
    pod = _pod(kubectl, "broken")
    assert pod is not None
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "containerFailed")
    kubectl.run("delete", "pod", "quick", "--wait=false")
    _until(lambda: _pod(kubectl, "quick") is None, "delete (at once)")


def test_a_stage_the_simulation_cannot_run_is_refused(cluster: tuple[FakeClock, Kubectl]) -> None:
    _, kubectl = cluster
    stage = {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": "fancy"},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {},
            "next": {"statusTemplate": "phase: {{ .status.phase | lower }}"},
        },
    }
    result = kubectl.run("apply", "-f", "-", stdin=json.dumps(stage), check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        'The Stage "fancy" is invalid: spec.next.statusTemplate: Invalid value: '
        'function "lower" is not supported'
    ]
    stage["spec"] = {
        "resourceRef": {"kind": "Pod"},
        "selector": {"matchExpressions": [{"key": ".status.phase", "operator": "Equals"}]},
    }
    result = kubectl.run("apply", "-f", "-", stdin=json.dumps(stage), check=False)
    assert result.returncode == 1
    assert "spec.selector.matchExpressions[0].operator: Invalid value: Unsupported value" in (
        result.stderr
    )
    assert kubectl.run("get", "stages", "-o", "name").stdout == ""


async def test_the_testing_kit_applies_stages_and_moves_the_clock(
    background: BackgroundCluster,
) -> None:
    async with await Client.from_kubeconfig(str(background.kubeconfig_path)) as client:
        applied = await apply_stages(client, STAGES / "general")
        assert sorted(s["metadata"]["name"] for s in applied) == [
            "complete",
            "create",
            "delete",
            "ready",
        ]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "staged", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
        await client.create(pod)

        async def status() -> dict[str, Any]:
            found = await client.get(*kinds.Pod, "staged", namespace="default")
            return dict(found.get("status") or {})

        # create, then ready: each waits at most 6 s of the clock from when the
        # kubelet saw the pod as the stage before left it, which the test cannot see: it
        # moves the clock on until the pod is Running.
        for _ in range(10):
            await advance_clock(client, "6s")
            await asyncio.sleep(0.3)
            if (await status()).get("phase") == "Running":
                break
        found = await status()
        assert found.get("phase") == "Running", found
        assert found["containerStatuses"][0]["ready"] is True
