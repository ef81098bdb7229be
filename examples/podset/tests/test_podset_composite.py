"""The PodSet acceptance scenarios again, run by the composite version of the operator
(`podset_operator/composite.py`, a sync hook of 25 lines) instead of the reconciler."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from podset_operator.api.v1alpha1.podset import PodSet, PodSetSpec
from podset_operator.composite import op, sync
from test_podset import (  # noqa: F401 - the same scenarios, collected here with this operator
    converged,
    test_deleting_the_podset_collects_its_pods,
    test_never_more_pods_than_replicas_under_a_burst_of_deletions,
    test_pods_of_other_namespaces_and_finished_pods_do_not_count,
    test_replicas_pods_owned_and_named_in_status,
    test_scaling_up_and_down_and_replacing_a_deleted_pod,
)

from setpoint.client import Client
from setpoint.testing import install_crds, run_operator


@pytest.fixture
async def operator(client: Client, kubeconfig: str, namespace: str) -> Any:
    await install_crds(client, PodSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace) as running:
        yield running


async def test_idle_podset_costs_no_hook_call_and_no_write(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(
        PodSet(metadata={"name": "web", "namespace": namespace}, spec=PodSetSpec(replicas=2))
    )
    await converged(client, namespace, 2)
    await asyncio.sleep(1)  # the kubelet's last status writes
    stats = sync.sync_stats()
    calls, writes = stats.hook_calls, stats.writes
    await asyncio.sleep(1.5)
    assert (stats.hook_calls, stats.writes) == (calls, writes)
