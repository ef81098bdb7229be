"""DecoratorControllers with HTTP hooks on the local cluster."""

from __future__ import annotations

from typing import Any

from setpoint.client import Client
from setpoint.testing import wait_for

from .conftest import HookServer, RunningMetacontroller


async def test_decorator_labels_annotates_sets_status_and_attaches(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    def sync(request: dict[str, Any]) -> dict[str, Any]:
        obj = request["object"]
        name = obj["metadata"]["name"]
        return {
            "labels": {"decorated": "yes", "remove-me": None},
            "annotations": {"seen-attachments": str(len(request["attachments"]["Secret.v1"]))},
            "attachments": [
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": f"{name}-extra"},
                    "stringData": {"of": name},
                }
            ],
        }

    hooks.handlers["/sync"] = sync
    await metacontroller.declare(
        "DecoratorController",
        "cm-extras",
        {
            "resources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "labelSelector": {"matchLabels": {"extra": "true"}},
                    "annotationSelector": {"matchAnnotations": {"team": "a"}},
                }
            ],
            "attachments": [{"apiVersion": "v1", "resource": "secrets"}],
            "hooks": {"sync": {"webhook": {"url": hooks.url + "/sync"}}},
        },
    )
    base = {"apiVersion": "v1", "kind": "ConfigMap"}
    await client.create(
        {
            **base,
            "metadata": {"name": "skipped", "namespace": namespace, "labels": {"extra": "true"}},
        }
    )
    target = await client.create(
        {
            **base,
            "metadata": {
                "name": "target",
                "namespace": namespace,
                "labels": {"extra": "true", "remove-me": "x"},
                "annotations": {"team": "a"},
            },
        }
    )
    secret = await wait_for(
        lambda: client.get("v1", "Secret", "target-extra", namespace=namespace), timeout=10
    )
    assert (
        secret["metadata"]["annotations"]["metacontroller.k8s.io/decorator-controller"]
        == "cm-extras"
    )
    (owner,) = secret["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "ConfigMap",
        target["metadata"]["uid"],
        True,
    )
    decorated = await wait_for(
        lambda: client.get("v1", "ConfigMap", "target", namespace=namespace),
        lambda cm: cm["metadata"].get("annotations", {}).get("seen-attachments") == "1",
        timeout=10,
    )
    assert decorated["metadata"]["labels"] == {"extra": "true", "decorated": "yes"}
    skipped = await client.get("v1", "ConfigMap", "skipped", namespace=namespace)
    assert "decorated" not in (skipped["metadata"].get("labels") or {})
    assert {c["object"]["metadata"]["name"] for c in hooks.calls["/sync"]} == {"target"}
    # An attachment the hook stops returning is deleted; one made by hand is never touched.
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "by-hand", "namespace": namespace},
        }
    )
    hooks.handlers["/sync"] = lambda request: {"attachments": []}
    await client.patch("v1", "ConfigMap", "target", {"data": {"x": "1"}}, namespace=namespace)

    async def secrets() -> list[str]:
        return sorted(
            s["metadata"]["name"] for s in await client.list("v1", "Secret", namespace=namespace)
        )

    await wait_for(secrets, lambda names: "target-extra" not in names, timeout=10)
    assert "by-hand" in await secrets()


async def test_decorator_finalize_hook_cleans_up_before_the_object_goes(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"annotations": {"synced": "yes"}}
    hooks.handlers["/finalize"] = lambda request: {"finalized": request["finalizing"]}
    await metacontroller.declare(
        "DecoratorController",
        "cleanup",
        {
            # Only "c": any other ConfigMap would keep the finalizer once this test's hook is gone.
            "resources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "labelSelector": {"matchLabels": {"cleanup": "yes"}},
                }
            ],
            "hooks": {
                "sync": {"webhook": {"url": hooks.url + "/sync"}},
                "finalize": {"webhook": {"url": hooks.url + "/finalize"}},
            },
        },
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": namespace, "labels": {"cleanup": "yes"}},
        }
    )
    decorated = await wait_for(
        lambda: client.get("v1", "ConfigMap", "c", namespace=namespace),
        lambda cm: cm["metadata"].get("annotations", {}).get("synced") == "yes",
        timeout=10,
    )
    assert decorated["metadata"]["finalizers"] == ["metacontroller.io/decoratorcontroller-cleanup"]
    await client.delete("v1", "ConfigMap", "c", namespace=namespace)

    async def gone() -> bool:
        names = [
            cm["metadata"]["name"]
            for cm in await client.list("v1", "ConfigMap", namespace=namespace)
        ]
        return "c" not in names

    await wait_for(gone, timeout=10, what="the ConfigMap deleted once finalized")
    assert hooks.calls["/finalize"][-1]["finalizing"] is True
