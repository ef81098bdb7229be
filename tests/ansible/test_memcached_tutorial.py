"""Operator SDK's Ansible Memcached tutorial, unchanged, on the local cluster.

One scenario covers the tutorial's steps, because each Ansible run costs about a second:
create -> a Deployment of `size` replicas owned by the CR and the Successful condition; scale
up and down by patching `size`; delete the Deployment -> it comes back; delete the CR -> the
finalizer role runs, then the Deployment goes through its owner reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ansible_runner")

from setpoint.ansible import load_operator
from setpoint.client import Client
from setpoint.client.errors import NotFound
from setpoint.testing import install_crds, run_operator, wait_for, wait_for_event

#: The tutorial's whole walk through Ansible runs: tens of seconds.
pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memcached-ansible"
CR_API = "cache.example.com/v1alpha1"
# Ansible runs take a second or two each on a loaded machine.
RUN_TIMEOUT = 60.0


def memcached(name: str, namespace: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": CR_API,
        "kind": "Memcached",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": size},
    }


async def replicas(client: Client, namespace: str, name: str) -> int | None:
    try:
        deployment = await client.get("apps/v1", "Deployment", name, namespace=namespace)
    except NotFound:
        return None
    return int(deployment["spec"]["replicas"])


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for item in (obj.get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return None


@pytest.mark.timeout(300)
async def test_memcached_tutorial_runs_unchanged(
    client: Client, namespace: str, kubeconfig: str, tmp_path: Path
) -> None:
    await install_crds(client, EXAMPLE / "config" / "crd" / "bases")
    op = load_operator(EXAMPLE, artifacts_root=tmp_path)
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "memcached-finalizations", "namespace": namespace},
        }
    )
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        cr = await client.create(memcached("sample", namespace, 3))
        deployment_name = "sample-memcached"
        await wait_for(
            lambda: replicas(client, namespace, deployment_name),
            lambda count: count == 3,
            timeout=RUN_TIMEOUT,
            what="the Deployment with 3 replicas",
        )
        deployment = await client.get("apps/v1", "Deployment", deployment_name, namespace=namespace)
        assert deployment["metadata"]["ownerReferences"] == [
            {
                "apiVersion": CR_API,
                "kind": "Memcached",
                "name": "sample",
                "uid": cr["metadata"]["uid"],
            }
        ]
        done = await wait_for(
            lambda: client.get(CR_API, "Memcached", "sample", namespace=namespace),
            lambda obj: (condition(obj, "Successful") or {}).get("status") == "True",
            timeout=RUN_TIMEOUT,
            what="the Successful condition",
        )
        assert done["metadata"]["finalizers"] == ["cache.example.com/finalizer"]
        running = condition(done, "Running")
        assert running is not None
        assert running["reason"] == "Successful"
        assert running["message"] == "Awaiting next reconciliation"
        assert running["ansibleResult"]["failures"] == 0
        assert running["ansibleResult"]["ok"] >= 1
        assert condition(done, "Failure") == {
            **(condition(done, "Failure") or {}),
            "status": "False",
        }
        await wait_for_event(client, cr, reason="AnsibleRunSucceeded", type="Normal")

        for size in (5, 2):
            await client.patch(
                CR_API, "Memcached", "sample", {"spec": {"size": size}}, namespace=namespace
            )
            await wait_for(
                lambda: replicas(client, namespace, deployment_name),
                lambda count, size=size: count == size,
                timeout=RUN_TIMEOUT,
                what=f"the Deployment scaled to {size}",
            )

        old_uid = (await client.get("apps/v1", "Deployment", deployment_name, namespace=namespace))[
            "metadata"
        ]["uid"]
        await client.delete("apps/v1", "Deployment", deployment_name, namespace=namespace)
        back = await wait_for(
            lambda: client.get("apps/v1", "Deployment", deployment_name, namespace=namespace),
            lambda obj: obj["metadata"]["uid"] != old_uid,
            timeout=RUN_TIMEOUT,
            what="the deleted Deployment to come back",
        )
        assert back["spec"]["replicas"] == 2

        await client.delete(CR_API, "Memcached", "sample", namespace=namespace)
        record = await wait_for(
            lambda: client.get("v1", "ConfigMap", "memcached-finalizations", namespace=namespace),
            lambda obj: bool((obj.get("data") or {}).get("sample")),
            timeout=RUN_TIMEOUT,
            what="the finalizer role's record",
        )
        assert record["data"]["sample"] == "finalized with size 2"
        await wait_for(
            lambda: _gone(client, CR_API, "Memcached", "sample", namespace),
            timeout=RUN_TIMEOUT,
            what="the Memcached to be deleted",
        )
        await wait_for(
            lambda: _gone(client, "apps/v1", "Deployment", deployment_name, namespace),
            timeout=RUN_TIMEOUT,
            what="the garbage collector to delete the Deployment",
        )


async def _gone(client: Client, api_version: str, kind: str, name: str, namespace: str) -> bool:
    try:
        await client.get(api_version, kind, name, namespace=namespace)
    except NotFound:
        return True
    return False
