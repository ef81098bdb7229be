"""The other CompositeController fields: update strategies, selectors and adoption, hook
versions, service webhooks, etag, customize, resync."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from aiohttp import web

from setpoint.client import Client, Invalid
from setpoint.testing import install_crds, wait_for, wait_for_event

from .conftest import GROUP, THING_CRD, HookServer, RunningMetacontroller
from .test_composite_webhooks import (
    THINGS,
    config_map,
    config_map_for,
    create_thing,
    spec,
    thing_status,
)


async def test_update_methods_on_delete_and_recreate(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}
    await metacontroller.declare("CompositeController", "things", spec(hooks, method="OnDelete"))
    await create_thing(client, namespace)
    first = await config_map(client, namespace)
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace)
    await wait_for(lambda: len(hooks.calls["/sync"]) >= 3, timeout=10, what="the sync of size 2")
    await asyncio.sleep(0.3)
    assert (await config_map(client, namespace))["data"] == {"size": "1"}  # OnDelete: untouched
    await client.delete(first)
    recreated = await config_map(client, namespace, lambda cm: cm["data"] == {"size": "2"})
    # Recreate: a change deletes the child, the next sync creates it anew (another uid).
    await client.patch(
        "metacontroller.k8s.io/v1alpha1",
        "CompositeController",
        "things",
        [
            {
                "op": "replace",
                "path": "/spec/childResources/0/updateStrategy/method",
                "value": "Recreate",
            }
        ],
        patch_type="json",
    )
    await asyncio.sleep(0.5)
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 3}}, namespace=namespace)
    third = await config_map(client, namespace, lambda cm: cm["data"] == {"size": "3"})
    assert third["metadata"]["uid"] != recreated["metadata"]["uid"]


async def test_spec_selector_adopts_matching_orphans_and_orphans_what_stops_matching(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": []}  # deletes nothing it did not get
    body = spec(hooks, method="OnDelete")
    body.pop("generateSelector")
    await metacontroller.declare("CompositeController", "things", body)
    orphan = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "stray", "namespace": namespace, "labels": {"app": "a"}},
        }
    )
    hooks.handlers["/sync"] = lambda request: {
        "children": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"app": "a"}},
            }
            for name in request["children"]["ConfigMap.v1"]
        ]
    }
    thing = await create_thing(client, namespace, selector={"matchLabels": {"app": "a"}})
    adopted = await wait_for(
        lambda: client.get("v1", "ConfigMap", "stray", namespace=namespace),
        lambda cm: cm["metadata"].get("ownerReferences"),
        timeout=10,
        what="the orphan adopted",
    )
    (reference,) = adopted["metadata"]["ownerReferences"]
    assert reference["uid"] == thing["metadata"]["uid"] and reference["controller"] is True
    assert adopted["metadata"]["uid"] == orphan["metadata"]["uid"]
    await wait_for(
        lambda: any("stray" in c["children"]["ConfigMap.v1"] for c in hooks.calls.get("/sync", [])),
        timeout=10,
    )
    # The child stops matching the selector: it is released, not deleted.
    await client.patch(
        "v1", "ConfigMap", "stray", {"metadata": {"labels": {"app": "b"}}}, namespace=namespace
    )
    released = await wait_for(
        lambda: client.get("v1", "ConfigMap", "stray", namespace=namespace),
        lambda cm: not cm["metadata"].get("ownerReferences"),
        timeout=10,
        what="the child orphaned",
    )
    assert released["metadata"]["uid"] == orphan["metadata"]["uid"]
    # A parent without a selector (and no generateSelector) is reported, not guessed.
    await create_thing(client, namespace, name="b", size=1)
    status = await thing_status(client, namespace, lambda s: s.get("conditions"), name="b")
    assert (
        "spec.selector: must have matchLabels, matchExpressions or both"
        in status["status"]["conditions"][0]["message"]
    )


async def test_v2_hooks_key_children_by_namespace_and_name(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}
    body = spec(hooks)
    body["hooks"]["sync"]["version"] = "v2"
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace)
    await config_map(client, namespace)
    await wait_for(lambda: len(hooks.calls["/sync"]) >= 2, timeout=10)
    assert list(hooks.calls["/sync"][-1]["children"]["ConfigMap.v1"]) == [f"{namespace}/a-cm"]
    # v2 answers are strict: an unknown field is an error.
    hooks.handlers["/sync"] = lambda request: {"children": [], "chidlren": []}
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace)
    status = await thing_status(client, namespace, lambda s: s.get("conditions"))
    assert "unknown field 'chidlren'" in status["status"]["conditions"][0]["message"]


async def test_service_webhook_resolves_to_the_endpoints_and_etag_reuses_answers(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    answers = 0

    def sync(request: dict[str, Any]) -> Any:
        nonlocal answers
        if hooks.headers["/hooks/sync"][-1].get("If-None-Match") == '"v1"':
            return web.Response(status=304)
        answers += 1
        body = {"status": {"n": 1}, "children": [config_map_for(request["parent"])]}
        return web.json_response(body, headers={"ETag": '"v1"'})

    hooks.handlers["/hooks/sync"] = sync
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "hook", "namespace": namespace},
            "spec": {"ports": [{"name": "http", "port": 80}]},
        }
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "hook", "namespace": namespace},
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "http", "port": hooks.port}],
                }
            ],
        }
    )
    body = spec(hooks)
    body["hooks"]["sync"] = {
        "webhook": {
            "service": {"name": "hook", "namespace": namespace},
            "path": "/hooks/sync",
            "etag": {"enabled": True},
        }
    }
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace)
    await config_map(client, namespace)
    await thing_status(client, namespace, lambda s: s.get("n") == 1)
    await wait_for(lambda: len(hooks.calls["/hooks/sync"]) >= 2, timeout=10)
    # The second call (the child created) sent If-None-Match and got 304: the cached answer.
    assert answers == 1
    assert (await config_map(client, namespace))["data"] == {"size": "1"}


async def test_customize_hook_sends_related_objects_and_their_changes_resync(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/customize"] = lambda request: {
        "relatedResources": [
            {
                "apiVersion": "v1",
                "resource": "secrets",
                "labelSelector": {"matchLabels": {"for": request["parent"]["metadata"]["name"]}},
            }
        ]
    }

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        related = request["related"]["Secret.v1"]
        return {"status": {"related": sorted(related)}, "children": []}

    hooks.handlers["/sync"] = sync
    body = spec(hooks)
    body["hooks"]["customize"] = {"webhook": {"url": hooks.url + "/customize"}}
    await metacontroller.declare("CompositeController", "things", body)
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s1", "namespace": namespace, "labels": {"for": "a"}},
        }
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "other", "namespace": namespace},
        }
    )
    await create_thing(client, namespace)
    await thing_status(client, namespace, lambda s: s.get("related") == ["s1"])
    assert hooks.calls["/customize"][0]["parent"]["metadata"]["name"] == "a"
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s2", "namespace": namespace, "labels": {"for": "a"}},
        }
    )
    await thing_status(client, namespace, lambda s: s.get("related") == ["s1", "s2"])


async def test_resync_after_seconds_and_parent_label_selector(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": [], "resyncAfterSeconds": 0.2}
    body = spec(hooks)
    body["parentResource"] = {**THINGS, "labelSelector": {"matchLabels": {"managed": "yes"}}}
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace, name="ignored")
    labelled = await create_thing(client, namespace)
    await client.patch(
        f"{GROUP}/v1",
        "Thing",
        "a",
        {"metadata": {"labels": {"managed": "yes"}}},
        namespace=namespace,
    )
    await wait_for(lambda: len(hooks.calls.get("/sync", [])) >= 3, timeout=10, what="resyncs")
    names = {call["parent"]["metadata"]["name"] for call in hooks.calls["/sync"]}
    assert names == {labelled["metadata"]["name"]}


async def test_a_status_schema_that_prunes_observed_generation_costs_no_write_per_sync(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    strict = copy.deepcopy(THING_CRD)
    strict["metadata"]["name"] = f"gizmos.{GROUP}"
    strict["spec"]["names"] = {
        "kind": "Gizmo",
        "listKind": "GizmoList",
        "plural": "gizmos",
        "singular": "gizmo",
    }
    schema = strict["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["status"] = {
        "type": "object",
        "properties": {"ready": {"type": "boolean"}},
    }
    await install_crds(client, strict)
    hooks.handlers["/sync"] = lambda request: {"status": {"ready": True}, "children": []}
    body = spec(hooks)
    body["parentResource"] = {"apiVersion": f"{GROUP}/v1", "resource": "gizmos"}
    await metacontroller.declare("CompositeController", "gizmos", body)
    await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Gizmo",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {},
        }
    )
    await wait_for(
        lambda: client.get(f"{GROUP}/v1", "Gizmo", "g", namespace=namespace),
        lambda g: g.get("status") == {"ready": True},  # observedGeneration pruned by the schema
        timeout=10,
    )
    stats = metacontroller.stats("CompositeController", "gizmos")
    for value in ("1", "2"):
        await client.patch(
            f"{GROUP}/v1", "Gizmo", "g", {"metadata": {"labels": {"v": value}}}, namespace=namespace
        )
        await wait_for(
            lambda value=value: (
                hooks.calls["/sync"][-1]["parent"]["metadata"].get("labels") == {"v": value}
            ),
            timeout=10,
        )
    await asyncio.sleep(0.3)
    assert (stats.hook_calls, stats.writes) == (3, 1)


async def test_a_secret_with_string_data_is_not_applied_again_when_the_hook_repeats_itself(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {
        "children": [
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s"},
                "stringData": {"k": "v"},
            }
        ]
    }
    body = spec(hooks)
    body["childResources"][1]["updateStrategy"] = {"method": "InPlace"}
    await metacontroller.declare("CompositeController", "things", body)
    await create_thing(client, namespace)
    await wait_for(lambda: client.get("v1", "Secret", "s", namespace=namespace), timeout=10)
    await wait_for(lambda: len(hooks.calls["/sync"]) >= 2, timeout=10)
    await asyncio.sleep(0.3)
    stats = metacontroller.stats("CompositeController", "things")
    writes, calls = stats.writes, stats.hook_calls
    # The server keeps stringData as data, so the Secret never "has" stringData: what counts
    # is that it is what was applied last and nobody changed it since.
    await client.patch(
        f"{GROUP}/v1", "Thing", "a", {"metadata": {"labels": {"x": "1"}}}, namespace=namespace
    )
    await wait_for(lambda: stats.hook_calls == calls + 1, timeout=10)
    await asyncio.sleep(0.3)
    assert (stats.hook_calls, stats.writes) == (calls + 1, writes)


async def test_ca_bundle_verifies_an_https_hook_signed_by_a_private_ca(
    client: Client,
    namespace: str,
    tls_hooks: tuple[HookServer, str],
    metacontroller: RunningMetacontroller,
) -> None:
    hooks, ca_pem = tls_hooks
    hooks.handlers["/sync"] = lambda request: {"status": {"tls": True}, "children": []}
    body = spec(hooks)
    await metacontroller.declare(
        "CompositeController", "untrusted", {**body, "parentResource": THINGS}
    )
    await create_thing(client, namespace)
    # Without the CA: the system roots do not trust it, and the parent says so.
    status = await thing_status(client, namespace, lambda s: s.get("conditions"))
    assert "CERTIFICATE_VERIFY_FAILED" in status["status"]["conditions"][0]["message"]
    await client.delete("metacontroller.k8s.io/v1alpha1", "CompositeController", "untrusted")
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ca", "namespace": namespace},
            "data": {"ca.crt": ca_pem},
        }
    )
    body["hooks"]["sync"]["webhook"]["caBundle"] = {
        "configMapRef": {"name": "ca", "namespace": namespace}
    }
    await metacontroller.declare("CompositeController", "trusted", body)
    await thing_status(client, namespace, lambda s: s.get("tls") is True)


async def test_resync_period_seconds_calls_the_hook_again_without_changes(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": []}
    await metacontroller.declare(
        "CompositeController", "things", spec(hooks, resyncPeriodSeconds=1)
    )
    await create_thing(client, namespace)
    await wait_for(lambda: hooks.calls.get("/sync"), timeout=10)
    stats = metacontroller.stats("CompositeController", "things")
    calls = stats.hook_calls
    await wait_for(lambda: stats.hook_calls >= calls + 2, timeout=10, what="two resyncs")
    assert stats.writes == 1  # the first status; resyncs that change nothing write nothing


async def test_rolling_recreate_replaces_every_changed_child_with_a_new_object(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    def sync(request: dict[str, Any]) -> dict[str, Any]:
        parent = request["parent"]
        return {
            "children": [
                {**config_map_for(parent), "metadata": {"name": f"cm-{i}"}} for i in range(2)
            ]
        }

    hooks.handlers["/sync"] = sync
    await metacontroller.declare(
        "CompositeController", "things", spec(hooks, method="RollingRecreate")
    )
    await create_thing(client, namespace)

    async def children() -> dict[str, tuple[str, str]]:
        found = await client.list("v1", "ConfigMap", namespace=namespace)
        return {
            cm["metadata"]["name"]: (cm["metadata"]["uid"], (cm.get("data") or {}).get("size", ""))
            for cm in found
            if cm["metadata"]["name"].startswith("cm-")
        }

    before = await wait_for(children, lambda c: len(c) == 2, timeout=10, what="2 children")
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace)
    after = await wait_for(
        children,
        lambda c: len(c) == 2 and all(size == "2" for _, size in c.values()),
        timeout=10,
        what="both children recreated",
    )
    assert all(after[name][0] != before[name][0] for name in before)  # new objects, not updates


async def test_a_declaration_that_cannot_run_is_refused_or_reported_on_it(
    client: Client, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    body = spec(hooks)
    body["childResources"][0]["updateStrategy"] = {"method": "Sometimes"}
    # The CRD's schema refuses an unknown update method.
    with pytest.raises(Invalid, match=r"spec\.childResources\[0\]\.updateStrategy\.method"):
        await metacontroller.declare("CompositeController", "broken", body)
    # A resource the server does not serve (yet): a Warning Event, and retries with backoff.
    body["childResources"][0]["updateStrategy"] = {"method": "InPlace"}
    body["parentResource"] = {"apiVersion": f"{GROUP}/v1", "resource": "nonsense"}
    declared = await metacontroller.declare("CompositeController", "unknown-parent", body)
    event = await wait_for_event(client, declared, reason="CreateError", type="Warning")
    assert event["note"].startswith("Cannot create new controller: spec.parentResource: ")
    assert "nonsense" in event["note"]
