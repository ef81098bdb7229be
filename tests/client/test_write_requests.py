"""What write calls put on the wire: paths, query parameters, content types and bodies."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from setpoint.client import Client, Preconditions

from .conftest import ScriptedServer, json_response

CM_PATH = "/api/v1/namespaces/default/configmaps/x"


def cm(**metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default", **metadata},
    }


def echo(status: int = 200) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        return json_response(json.loads(body) if body else cm(), status)

    return handler


async def test_apply_sends_an_apply_patch_with_manager_and_force(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.on("PATCH", CM_PATH, echo())
    desired = {**cm(), "data": {"replicas": 3.0}}
    await client.apply(desired, force=True)
    request = scripted_server.calls("PATCH", CM_PATH)[0]
    assert request.headers["Content-Type"] == "application/apply-patch+yaml"
    assert request.query["fieldManager"] == "setpoint"
    assert request.query["force"] == "true"
    assert scripted_server.bodies[-1] == (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},'
        b'"data":{"replicas":3}}'
    )


async def test_create_options_become_query_parameters(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    scripted_server.on("POST", path, echo(201))
    await client.create(cm(), dry_run=True, field_manager="me", field_validation="strict")
    query = dict(scripted_server.calls("POST", path)[0].query)
    assert query == {"dryRun": "All", "fieldManager": "me", "fieldValidation": "Strict"}


async def test_update_status_puts_to_the_status_subresource(
    scripted_server: ScriptedServer, client: Client
) -> None:
    scripted_server.on("PUT", "/api/v1/namespaces/default/configmaps/x/status", echo())
    obj = {**cm(resourceVersion="3"), "status": {"ready": True}}
    result = await client.update_status(obj)
    assert result["status"] == {"ready": True}


async def test_delete_sends_delete_options(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.on("DELETE", CM_PATH, echo())
    await client.delete(
        cm(),
        propagation_policy="Background",
        grace_period_seconds=5,
        preconditions=Preconditions(resource_version="9"),
    )
    assert json.loads(scripted_server.bodies[-1]) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
        "gracePeriodSeconds": 5,
        "preconditions": {"resourceVersion": "9"},
    }


class Thing(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    api_version: str = Field("v1", alias="apiVersion")
    kind: str = "ConfigMap"
    metadata: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, str] | None = None
    note: str | None = None


async def test_models_are_dumped_by_alias_without_nones_and_come_back_as_models(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    scripted_server.on("POST", path, echo(201))
    thing = Thing.model_validate({"metadata": {"name": "x"}, "data": {"a": "b"}})
    created = await client.create(thing)
    assert isinstance(created, Thing)
    assert created.data == {"a": "b"}
    sent = json.loads(scripted_server.bodies[-1])
    assert sent == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x"},
        "data": {"a": "b"},
    }


async def test_a_client_field_manager_is_the_default(scripted_server: ScriptedServer) -> None:
    from setpoint.client import ClientConfig

    scripted_server.on("PUT", CM_PATH, echo())
    async with await Client.from_config(
        ClientConfig(server=scripted_server.url), field_manager="my-operator"
    ) as client:
        await client.update(cm(resourceVersion="1"))
    assert scripted_server.calls("PUT", CM_PATH)[0].query["fieldManager"] == "my-operator"


async def test_async_with_on_the_constructor_closes_the_client(
    scripted_server: ScriptedServer,
) -> None:
    from setpoint.client import ClientConfig

    scripted_server.on("PUT", CM_PATH, echo())
    async with Client.from_config(ClientConfig(server=scripted_server.url)) as client:
        await client.update(cm(resourceVersion="1"))
        assert not client.transport.closed
    assert client.transport.closed


class Gadget(BaseModel):
    """A model that declares its type as class variables instead of fields."""

    api_version: ClassVar[str] = "example.com/v1"
    kind: ClassVar[str] = "Gadget"
    metadata: dict[str, Any] = Field(default_factory=dict)


def test_models_with_class_level_types_get_apiversion_and_kind() -> None:
    from setpoint.client.typed_objects import as_dict, static_type_fields

    assert static_type_fields(Gadget) == ("example.com/v1", "Gadget")
    assert as_dict(Gadget(metadata={"name": "g"})) == {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g"},
    }


async def test_patch_by_model_class_and_name_returns_a_model(
    scripted_server: ScriptedServer, client: Client
) -> None:
    # As get(Model, name) and delete(Model, name) do: the class gives apiVersion and kind.
    scripted_server.on("PATCH", CM_PATH, echo())
    patched = await client.patch(Thing, "x", {"data": {"a": "c"}}, namespace="default")
    assert isinstance(patched, Thing)
    call = scripted_server.calls("PATCH", CM_PATH)[0]
    assert call.headers["Content-Type"] == "application/merge-patch+json"
    assert json.loads(scripted_server.bodies[-1]) == {"data": {"a": "c"}}
