"""An owner chain wakes the primary: Memcached → Deployment → ReplicaSet → Pod.

A Pod's controller reference names its ReplicaSet, not the Memcached that owns the Deployment.
With ``owns_through=[[Deployment, ReplicaSet, Pod]]`` a change that touches only a Pod (here an
annotation, which changes neither the ReplicaSet's nor the Deployment's status) reconciles the
Memcached; with ``owns=[Deployment]`` alone it does not.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

from setpoint import kinds
from setpoint.api.gvk import ObjectKey
from setpoint.api.owners import set_controller_reference
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.controller.owner_chain import EnqueueRequestForOwnerChain
from setpoint.controller.reconcile import Request
from setpoint.manager.context import Context
from setpoint.manager.operator import Operator
from setpoint.testing import install_crds, run_operator, wait_for

PATIENCE = 30.0
#: How long a reconcile that must not come is waited for.
QUIET_SECONDS = 1.0


def memcached_crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"memcacheds.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "memcacheds", "singular": "memcached", "kind": "Memcached"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def memcached_operator(group: str, runs: list[str], *, through: bool) -> Operator:
    """Creates one Deployment per Memcached and records each run."""
    op = Operator("memcached")
    chain = {"owns_through": [[kinds.Deployment, kinds.ReplicaSet, kinds.Pod]]}
    wiring: dict[str, Any] = chain if through else {"owns": [kinds.Deployment]}

    @op.reconciler(for_=(f"{group}/v1", "Memcached"), **wiring)
    async def reconcile(ctx: Context, request: Request) -> None:
        runs.append(request.name)
        memcached = await ctx.get()
        if memcached is None or await ctx.get(kinds.Deployment, request.name) is not None:
            return
        labels = {"app": request.name}
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": request.name, "namespace": request.namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "memcached", "image": "memcached"}]},
                },
            },
        }
        set_controller_reference(memcached, deployment)
        await ctx.client.create(deployment)

    return op


async def _converged_pod(client: Client, namespace: str) -> dict[str, Any]:
    async def running_pod() -> dict[str, Any] | None:
        pods = [
            p
            for p in await client.list("v1", "Pod", namespace=namespace)
            if (p.get("status") or {}).get("phase") == "Running"
        ]
        return pods[0] if pods else None

    pod: dict[str, Any] = await wait_for(running_pod, timeout=PATIENCE, what="a Running pod")
    return pod


@pytest.mark.parametrize("through", [True, False], ids=["owns_through", "owns_only"])
async def test_a_pod_change_wakes_the_memcached_only_through_the_owner_chain(
    client: Client, kubeconfig: str, namespace: str, through: bool
) -> None:
    group = f"chain{secrets.token_hex(4)}.example.com"
    await install_crds(client, memcached_crd(group))
    runs: list[str] = []
    operator = memcached_operator(group, runs, through=through)
    async with run_operator(operator, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Memcached",
                "metadata": {"name": "cache", "namespace": namespace},
                "spec": {"size": 1},
            }
        )
        pod = await _converged_pod(client, namespace)
        await asyncio.sleep(QUIET_SECONDS)  # let the Deployment's status events settle
        before = len(runs)
        await client.patch(pod, {"metadata": {"annotations": {"poked": "yes"}}})
        if through:
            await wait_for(lambda: len(runs) > before, timeout=PATIENCE, what="a reconcile")
            assert runs[-1] == "cache"
        else:
            await asyncio.sleep(QUIET_SECONDS)
            assert len(runs) == before


def test_the_declaration_owns_the_first_kind_and_watches_the_descendants() -> None:
    operator = memcached_operator("chain.example.com", [], through=True)
    (declaration,) = operator.declarations
    assert declaration.owns == (("apps/v1", "Deployment"),)
    assert declaration.watches == (("apps/v1", "ReplicaSet"), ("v1", "Pod"))


def _cached(kind: str, name: str, uid: str, owner: tuple[str, str, str]) -> CachedObject:
    owner_kind, owner_name, owner_uid = owner
    api_version = "cache.example.com/v1" if owner_kind == "Memcached" else "apps/v1"
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": uid,
        "ownerReferences": [
            {
                "apiVersion": api_version,
                "kind": owner_kind,
                "name": owner_name,
                "uid": owner_uid,
                "controller": True,
            }
        ],
    }
    return CachedObject.from_dict({"apiVersion": "v1", "kind": kind, "metadata": metadata})


class _Queue:
    def __init__(self) -> None:
        self.keys: list[ObjectKey] = []

    def add(self, key: ObjectKey) -> None:
        self.keys.append(key)


def test_a_missing_or_replaced_intermediate_ends_the_walk_with_no_request() -> None:
    replica_set = _cached("ReplicaSet", "rs", "rs-uid", ("Deployment", "web", "d-uid"))
    deployment = _cached("Deployment", "web", "d-uid", ("Memcached", "cache", "m-uid"))
    cached = {("ReplicaSet", "rs"): replica_set, ("Deployment", "web"): deployment}
    handler = EnqueueRequestForOwnerChain(
        ("cache.example.com/v1", "Memcached"),
        [("apps/v1", "ReplicaSet"), ("apps/v1", "Deployment")],
        lambda _api, kind, _ns, name: cached.get((kind, name)),
    )
    queue = _Queue()
    handler.on_create(_cached("Pod", "p", "p-uid", ("ReplicaSet", "rs", "rs-uid")), queue)
    assert queue.keys == [ObjectKey("ns", "cache")]

    queue = _Queue()
    handler.on_create(_cached("Pod", "p", "p-uid", ("ReplicaSet", "rs", "other-uid")), queue)
    assert queue.keys == []  # a newer ReplicaSet of the same name: not this pod's owner

    del cached[("Deployment", "web")]
    handler.on_create(_cached("Pod", "p", "p-uid", ("ReplicaSet", "rs", "rs-uid")), queue)
    assert queue.keys == []  # the Deployment is not cached (yet)
