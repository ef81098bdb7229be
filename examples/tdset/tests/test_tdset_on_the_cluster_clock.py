"""TDSet on a cluster whose clock is set from the command line (``serve --clock manual``):
the hour comes from ``setpoint cluster clock set``, the operator follows the cluster's clock,
and the Deployment is scaled when the clock enters a range."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from tdset_operator.api.v1.tdset import TDSet
from tdset_operator.operator import op

from setpoint import Client, kinds
from setpoint.testing import (
    BackgroundCluster,
    advance_clock,
    install_crds,
    read_clock,
    run_operator,
    set_clock,
    wait_for,
)

TIMEOUT = 30.0


@pytest.fixture
def clock_namespace(manual_clock_cluster: BackgroundCluster) -> Iterator[str]:
    name = "tdset-" + secrets.token_hex(4)
    manual_clock_cluster.create_namespace(name)
    try:
        yield name
    finally:
        manual_clock_cluster.delete_namespace(name)


async def setpoint_cluster_clock(cluster: BackgroundCluster, *args: str) -> str:
    """``setpoint cluster clock ARGS`` in a process of its own; its output line."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint", "cluster", "clock", *args,
        "--kubeconfig", str(cluster.kubeconfig_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def test_a_tdset_scales_at_an_hour_set_from_the_cli(
    manual_clock_cluster: BackgroundCluster, clock_namespace: str
) -> None:
    kubeconfig = str(manual_clock_cluster.kubeconfig_path)
    async with await Client.from_kubeconfig(kubeconfig) as client:
        await install_crds(client, TDSet)
        # A day ahead of the cluster's clock (it never goes back), at 17:30 UTC.
        day = ((await read_clock(client)).now + timedelta(days=2)).strftime("%Y-%m-%d")
        await set_clock(client, f"{day}T17:30:00Z")
        tdset: dict[str, Any] = {
            "apiVersion": "schedule.rs/v1",
            "kind": "TDSet",
            "metadata": {"name": "evening", "namespace": clock_namespace},
            "spec": {
                "container": {"image": "nginx", "port": 80},
                "schedulingConfig": [{"startTime": 18, "endTime": 19, "replica": 5}],
                "defaultReplica": 2,
            },
        }

        async def replicas() -> int | None:
            found = await client.get(*kinds.Deployment, "evening", namespace=clock_namespace)
            return int(found["spec"]["replicas"])

        async with run_operator(
            op, kubeconfig=kubeconfig, namespace=clock_namespace, follow_cluster_clock=True
        ):
            await client.create(tdset)
            await wait_for(replicas, lambda n: n == 2, timeout=TIMEOUT, what="2 replicas at 17:30")
            shown = await setpoint_cluster_clock(manual_clock_cluster, "set", f"{day}T18:00:00Z")
            assert shown == f"{day}T18:00:00Z (manual)"
            await wait_for(replicas, lambda n: n == 5, timeout=TIMEOUT, what="5 replicas at 18:00")
            await advance_clock(client, "1h")
            await wait_for(replicas, lambda n: n == 2, timeout=TIMEOUT, what="2 again at 19:00")
