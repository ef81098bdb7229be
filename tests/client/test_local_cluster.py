"""The client against the real local cluster (setpoint.cluster) over HTTP: CRUD, patches, apply,
pagination, watch, discovery of a new CRD, typed models, errors and warnings."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel, ConfigDict, Field

from setpoint.client import (
    AlreadyExists,
    BadRequest,
    Client,
    Conflict,
    Invalid,
    NoKindMatch,
    NotFound,
    Preconditions,
    UnsupportedMediaType,
    WatchEventType,
)

pytest.importorskip("setpoint.testing.plugin", reason="the local cluster fixture is not available")

# Guards against a hung stream; generous so it never fires on a slow machine.
STREAM_GUARD_SECONDS = 30


@pytest.fixture
async def kube(local_cluster: Any) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(str(local_cluster.kubeconfig_path)) as client:
        yield client


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": dict(data),
    }


async def test_server_version_is_1_32(kube: Client) -> None:
    assert (await kube.server_version())["minor"].startswith("32")


async def test_create_get_update_delete(kube: Client, namespace: str) -> None:
    created = await kube.create(configmap("cm", namespace, a="1"))
    assert created["metadata"]["uid"]
    with pytest.raises(AlreadyExists):
        await kube.create(configmap("cm", namespace))
    fetched = await kube.get("v1", "ConfigMap", "cm", namespace=namespace)
    assert fetched["data"] == {"a": "1"}
    fetched["data"]["b"] = "2"
    updated = await kube.update(fetched)
    assert updated["data"] == {"a": "1", "b": "2"}
    with pytest.raises(Conflict):  # stale resourceVersion
        await kube.update(fetched)
    again = await kube.get(updated)  # re-read through the object itself
    assert again["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    await kube.delete("v1", "ConfigMap", "cm", namespace=namespace)
    with pytest.raises(NotFound):
        await kube.get("v1", "ConfigMap", "cm", namespace=namespace)
    assert await kube.delete(updated, missing_ok=True) is None


async def test_default_namespace_is_used_for_single_objects(kube: Client, namespace: str) -> None:
    kube.default_namespace = namespace
    cm = configmap("in-default", namespace)
    del cm["metadata"]["namespace"]
    created = await kube.create(cm)
    assert created["metadata"]["namespace"] == namespace
    assert (await kube.get("v1", "ConfigMap", "in-default"))["metadata"]["name"] == "in-default"


async def test_merge_and_json_patches(kube: Client, namespace: str) -> None:
    await kube.create(configmap("p", namespace, a="1"))
    merged = await kube.patch(
        "v1", "ConfigMap", "p", {"data": {"b": "2", "a": None}}, namespace=namespace
    )
    assert merged["data"] == {"b": "2"}
    json_patched = await kube.patch(
        merged, [{"op": "add", "path": "/data/c", "value": "3"}], patch_type="json"
    )
    assert json_patched["data"] == {"b": "2", "c": "3"}
    with pytest.raises(Invalid):  # a failing JSON patch test op
        await kube.patch(
            json_patched, [{"op": "test", "path": "/data/b", "value": "nope"}], patch_type="json"
        )


async def test_strategic_merge_patch(kube: Client, namespace: str) -> None:
    created = await kube.create(configmap("smp", namespace, a="1"))
    strategic = await kube.patch(
        created, {"metadata": {"labels": {"x": "y"}}}, patch_type="strategic"
    )
    assert strategic["metadata"]["labels"] == {"x": "y"}
    assert strategic["data"] == {"a": "1"}


async def test_server_side_apply_with_conflicts_and_force(kube: Client, namespace: str) -> None:
    desired = configmap("applied", namespace, owner="one")
    first = await kube.apply(desired, field_manager="manager-one")
    assert first["data"] == {"owner": "one"}
    managers = {m["manager"] for m in first["metadata"].get("managedFields", [])}
    assert "manager-one" in managers
    with pytest.raises(Conflict) as caught:
        await kube.apply(configmap("applied", namespace, owner="two"), field_manager="manager-two")
    assert caught.value.causes  # names the conflicting field
    forced = await kube.apply(
        configmap("applied", namespace, owner="two"), field_manager="manager-two", force=True
    )
    assert forced["data"] == {"owner": "two"}


async def test_dry_run_persists_nothing(kube: Client, namespace: str) -> None:
    result = await kube.create(configmap("dry", namespace), dry_run=True)
    assert result["metadata"]["name"] == "dry"
    with pytest.raises(NotFound):
        await kube.get("v1", "ConfigMap", "dry", namespace=namespace)


async def test_validation_errors_carry_causes(kube: Client, namespace: str) -> None:
    with pytest.raises(Invalid) as caught:
        await kube.create(configmap("Not_A_Valid_Name", namespace))
    assert any(cause.get("field") == "metadata.name" for cause in caught.value.causes)


async def test_strict_field_validation(kube: Client, namespace: str) -> None:
    cm = configmap("strict", namespace)
    cm["unknownField"] = 1
    with pytest.raises(BadRequest, match="unknown field"):
        await kube.create(cm, field_validation="Strict")


async def test_warn_field_validation_logs_the_warning(
    kube: Client, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    cm = configmap("warned", namespace)
    cm["unknownField"] = 1
    with caplog.at_level(logging.WARNING, logger="setpoint.client.warnings"):
        await kube.create(cm, field_validation="Warn")
    assert any("unknownField" in record.getMessage() for record in caplog.records)


async def test_delete_preconditions(kube: Client, namespace: str) -> None:
    created = await kube.create(configmap("pre", namespace))
    with pytest.raises(Conflict):
        await kube.delete(created, preconditions=Preconditions(uid="not-the-uid"))
    await kube.delete(created, preconditions=Preconditions(uid=created["metadata"]["uid"]))
    with pytest.raises(NotFound):
        await kube.get(created)


async def test_delete_collection_by_label(kube: Client, namespace: str) -> None:
    for index in range(3):
        cm = configmap(f"dc-{index}", namespace)
        cm["metadata"]["labels"] = {"group": "a" if index < 2 else "b"}
        await kube.create(cm)
    await kube.delete_collection(
        "v1", "ConfigMap", namespace=namespace, label_selector={"group": "a"}
    )
    left = await kube.list("v1", "ConfigMap", namespace=namespace, label_selector="group")
    assert [i["metadata"]["name"] for i in left] == ["dc-2"]


async def test_list_paginates_transparently(kube: Client, namespace: str) -> None:
    names = [f"page-{index:02d}" for index in range(7)]
    for name in names:
        await kube.create(configmap(name, namespace))
    result = await kube.list("v1", "ConfigMap", namespace=namespace, page_size=3)
    listed = sorted(i["metadata"]["name"] for i in result if i["metadata"]["name"] in names)
    assert listed == names
    assert result.resource_version
    # The raw API really pages: the first page holds three items and a continue token.
    info = await kube.mapper.resource_for("v1", "ConfigMap")
    page = msgspec.json.decode(await kube.list_raw(info, namespace, limit=3))
    assert len(page["items"]) == 3
    assert page["metadata"]["continue"]


async def test_watch_sees_changes_after_a_list(kube: Client, namespace: str) -> None:
    listed = await kube.list("v1", "ConfigMap", namespace=namespace)
    events: list[tuple[str, str]] = []

    async def consume() -> None:
        async for event in kube.watch(
            "v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version
        ):
            events.append((event.type.value, event.object["metadata"]["name"]))
            if event.type is WatchEventType.DELETED:
                return

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)  # let the watch start; events after the list RV are seen anyway
    created = await kube.create(configmap("w", namespace, v="1"))
    await kube.patch(created, {"data": {"v": "2"}})
    await kube.delete(created)
    async with asyncio.timeout(STREAM_GUARD_SECONDS):
        await task
    assert [e for e in events if e[1] == "w"] == [
        ("ADDED", "w"),
        ("MODIFIED", "w"),
        ("DELETED", "w"),
    ]


CRD_GROUP = "client-test.setpoint.dev"


def widget_crd(plural: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{CRD_GROUP}"},
        "spec": {
            "group": CRD_GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer"}},
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"ready": {"type": "boolean"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


class Gizmo(BaseModel):
    """A user's CRD model, as a setpoint user would write it."""

    model_config = ConfigDict(populate_by_name=True)
    api_version: str = Field(f"{CRD_GROUP}/v1", alias="apiVersion")
    kind: str = "Gizmo"
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: dict[str, Any] = Field(default_factory=dict)
    status: dict[str, Any] | None = None


async def test_new_crd_is_discovered_and_served_with_models(kube: Client, namespace: str) -> None:
    api_version = f"{CRD_GROUP}/v1"
    with pytest.raises(NoKindMatch, match="Gizmo"):
        await kube.mapper.resource_for(api_version, "Gizmo")
    crd = await kube.create(widget_crd("gizmos", "Gizmo"))
    try:
        info = await kube.mapper.resource_for(api_version, "Gizmo")  # refreshed on the miss
        assert info.resource == "gizmos"
        assert info.namespaced
        assert "status" in info.subresources
        gizmo = await kube.create(
            Gizmo.model_validate(
                {"metadata": {"name": "g1", "namespace": namespace}, "spec": {"size": 3}}
            )
        )
        assert isinstance(gizmo, Gizmo)
        assert gizmo.spec == {"size": 3}
        gizmo.status = {"ready": True}
        with_status = await kube.update_status(gizmo)
        assert with_status.status == {"ready": True}
        fetched = await kube.get(Gizmo, "g1", namespace=namespace)
        assert isinstance(fetched, Gizmo)
        assert fetched.status == {"ready": True}
        listed = await kube.list(Gizmo, namespace=namespace)
        assert [g.metadata["name"] for g in listed] == ["g1"]
        with pytest.raises(UnsupportedMediaType):  # strategic merge is for built-ins only
            await kube.patch(fetched, {"spec": {"size": 4}}, patch_type="strategic")
    finally:
        await kube.delete(crd, missing_ok=True)


def deployment(name: str, namespace: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": "example.test/app:1"}]},
            },
        },
    }


async def test_scale_subresource(kube: Client, namespace: str) -> None:
    await kube.create(deployment("web", namespace))
    scale = await kube.get("apps/v1", "Deployment", "web", namespace=namespace, subresource="scale")
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 1
    scaled = await kube.scale("apps/v1", "Deployment", "web", 3, namespace=namespace)
    assert scaled["spec"]["replicas"] == 3
    assert (await kube.get("apps/v1", "Deployment", "web", namespace=namespace))["spec"][
        "replicas"
    ] == 3


async def test_watch_with_initial_events_ends_them_with_a_bookmark(
    kube: Client, namespace: str
) -> None:
    await kube.create(configmap("initial", namespace))
    seen: list[str] = []
    async with asyncio.timeout(STREAM_GUARD_SECONDS):
        async for event in kube.watch(
            "v1", "ConfigMap", namespace=namespace, send_initial_events=True, bookmarks=True
        ):
            if event.is_initial_events_end:
                break
            seen.append(event.object["metadata"]["name"])
    assert "initial" in seen


async def test_foreground_delete_returns_the_terminating_object(
    kube: Client, namespace: str
) -> None:
    created = await kube.create(configmap("fg", namespace))
    answer = await kube.delete(created, propagation_policy="foreground")
    assert answer is not None
    assert answer["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in answer["metadata"]["finalizers"]


async def test_wait_for_a_condition_and_for_deletion(kube: Client, namespace: str) -> None:
    async def later() -> None:
        await kube.create(configmap("awaited", namespace, phase="pending"))
        await kube.patch(
            "v1", "ConfigMap", "awaited", {"data": {"phase": "ready"}}, namespace=namespace
        )

    task = asyncio.create_task(later())
    async with asyncio.timeout(STREAM_GUARD_SECONDS):
        ready = await kube.wait_for(
            "v1",
            "ConfigMap",
            "awaited",
            lambda obj: obj is not None and obj["data"].get("phase") == "ready",
            namespace=namespace,
        )
    await task
    assert ready is not None
    assert ready["data"]["phase"] == "ready"
    deleting = asyncio.create_task(kube.delete(ready))
    async with asyncio.timeout(STREAM_GUARD_SECONDS):
        gone = await kube.wait_for(
            "v1", "ConfigMap", "awaited", lambda obj: obj is None, namespace=namespace
        )
    await deleting
    assert gone is None


async def test_wait_for_times_out(kube: Client, namespace: str) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await kube.wait_for(
                "v1", "ConfigMap", "never", lambda obj: obj is not None, namespace=namespace
            )


async def test_exec_plugin_login_against_the_cluster(
    local_cluster: Any, namespace: str, tmp_path: Any
) -> None:
    import stat
    import sys

    import yaml

    plugin = tmp_path / "token-plugin"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": local_cluster.token},
    }
    plugin.write_text(f"#!{sys.executable}\nprint({msgspec.json.encode(credential).decode()!r})\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "local", "cluster": {"server": local_cluster.url}}],
                "users": [
                    {
                        "name": "exec",
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1",
                                "command": str(plugin),
                                "interactiveMode": "Never",
                            }
                        },
                    }
                ],
                "contexts": [
                    {
                        "name": "ctx",
                        "context": {"cluster": "local", "user": "exec", "namespace": namespace},
                    }
                ],
                "current-context": "ctx",
            }
        )
    )
    async with Client.from_kubeconfig(config) as client:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "via-exec"},
        }
        created = await client.create(body)
    assert created["metadata"]["namespace"] == namespace
