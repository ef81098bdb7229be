"""kwok's own pod Stage files, applied unchanged with kubectl, move pods on the cluster clock;
a Stage the simulation cannot run is refused with one line naming it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.api.clock import FakeClock
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

STAGES = Path(__file__).parent / "kwok_stages"
PATIENCE_SECONDS = 20.0


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[FakeClock, Kubectl]]:
    clock = FakeClock()
    background = BackgroundCluster(clock=clock).start()
    try:
        yield clock, Kubectl(background.kubeconfig_path, tmp_path / "cache")
    finally:
        background.stop()


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + PATIENCE_SECONDS
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached; last value: {last!r}")


def _pod(kubectl: Kubectl, name: str) -> dict[str, Any] | None:
    result = kubectl.run("get", "pod", name, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def _phase(kubectl: Kubectl, name: str) -> str | None:
    pod = _pod(kubectl, name)
    return None if pod is None else (pod.get("status") or {}).get("phase")


def test_kwoks_general_pod_stages_run_a_pod_and_a_job_on_the_clock(
    cluster: tuple[FakeClock, Kubectl],
) -> None:
    clock, kubectl = cluster
    applied = kubectl.run("apply", "-f", str(STAGES / "general"))
    assert "stage.kwok.x-k8s.io/pod-create created" in applied.stdout
    kubectl.run("run", "web", "--image=nginx")
    # Every general stage waits 1 s plus up to 5 s of jitter: nothing happens until then.
    pod = _until(lambda: _pod(kubectl, "web"), "the pod")
    assert "podIP" not in pod.get("status", {})
    clock.advance(6)
    pod = _until(
        lambda: (p := _pod(kubectl, "web")) and p["status"].get("podIP") and p,
        "pod-create (an IP, ContainerCreating)",
    )
    assert pod["status"]["phase"] == "Pending"
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting == {"reason": "ContainerCreating"}
    clock.advance(6)
    _until(lambda: _phase(kubectl, "web") == "Running", "pod-ready (Running)")
    pod = _pod(kubectl, "web")
    assert pod is not None
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert ready["Ready"] == "True" and ready["PodScheduled"] == "True"
    assert pod["status"]["containerStatuses"][0]["ready"] is True

    kubectl.run("create", "job", "once", "--image=busybox")
    for _ in range(4):  # create, ready, complete: a few seconds of clock each
        clock.advance(6)
        time.sleep(0.2)
    _until(
        lambda: "Complete" in kubectl.run("get", "job", "once", "-o", "json").stdout,
        "the Job complete (pod-complete: Succeeded)",
    )

    kubectl.run("delete", "pod", "web", "--wait=false")
    clock.advance(31)  # pod-delete: when the grace period is over
    _until(lambda: _pod(kubectl, "web") is None, "pod-delete (the pod gone)")


def test_kwoks_fast_stages_and_a_chaos_stage(cluster: tuple[FakeClock, Kubectl]) -> None:
    clock, kubectl = cluster
    kubectl.run("apply", "-f", str(STAGES / "fast"), "-f", str(STAGES / "chaos"))
    kubectl.run("run", "quick", "--image=nginx")
    _until(lambda: _phase(kubectl, "quick") == "Running", "pod-ready (at once)")
    kubectl.run(
        "run",
        "broken",
        "--image=nginx",
        "--labels=pod-container-running-failed.stage.kwok.x-k8s.io=true",
        "--annotations=pod-container-running-failed.stage.kwok.x-k8s.io/exit-code=3",
        "--annotations=pod-container-running-failed.stage.kwok.x-k8s.io/delay=0s",
    )
    _until(lambda: _phase(kubectl, "broken") == "Running", "pod-ready first")
    clock.advance(1)  # the chaos stage: its delay (0s) plus up to 1 s of jitter
    _until(lambda: _phase(kubectl, "broken") == "Failed", "the chaos stage (Failed)")
    pod = _pod(kubectl, "broken")
    assert pod is not None
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "containerFailed")
    kubectl.run("delete", "pod", "quick", "--wait=false")
    _until(lambda: _pod(kubectl, "quick") is None, "pod-delete (at once)")


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
