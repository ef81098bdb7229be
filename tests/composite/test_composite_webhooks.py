"""CompositeControllers with HTTP hooks, as Metacontroller runs them, on the local cluster."""

from __future__ import annotations

import asyncio
from typing import Any

from setpoint.client import Client
from setpoint.testing import wait_for, wait_for_event

from .conftest import GROUP, HookServer, RunningMetacontroller

THINGS = {"apiVersion": f"{GROUP}/v1", "resource": "things"}


def config_map_for(parent: dict[str, Any], **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": parent["metadata"]["name"] + "-cm"},
        "data": data or {"size": str(parent["spec"].get("size"))},
    }


def spec(hooks: HookServer, method: str = "InPlace", **extra: Any) -> dict[str, Any]:
    return {
        "generateSelector": True,
        "parentResource": THINGS,
        "childResources": [
            {"apiVersion": "v1", "resource": "configmaps", "updateStrategy": {"method": method}},
            {"apiVersion": "v1", "resource": "secrets"},
        ],
        "hooks": {"sync": {"webhook": {"url": hooks.url + "/sync"}}},
        **extra,
    }


async def create_thing(
    client: Client, namespace: str, name: str = "a", **spec: Any
) -> dict[str, Any]:
    thing: dict[str, Any] = await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Thing",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec or {"size": 1},
        }
    )
    return thing


async def thing_status(client: Client, namespace: str, predicate: Any, name: str = "a") -> Any:
    return await wait_for(
        lambda: client.get(f"{GROUP}/v1", "Thing", name, namespace=namespace),
        lambda thing: predicate(thing.get("status") or {}),
        timeout=10,
        what=f"the status of Thing {name}",
    )


async def config_map(client: Client, namespace: str, predicate: Any = None) -> Any:
    return await wait_for(
        lambda: client.get("v1", "ConfigMap", "a-cm", namespace=namespace),
        predicate,
        timeout=10,
        what="ConfigMap a-cm",
    )


async def config_map_gone(client: Client, namespace: str) -> None:
    async def gone() -> bool:
        names = [
            cm["metadata"]["name"]
            for cm in await client.list("v1", "ConfigMap", namespace=namespace)
        ]
        return "a-cm" not in names

    await wait_for(gone, timeout=10, what="ConfigMap a-cm deleted")


async def test_sync_creates_children_replaces_status_and_deletes_what_is_not_returned(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    def sync(request: dict[str, Any]) -> dict[str, Any]:
        parent = request["parent"]
        wanted = [] if parent["spec"].get("size") == 0 else [config_map_for(parent)]
        return {
            "status": {"children": len(request["children"]["ConfigMap.v1"])},
            "children": wanted,
        }

    hooks.handlers["/sync"] = sync
    await metacontroller.declare("CompositeController", "things", spec(hooks))
    thing = await create_thing(client, namespace)
    child = await config_map(client, namespace)
    assert child["data"] == {"size": "1"}
    (owner,) = child["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "Thing",
        thing["metadata"]["uid"],
        True,
        True,
    )
    assert child["metadata"]["labels"] == {"controller-uid": thing["metadata"]["uid"]}
    assert {m["manager"] for m in child["metadata"]["managedFields"]} == {"metacontroller/things"}
    # The status is the hook's, with observedGeneration; the hook saw its child once created.
    status = await thing_status(client, namespace, lambda s: s.get("children") == 1)
    assert status["status"] == {"children": 1, "observedGeneration": 1}
    first = hooks.calls["/sync"][0]
    # Every declared child type is in the request, even when empty; v1 keys are bare names.
    assert first["children"] == {"ConfigMap.v1": {}, "Secret.v1": {}}
    assert first["related"] == {} and first["finalizing"] is False
    assert first["controller"]["metadata"]["name"] == "things"
    assert list(hooks.calls["/sync"][-1]["children"]["ConfigMap.v1"]) == ["a-cm"]
    # InPlace: a spec change updates the child; a child no longer returned is deleted.
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace)
    await config_map(client, namespace, lambda cm: cm["data"] == {"size": "2"})
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 0}}, namespace=namespace)

    await config_map_gone(client, namespace)


async def test_one_hook_call_per_real_change_and_no_writes_when_nothing_changes(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {
        "status": {"size": request["parent"]["spec"]["size"]},
        "children": [config_map_for(request["parent"])],
    }
    await metacontroller.declare("CompositeController", "things", spec(hooks))
    await create_thing(client, namespace)
    await thing_status(client, namespace, lambda s: s.get("size") == 1)
    await asyncio.sleep(0.5)
    stats = metacontroller.stats("CompositeController", "things")
    # Creation: one call to create the child, one more to show it to the hook (which answers
    # the same), and nothing after: the events of its own writes wake nothing.
    assert (stats.hook_calls, stats.writes) == (2, 2)  # the child, the status
    for size in (2, 3):
        await client.patch(
            f"{GROUP}/v1", "Thing", "a", {"spec": {"size": size}}, namespace=namespace
        )
        await thing_status(client, namespace, lambda s, size=size: s.get("size") == size)
    await asyncio.sleep(0.5)
    assert (stats.hook_calls, stats.writes) == (4, 6)  # per change: 1 call, child + status
    # Someone else writes the parent's status: one call, which puts the status back.
    await client.patch(
        f"{GROUP}/v1",
        "Thing",
        "a",
        {"status": {"size": 99}},
        namespace=namespace,
        subresource="status",
    )
    await thing_status(client, namespace, lambda s: s.get("size") == 3)
    await asyncio.sleep(0.5)
    assert (stats.hook_calls, stats.writes) == (5, 7)
    # A label change wakes the hook; it answers what is already there: zero writes.
    await client.patch(
        f"{GROUP}/v1", "Thing", "a", {"metadata": {"labels": {"x": "y"}}}, namespace=namespace
    )
    await wait_for(lambda: stats.hook_calls == 6, timeout=10, what="the sync after a label")
    await asyncio.sleep(0.5)
    assert (stats.hook_calls, stats.writes) == (6, 7)


async def test_ignore_status_changes_skips_status_only_updates(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"status": {"ok": True}, "children": []}
    body = spec(hooks)
    body["parentResource"] = {**THINGS, "ignoreStatusChanges": True}
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace)
    await thing_status(client, namespace, lambda s: s.get("ok") is True)
    stats = metacontroller.stats("CompositeController", "things")
    calls = stats.hook_calls
    await client.patch(
        f"{GROUP}/v1",
        "Thing",
        "a",
        {"status": {"other": 1}},
        namespace=namespace,
        subresource="status",
    )
    await asyncio.sleep(1)
    assert stats.hook_calls == calls


async def test_bad_answers_are_reported_and_leave_the_children(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    answers: list[Any] = []

    async def sync(request: dict[str, Any]) -> Any:
        if request["parent"]["spec"]["size"] == 1 or not answers:
            return {"children": [config_map_for(request["parent"])]}
        answer = answers[0]
        if answer == "slow":
            await asyncio.sleep(1)
            return {"children": []}
        return answer

    hooks.handlers["/sync"] = sync
    body = spec(hooks)
    body["hooks"]["sync"]["webhook"]["timeout"] = "300ms"
    await metacontroller.declare("CompositeController", "things", body)
    thing = await create_thing(client, namespace)
    await config_map(client, namespace)
    cases = [
        ((200, b"<html>oops</html>"), "sync hook: the response is not JSON"),
        ((500, b"boom\nline two"), "answered HTTP 500: boom line two"),
        ({"children": {"a": 1}}, "sync hook: children: must be a list of objects, got an object"),
        (
            {
                "children": [
                    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
                ]
            },
            "sync hook: children[0]: Deployment apps/v1 is not a declared child type",
        ),
        (
            {
                "children": [
                    {**config_map_for(thing), "metadata": {"name": "x", "namespace": "elsewhere"}}
                ]
            },
            "children[0].metadata.namespace: 'elsewhere' is not the parent's namespace",
        ),
        ("slow", "sync hook: no response from"),
    ]
    for size, (answer, message) in enumerate(cases, start=2):
        answers[:] = [answer]
        await client.patch(
            f"{GROUP}/v1", "Thing", "a", {"spec": {"size": size}}, namespace=namespace
        )
        status = await thing_status(
            client,
            namespace,
            lambda s, message=message: any(
                c.get("type") == "Synced" and message in c.get("message", "")
                for c in s.get("conditions") or []
            ),
        )
        (condition,) = status["status"]["conditions"]
        assert (condition["status"], condition["reason"]) == ("False", "SyncError")
        assert "\n" not in condition["message"]
        event = await wait_for_event(client, thing, reason="SyncError", type="Warning")
        assert event["note"].startswith("Sync error: ")
        # The previous child is still there, untouched.
        assert (await config_map(client, namespace))["data"] == {"size": "1"}


async def test_finalize_hook_runs_until_finalized(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    finalized = asyncio.Event()
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}

    def finalize(request: dict[str, Any]) -> dict[str, Any]:
        assert request["finalizing"] is True
        done = finalized.is_set()
        return {"children": [], "finalized": done}

    hooks.handlers["/finalize"] = finalize
    body = spec(hooks)
    body["hooks"]["finalize"] = {"webhook": {"url": hooks.url + "/finalize"}}
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace)
    await config_map(client, namespace)
    thing = await client.get(f"{GROUP}/v1", "Thing", "a", namespace=namespace)
    assert thing["metadata"]["finalizers"] == ["metacontroller.io/compositecontroller-things"]
    await client.delete(f"{GROUP}/v1", "Thing", "a", namespace=namespace)
    await config_map_gone(client, namespace)
    await wait_for(lambda: hooks.calls.get("/finalize"), timeout=10, what="a finalize call")
    assert await client.get(f"{GROUP}/v1", "Thing", "a", namespace=namespace)
    finalized.set()
    await client.patch(
        f"{GROUP}/v1", "Thing", "a", {"metadata": {"labels": {"poke": "1"}}}, namespace=namespace
    )

    async def parent_gone() -> bool:
        return not await client.list(f"{GROUP}/v1", "Thing", namespace=namespace)

    await wait_for(parent_gone, timeout=10, what="the parent deleted once finalized")


async def test_each_controller_has_the_runtime_metrics_under_its_name(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    from prometheus_client import generate_latest

    from setpoint.client import REGISTRY

    hooks.handlers["/sync"] = lambda request: {"children": []}
    await metacontroller.declare("CompositeController", "metered", spec(hooks))
    await create_thing(client, namespace)
    await wait_for(lambda: hooks.calls.get("/sync"), timeout=10)
    await asyncio.sleep(0.2)
    text = generate_latest(REGISTRY).decode()
    assert (
        'controller_runtime_reconcile_total{controller="compositecontroller-metered",result="success"}'
        in text
    )
    assert 'workqueue_adds_total{controller="compositecontroller-metered"' in text
