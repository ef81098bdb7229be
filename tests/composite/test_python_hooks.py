"""Composite and decorator controllers declared in Python, the hooks run in-process."""

from __future__ import annotations

from typing import Any

import setpoint
from setpoint import kinds, models
from setpoint.client import Client
from setpoint.composite import SyncRequest, SyncResponse, composite, decorator
from setpoint.testing import run_operator, wait_for, wait_for_event

from .conftest import GROUP
from .test_composite_webhooks import config_map, create_thing, thing_status

THING = (f"{GROUP}/v1", "Thing")


async def test_a_python_composite_with_model_children_and_a_failing_hook(
    client: Client, kubeconfig: str, namespace: str, crds: None
) -> None:
    op = setpoint.Operator("python-composite")

    @composite(op, parent=THING, children={models.ConfigMap: "InPlace"}, generate_selector=True)
    def sync(request: SyncRequest) -> SyncResponse:
        parent = request.parent
        size = parent["spec"]["size"]
        if size < 0:
            raise ValueError(f"size {size} is negative")
        seen = [cm.metadata.name for cm in request.children_of(models.ConfigMap)]
        child = models.ConfigMap(metadata=models.ObjectMeta(name="a-cm"), data={"size": str(size)})
        return SyncResponse([child], status={"seen": seen})

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        thing = await create_thing(client, namespace)
        assert (await config_map(client, namespace))["data"] == {"size": "1"}
        await thing_status(client, namespace, lambda s: s.get("seen") == ["a-cm"])
        await client.patch(*THING, "a", {"spec": {"size": -1}}, namespace=namespace)
        status = await thing_status(client, namespace, lambda s: s.get("conditions"))
        (condition,) = status["status"]["conditions"]
        assert condition["message"] == "sync hook raised ValueError: size -1 is negative"
        await wait_for_event(client, thing, reason="SyncError", type="Warning")
        assert (await config_map(client, namespace))["data"] == {"size": "1"}  # untouched
    assert sync.sync_stats().failures >= 1  # type: ignore[attr-defined]


async def test_a_python_decorator_labels_and_attaches(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    op = setpoint.Operator("python-decorator")

    @decorator(
        op,
        resource=kinds.ConfigMap,
        attachments=[kinds.Secret],
        label_selector={"matchLabels": {"decorate": "yes"}},
    )
    def decorate(request: SyncRequest) -> SyncResponse:
        name = request.parent["metadata"]["name"]
        secret: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-secret"},
            "stringData": {"of": name},
        }
        return SyncResponse([secret], labels={"decorated": "true"})

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": namespace, "labels": {"decorate": "yes"}},
            }
        )
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "plain", "namespace": namespace},
            }
        )
        secret = await wait_for(
            lambda: client.get("v1", "Secret", "c-secret", namespace=namespace), timeout=10
        )
        assert secret["metadata"]["ownerReferences"][0]["name"] == "c"
        labelled = await wait_for(
            lambda: client.get("v1", "ConfigMap", "c", namespace=namespace),
            lambda cm: cm["metadata"]["labels"].get("decorated") == "true",
            timeout=10,
        )
        assert labelled["metadata"]["labels"]["decorate"] == "yes"
        plain = await client.get("v1", "ConfigMap", "plain", namespace=namespace)
        assert "decorated" not in (plain["metadata"].get("labels") or {})


async def test_a_python_composite_with_a_rolling_child_keeps_revisions_and_asks_rbac_for_them(
    client: Client, kubeconfig: str, namespace: str, crds: None
) -> None:
    op = setpoint.Operator("python-rolling")

    @composite(
        op,
        parent=THING,
        children={kinds.ConfigMap: "RollingRecreate"},
        generate_selector=True,
        revision_history=["spec.size"],
    )
    def sync(request: SyncRequest) -> SyncResponse:
        size = str(request.parent["spec"]["size"])
        children = [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": {"s": size}}
            for n in ("x", "y")
        ]
        return SyncResponse(children, status={"size": size})

    (declaration,) = op.declarations
    (permission,) = declaration.permissions
    assert (permission.api_group, permission.resource) == (
        "metacontroller.k8s.io",
        "controllerrevisions",
    )

    async def sizes() -> dict[str, tuple[str, str]]:
        found = await client.list("v1", "ConfigMap", namespace=namespace)
        return {
            cm["metadata"]["name"]: (cm["metadata"]["uid"], (cm.get("data") or {}).get("s"))
            for cm in found
            if cm["metadata"]["name"] in ("x", "y")
        }

    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        await create_thing(client, namespace)
        before = await wait_for(sizes, lambda s: len(s) == 2, timeout=10, what="2 children")
        await client.patch(*THING, "a", {"spec": {"size": 2}}, namespace=namespace)
        after = await wait_for(
            sizes,
            lambda s: len(s) == 2 and all(size == "2" for _, size in s.values()),
            timeout=10,
            what="both children recreated",
        )
        assert all(after[name][0] != before[name][0] for name in before)
        status = await thing_status(
            client,
            namespace,
            lambda s: any(c.get("reason") == "OnLatestRevision" for c in s.get("conditions", [])),
        )
        (revision,) = await client.list(
            "metacontroller.k8s.io/v1alpha1", "ControllerRevision", namespace=namespace
        )
        assert revision["parentPatch"] == {"spec": {"size": 2}}
        assert status["status"]["size"] == "2"
