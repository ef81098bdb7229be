"""Metacontroller's IndexedJob test (``examples/indexedjob/test.sh``) against the Python hook, on
the local cluster (whose kubelet runs a Pod with a command to completion in about a second)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from indexedjob_operator.api import IndexedJob
from indexedjob_operator.operator import index_of, op

from setpoint.client import Client
from setpoint.testing import install_crds, run_operator, wait_for

JOB = {
    "apiVersion": "ctl.enisoc.com/v1",
    "kind": "IndexedJob",
    "metadata": {"name": "print-index"},
    "spec": {
        "completions": 4,
        "parallelism": 2,
        "template": {
            "metadata": {"labels": {"app": "print-index"}},
            "spec": {
                "restartPolicy": "OnFailure",
                "containers": [
                    {
                        "name": "print-index",
                        "image": "busybox",
                        "command": ["sh", "-c", "echo ${JOB_INDEX}"],
                    }
                ],
            },
        },
    },
}


@pytest.fixture
async def operator(client: Client, kubeconfig: str, namespace: str) -> Any:
    await install_crds(client, IndexedJob)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace) as running:
        yield running


def test_index_of_reads_only_this_jobs_names() -> None:
    assert index_of("job", "job-3") == 3
    assert index_of("job", "job-x") == -1
    assert index_of("job", "other-3") == -1
    assert index_of("a-b", "a-b-12") == 12


async def test_runs_every_index_at_most_parallelism_at_a_time_then_completes(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create({**JOB, "metadata": {**JOB["metadata"], "namespace": namespace}})
    most_running = 0

    async def watch_running() -> None:
        nonlocal most_running
        while True:
            pods = await client.list("v1", "Pod", namespace=namespace)
            running = [
                p
                for p in pods
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]
            most_running = max(most_running, len(running))
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch_running())
    try:
        job = await wait_for(
            lambda: client.get(
                "ctl.enisoc.com/v1", "IndexedJob", "print-index", namespace=namespace
            ),
            lambda j: (j.get("status") or {}).get("succeeded") == 4,
            timeout=30,
            what="4 successful completions",
        )
    finally:
        watcher.cancel()
    assert job["status"]["conditions"] == [{"type": "Complete", "status": "True"}]
    assert most_running <= 2
    pods = await client.list("v1", "Pod", namespace=namespace)
    assert sorted(p["metadata"]["name"] for p in pods) == [f"print-index-{i}" for i in range(4)]
    for pod in pods:
        index = pod["metadata"]["name"].rsplit("-", 1)[1]
        (container,) = pod["spec"]["containers"]
        assert {"name": "JOB_INDEX", "value": index} in container["env"]
        assert pod["metadata"]["labels"]["app"] == "print-index"
        assert pod["metadata"]["labels"]["controller-uid"] == job["metadata"]["uid"]
