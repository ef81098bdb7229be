"""Webhook connection settings as Metacontroller reads them: ``authorization``, ``basicAuth``,
``clientTLS`` (mutual TLS), per hook or from ``spec.endpointConfigs`` by host; and the
``preUpdateChild``/``postUpdateChild`` hooks, which Metacontroller declares but never calls."""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.client import Client
from setpoint.composite.endpoint_config import effective_url, match_endpoint_config
from setpoint.testing import wait_for, wait_for_event

from .conftest import (
    HookServer,
    RunningMetacontroller,
    client_certificate,
    self_signed_ca_and_server,
    serving_hooks,
)
from .test_composite_webhooks import config_map, config_map_for, create_thing, spec, thing_status


def secret(namespace: str, name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def test_endpoint_configs_match_the_host_with_or_without_the_default_port() -> None:
    configs = [{"host": "hooks.example:8443"}, {"host": "Plain.Example"}, {"host": "tls.example"}]
    assert match_endpoint_config("https://hooks.example:8443/sync", configs) is configs[0]
    assert match_endpoint_config("http://plain.example/sync", configs) is configs[1]
    assert match_endpoint_config("http://plain.example:80/sync", configs) is configs[1]
    assert match_endpoint_config("https://tls.example:443/x", configs) is configs[2]
    assert match_endpoint_config("https://tls.example:444/x", configs) is None
    assert match_endpoint_config("https://hooks.example/sync", configs) is None
    service = {"service": {"name": "hooks", "namespace": "ns", "port": 8443}, "path": "/s"}
    assert effective_url(service) == "http://hooks.ns:8443/s"


async def test_authorization_and_basic_auth_headers_per_hook_and_from_endpoint_configs(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    await client.create(secret(namespace, "token", token=" s3cret\n"))
    await client.create(secret(namespace, "login", user="me", secret="pw"))
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}
    hooks.handlers["/finalize"] = lambda request: {"children": [], "finalized": True}
    body = spec(hooks)
    body["hooks"]["sync"]["webhook"]["authorization"] = {
        "secretRef": {"name": "token", "namespace": namespace, "key": "token"}
    }
    # The finalize hook sets nothing itself: the endpointConfigs entry of its host applies.
    body["hooks"]["finalize"] = {"webhook": {"url": hooks.url + "/finalize"}}
    body["endpointConfigs"] = [
        {
            "host": f"127.0.0.1:{hooks.port}",
            "basicAuth": {
                "secretRef": {"name": "login", "namespace": namespace},
                "usernameKey": "user",
                "passwordKey": "secret",
            },
        }
    ]
    await metacontroller.declare("CompositeController", "things", body)
    thing = await create_thing(client, namespace)
    await config_map(client, namespace)
    assert hooks.headers["/sync"][0]["Authorization"] == "Bearer s3cret"
    await client.delete(thing)
    await wait_for(lambda: hooks.headers.get("/finalize"), timeout=10, what="the finalize call")
    expected = "Basic " + base64.b64encode(b"me:pw").decode()
    assert hooks.headers["/finalize"][0]["Authorization"] == expected


async def test_settings_that_cannot_be_read_stop_the_controller_with_an_event(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    body = spec(hooks)
    body["hooks"]["sync"]["webhook"]["authorization"] = {
        "secretRef": {"name": "absent", "namespace": namespace, "key": "token"}
    }
    declared = await metacontroller.declare("CompositeController", "no-secret", body)
    event = await wait_for_event(client, declared, reason="CreateError", type="Warning")
    assert event["note"] == (
        "Cannot create new controller: hooks.sync.webhook: "
        f"can't get authorization secret {namespace}/absent: not found"
    )
    body["hooks"]["sync"]["webhook"]["authorization"] = {
        "type": "basic",
        "secretRef": {"name": "absent", "namespace": namespace, "key": "token"},
    }
    declared = await metacontroller.declare("CompositeController", "basic-type", body)
    event = await wait_for_event(client, declared, reason="CreateError", type="Warning")
    assert "type 'basic' is not supported; use the basicAuth field instead" in event["note"]


@pytest.fixture
async def mutual_tls_hooks() -> AsyncIterator[tuple[HookServer, str, tuple[str, str, str]]]:
    """An HTTPS hook server that requires a client certificate signed by its own client CA."""
    server_ca, context = self_signed_ca_and_server()
    client_ca, cert, key = client_certificate()
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_ca)
    async with serving_hooks(context) as server:
        yield server, server_ca, (client_ca, cert, key)


async def test_client_tls_presents_a_certificate_to_a_server_that_requires_one(
    client: Client,
    namespace: str,
    mutual_tls_hooks: tuple[HookServer, str, tuple[str, str, str]],
    metacontroller: RunningMetacontroller,
) -> None:
    hooks, server_ca, (_, cert, key) = mutual_tls_hooks
    hooks.handlers["/sync"] = lambda request: {"status": {"mtls": True}, "children": []}
    await client.create(secret(namespace, "client-cert", **{"tls.crt": cert, "tls.key": key}))
    body = spec(hooks)
    body["hooks"]["sync"]["webhook"]["caBundle"] = {"inline": server_ca}
    await metacontroller.declare("CompositeController", "no-client-cert", body)
    await create_thing(client, namespace)
    status = await thing_status(client, namespace, lambda s: s.get("conditions"))
    assert "cannot call" in status["status"]["conditions"][0]["message"]
    await client.delete("metacontroller.k8s.io/v1alpha1", "CompositeController", "no-client-cert")
    body["hooks"]["sync"]["webhook"]["clientTLS"] = {
        "secretRef": {"name": "client-cert", "namespace": namespace}
    }
    await metacontroller.declare("CompositeController", "client-cert", body)
    await thing_status(client, namespace, lambda s: s.get("mtls") is True)


async def test_pre_and_post_update_child_hooks_are_kept_and_never_called_as_upstream(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}
    for path in ("/pre", "/post"):
        hooks.handlers[path] = lambda request: {}
    body = spec(hooks)
    body["hooks"]["preUpdateChild"] = {"webhook": {"url": hooks.url + "/pre"}}
    body["hooks"]["postUpdateChild"] = {"webhook": {"url": hooks.url + "/post"}}
    declared = await metacontroller.declare("CompositeController", "things", body)
    assert declared["spec"]["hooks"]["preUpdateChild"] == {"webhook": {"url": hooks.url + "/pre"}}
    assert declared["spec"]["hooks"]["postUpdateChild"] == {"webhook": {"url": hooks.url + "/post"}}
    await create_thing(client, namespace)
    await config_map(client, namespace)
    await client.patch(
        "composite.setpoint.dev/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace
    )
    await config_map(client, namespace, lambda cm: cm["data"] == {"size": "2"})  # updated
    assert "/pre" not in hooks.calls and "/post" not in hooks.calls
