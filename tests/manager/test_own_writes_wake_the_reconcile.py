"""A reconcile's own writes wake it again by default, as in controller-runtime.

The seed's cnat ``At`` is ported the controller-runtime way, step for step: a run that finds a
due schedule writes ``status.phase = RUNNING`` with an update of the status and returns, without
a requeue; the next step (create the pod) runs only because that write's event comes back. With
the default options it converges; with the ``ignore_own_writes=True`` opt-in it stalls at
RUNNING until someone else changes the At, the opt-in's documented limit.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime
from typing import Any

import pytest

from setpoint import kinds
from setpoint.api.owners import set_controller_reference
from setpoint.client.client import Client
from setpoint.controller.reconcile import Request, Result
from setpoint.manager.context import Context
from setpoint.manager.operator import Operator
from setpoint.testing import install_crds, run_operator, wait_for

#: Generous: the machine running the tests is shared.
PATIENCE = 30.0
#: How long a stalled At is watched for a pod that must not come.
STALL_SECONDS = 1.0
PENDING, RUNNING, DONE = "PENDING", "RUNNING", "DONE"
#: The original's only layout (Go's ``2006-01-02T15:04:05Z``).
SCHEDULE_LAYOUT = "%Y-%m-%dT%H:%M:%SZ"


def at_crd(group: str) -> dict[str, Any]:
    """cnat's At: namespaced, status subresource, string fields."""
    string = {"type": "string"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"ats.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "ats", "singular": "at", "kind": "At"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"schedule": string, "command": string},
                                },
                                "status": {"type": "object", "properties": {"phase": string}},
                            },
                        }
                    },
                }
            ],
        },
    }


def cnat_operator(group: str, *, ignore_own_writes: bool | None = None) -> Operator:
    """The seed's At reconcile, unchanged in its logic; ``None``: the default options."""
    op = Operator("cnat")
    options: dict[str, Any] = {}
    if ignore_own_writes is not None:
        options["ignore_own_writes"] = ignore_own_writes

    @op.reconciler(for_=(f"{group}/v1alpha1", "At"), owns=[kinds.Pod], **options)
    async def reconcile(ctx: Context, request: Request) -> Result | None:
        at = await ctx.get()
        if at is None:
            return None  # NotFound: stop
        status = at.setdefault("status", {})
        phase = status.get("phase") or PENDING
        if phase == PENDING:
            schedule = datetime.strptime(at["spec"]["schedule"], SCHEDULE_LAYOUT)
            due = schedule.replace(tzinfo=UTC) - ctx.now()
            if due.total_seconds() > 0:
                return Result(requeue_after=due.total_seconds())
            status["phase"] = RUNNING
            await ctx.client.update_status(at)
            return None  # the status write's event runs the next step
        if phase == RUNNING:
            name = f"{request.name}-pod"
            pod = await ctx.get(kinds.Pod, name)
            if pod is None:
                child = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": name,
                        "namespace": request.namespace,
                        "labels": {"app": request.name},
                    },
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {
                                "name": "busybox",
                                "image": "busybox",
                                "command": at["spec"]["command"].split(" "),
                            }
                        ],
                    },
                }
                set_controller_reference(at, child)
                await ctx.client.create(child)
                return None  # the pod's events run the next step
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                status["phase"] = DONE
                await ctx.client.update_status(at)
            return None  # otherwise: wait for a pod event
        return None  # DONE or an unknown phase: nothing to do

    return op


@pytest.fixture
def group() -> str:
    return f"cnat{secrets.token_hex(4)}.example.com"


async def create_at(client: Client, group: str, namespace: str) -> dict[str, Any]:
    at = {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "At",
        "metadata": {"name": "example-at", "namespace": namespace},
        "spec": {"schedule": "2019-04-12T10:12:00Z", "command": "echo YAY"},
    }
    created: dict[str, Any] = await client.create(at)
    return created


async def phase(client: Client, group: str, namespace: str) -> str:
    at = await client.get(f"{group}/v1alpha1", "At", "example-at", namespace=namespace)
    return str((at.get("status") or {}).get("phase") or "")


async def test_cnat_at_written_the_controller_runtime_way_converges_by_default(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    await install_crds(client, at_crd(group))
    async with run_operator(cnat_operator(group), kubeconfig=kubeconfig, namespace=namespace):
        await create_at(client, group, namespace)
        await wait_for(
            lambda: phase(client, group, namespace),
            lambda value: value == DONE,
            timeout=PATIENCE,
            what="the At to be DONE",
        )
    pod = await client.get("v1", "Pod", "example-at-pod", namespace=namespace)
    assert pod["spec"]["containers"][0]["command"] == ["echo", "YAY"]
    assert pod["status"]["phase"] == "Succeeded"
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("At", "example-at", True)


async def test_ignore_own_writes_opt_in_stalls_the_same_at_until_someone_else_writes(
    client: Client, kubeconfig: str, namespace: str, group: str
) -> None:
    """The opt-in drops the event of the RUNNING write, so no run creates the pod; the next
    change made by someone else (here a label) wakes the reconcile and it goes on."""
    await install_crds(client, at_crd(group))
    opted_in = cnat_operator(group, ignore_own_writes=True)
    async with run_operator(opted_in, kubeconfig=kubeconfig, namespace=namespace) as operator:
        at = await create_at(client, group, namespace)
        await wait_for(
            lambda: phase(client, group, namespace),
            lambda value: value == RUNNING,
            timeout=PATIENCE,
            what="the At to be RUNNING",
        )

        async def cached_phase() -> str:
            cached = await operator.cache.get_cached(
                f"{group}/v1alpha1", "At", "example-at", namespace
            )
            status = cached.to_dict().get("status") if cached is not None else None
            return str((status or {}).get("phase") or "")

        # The operator's cache has the RUNNING write's event (so it was seen, and dropped).
        await wait_for(cached_phase, lambda value: value == RUNNING, timeout=PATIENCE)
        await asyncio.sleep(STALL_SECONDS)
        assert list(await client.list("v1", "Pod", namespace=namespace)) == []
        assert await phase(client, group, namespace) == RUNNING

        await client.patch(at, {"metadata": {"labels": {"poke": "1"}}})
        await wait_for(
            lambda: phase(client, group, namespace),
            lambda value: value == DONE,
            timeout=PATIENCE,
            what="the At to be DONE after the label change",
        )
