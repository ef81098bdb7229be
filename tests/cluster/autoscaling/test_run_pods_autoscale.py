"""The autoscaling walkthrough on real processes: a ``--run-pods`` Deployment whose processes
burn CPU for a while is scaled up by a HorizontalPodAutoscaler made with ``kubectl
autoscale``, and back down once they are idle (real clock: about a minute, hence slow)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow

#: A Python a pod can run: --run-pods sandboxes see /usr, not this virtualenv.
POD_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
#: Busy a fifth of the time for 20 s (about 200m of CPU), then idle.
BURN = """
import time
end = time.time() + 20
while time.time() < end:
    busy = time.time() + 0.02
    while time.time() < busy:
        pass
    time.sleep(0.08)
time.sleep(3600)
"""
LIMIT_SECONDS = 150.0


def _deployment() -> str:
    container = {
        "name": "burn",
        "image": "python",
        "command": [POD_PYTHON, "-c", BURN],
        "resources": {"requests": {"cpu": "20m"}},
    }
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "burn"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "burn"}},
                "template": {
                    "metadata": {"labels": {"app": "burn"}},
                    "spec": {"containers": [container]},
                },
            },
        }
    )


def _until(kubectl: Kubectl, what: str, check: Any) -> dict[str, Any]:
    deadline = time.monotonic() + LIMIT_SECONDS
    while True:
        hpa: dict[str, Any] = kubectl.json("get", "hpa.v2.autoscaling", "burn")
        if check(hpa.get("status") or {}):
            return hpa
        assert time.monotonic() < deadline, f"{what}: {hpa.get('status')}"
        time.sleep(1.0)


def test_burning_processes_scale_up_then_idle_ones_scale_down(tmp_path: Path) -> None:
    cluster = BackgroundCluster(in_memory=True, run_pods=True).start()
    try:
        kubectl = Kubectl(cluster.kubeconfig_path, tmp_path / "cache")
        kubectl.run("create", "-f", "-", stdin=_deployment())
        kubectl.run("autoscale", "deployment", "burn", "--cpu-percent=50", "--min=1", "--max=2")
        # No five-minute wait for the way down: the v2 view takes a behavior.
        kubectl.run(
            "patch",
            "hpa.v2.autoscaling",
            "burn",
            "--type=merge",
            "-p",
            '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":0}}}}',
        )
        up = _until(kubectl, "scaled up", lambda s: s.get("desiredReplicas") == 2)
        metric = up["status"]["currentMetrics"][0]["resource"]["current"]
        assert metric["averageUtilization"] > 50
        _until(kubectl, "scaled down", lambda s: s.get("desiredReplicas") == 1)
        events = kubectl.run("get", "events", "--field-selector=involvedObject.name=burn").stdout
        assert "New size: 2; reason: cpu resource utilization" in events
        assert "New size: 1; reason: All metrics below target" in events
    finally:
        cluster.stop()
