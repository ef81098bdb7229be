"""cnat on a cluster whose clock is moved from the command line (``serve --clock manual``):
the At waits for its schedule on the cluster's clock, fires when ``setpoint cluster clock
advance`` passes it, and its pod ends when the clock moves on. The operator follows the
cluster's clock (``follow_cluster_clock=True``, as ``setpoint run --follow-cluster-clock``)."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import Iterator
from datetime import timedelta

import pytest
from cnat_operator.api.v1alpha1.at import At, AtSpec
from cnat_operator.controllers.at import SCHEDULE_LAYOUT
from cnat_operator.operator import op

from setpoint import Client
from setpoint.testing import (
    BackgroundCluster,
    advance_clock,
    install_crds,
    read_clock,
    run_operator,
    wait_for,
    wait_for_event,
)

TIMEOUT = 30.0


@pytest.fixture
def clock_namespace(manual_clock_cluster: BackgroundCluster) -> Iterator[str]:
    name = "cnat-" + secrets.token_hex(4)
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


async def test_an_at_fires_when_the_cluster_clock_is_advanced_past_its_schedule(
    manual_clock_cluster: BackgroundCluster, clock_namespace: str
) -> None:
    kubeconfig = str(manual_clock_cluster.kubeconfig_path)
    async with await Client.from_kubeconfig(kubeconfig) as client:
        await install_crds(client, At)
        now = (await read_clock(client)).now
        schedule = (now + timedelta(hours=1)).strftime(SCHEDULE_LAYOUT)
        at = At(
            metadata={"name": "later", "namespace": clock_namespace},
            spec=AtSpec(schedule=schedule, command="echo YAY"),
        )
        async with run_operator(
            op, kubeconfig=kubeconfig, namespace=clock_namespace, follow_cluster_clock=True
        ):
            await client.create(at)

            async def status() -> At:
                return await client.get(At, "later", namespace=clock_namespace)

            pending = await wait_for(
                status,
                lambda a: a.status is not None and a.status.phase == "PENDING",
                timeout=TIMEOUT,
                what="the At PENDING",
            )
            assert pending.status is not None
            assert pending.status.message == f"runs at {schedule}"

            shown = await setpoint_cluster_clock(manual_clock_cluster, "advance", "1h")
            assert shown.startswith(schedule[:16])  # the minute of the schedule
            await wait_for(
                status,
                lambda a: a.status is not None and a.status.phase == "RUNNING",
                timeout=TIMEOUT,
                what="the At RUNNING once the clock passed its schedule",
            )
            # The operator's Events carry the cluster's time too (an hour after the real one).
            created = await client.get(At, "later", namespace=clock_namespace)
            running = await wait_for_event(client, created, reason="Running", timeout=TIMEOUT)
            assert running["eventTime"][:13] == schedule[:13]  # the schedule's day and hour
            # The simulated command runs one second of the cluster's clock.
            await advance_clock(client, "1s")
            done = await wait_for(
                status,
                lambda a: a.status is not None and a.status.phase == "DONE",
                timeout=TIMEOUT,
                what="the At DONE",
            )
            assert done.status is not None and done.status.result == "Succeeded"
