"""``setpoint.testing.simulate`` puts the simulation annotations where the kubelet reads them,
and a crash loop steered with it moves with ``advance_clock`` on the manual-clock cluster."""

from __future__ import annotations

import secrets
from typing import Any

from setpoint import Client, kinds
from setpoint.testing import BackgroundCluster, advance_clock, simulate, wait_for


def test_simulate_annotates_the_pod_or_its_template() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    annotated = simulate(pod, exit_code=3, run_for="2m", containers=["app"])
    assert annotated["metadata"]["annotations"] == {
        "simulate.setpoint.dev/exit-code": "3",
        "simulate.setpoint.dev/run-for": "2m",
        "simulate.setpoint.dev/containers": "app",
    }
    assert "annotations" not in pod["metadata"]  # a copy
    deployment = simulate({"kind": "Deployment", "spec": {}}, ready_after="30s")
    assert deployment["spec"]["template"]["metadata"]["annotations"] == {
        "simulate.setpoint.dev/ready-after": "30s"
    }
    cronjob = simulate({"kind": "CronJob", "spec": {}}, image_pull_error="")
    template = cronjob["spec"]["jobTemplate"]["spec"]["template"]
    assert template["metadata"]["annotations"] == {"simulate.setpoint.dev/image-pull-error": ""}


async def test_a_crash_loop_counts_restarts_as_the_test_advances_the_clock(
    manual_clock_cluster: BackgroundCluster,
) -> None:
    namespace = "crash-" + secrets.token_hex(4)
    manual_clock_cluster.create_namespace(namespace)
    try:
        async with await Client.from_kubeconfig(
            str(manual_clock_cluster.kubeconfig_path)
        ) as client:
            pod: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "crashing", "namespace": namespace},
                "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            }
            await client.create(simulate(pod, exit_code=2))

            async def app() -> dict[str, Any]:
                found = await client.get(*kinds.Pod, "crashing", namespace=namespace)
                return dict(((found.get("status") or {}).get("containerStatuses") or [{}])[0])

            await wait_for(app, lambda c: "running" in c.get("state", {}), what="running")
            await advance_clock(client, "2m")
            status = await wait_for(app, lambda c: c.get("restartCount", 0) >= 4, what="restarts")
            assert status["lastState"]["terminated"]["exitCode"] == 2
    finally:
        manual_clock_cluster.delete_namespace(namespace)
