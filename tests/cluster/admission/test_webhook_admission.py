"""Admission webhooks in the local cluster, as kube-apiserver 1.32 calls them.

Every test registers configurations against a scriptable HTTPS webhook (real TLS, CA bundle)
and writes through the HTTP API: what a client sees (codes, Status messages, Warning headers,
stored objects) and what the webhook received (the AdmissionReview).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cluster.admission.conftest import MUTATING, VALIDATING
from tests.cluster.admission.webhook_server import WebhookServer, deny, patch
from tests.cluster.raw_api import RawAPI


def configuration(kind: str, name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(webhooks),
    }


def webhook(
    name: str,
    client_config: dict[str, Any],
    resources: list[str] | None = None,
    operations: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": client_config,
        "rules": [
            {
                "operations": operations or ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": resources or ["configmaps"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


async def register(api: RawAPI, kind: str, *webhooks: dict[str, Any], name: str = "") -> None:
    path = MUTATING if kind == "MutatingWebhookConfiguration" else VALIDATING
    body = configuration(kind, name or f"test-{kind.lower()}", *webhooks)
    reply = await api.request("POST", path, body)
    assert reply.status == 201, reply.body


def configmap(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"a": "1"},
    }


async def test_a_validating_webhook_denies_a_create_with_its_message(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    hooks.responders["/deny"] = deny("name is not allowed")
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("deny.example.com", hooks.client_config("/deny")),
    )
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("x"))
    assert reply.status == 403
    assert reply.body["message"] == (
        'admission webhook "deny.example.com" denied the request: name is not allowed'
    )
    missing = await api.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/x")
    assert missing.status == 404
    [request] = hooks.requests("/deny")
    assert request["operation"] == "CREATE"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["namespace"] == namespace
    assert request["name"] == "x"
    assert request["object"]["data"] == {"a": "1"}
    assert request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["userInfo"]["username"] == "setpoint-admin"
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}


async def test_a_mutating_webhook_patches_the_object_and_its_warnings_reach_the_client(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        answer = patch({"op": "add", "path": "/data/added", "value": "by-webhook"})(request)
        return {**answer, "warnings": ["defaulted data.added"]}

    hooks.responders["/mutate"] = respond
    await register(
        api,
        "MutatingWebhookConfiguration",
        webhook("mutate.example.com", hooks.client_config("/mutate")),
    )
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("m"))
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"a": "1", "added": "by-webhook"}
    assert reply.headers.getall("Warning") == ['299 - "defaulted data.added"']
    stored = await api.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/m")
    assert stored.body["data"]["added"] == "by-webhook"


async def test_an_update_sends_the_old_object_and_a_delete_only_the_old_object(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, configmap("u"))
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook(
            "watch.example.com",
            hooks.client_config("/watch"),
            operations=["UPDATE", "DELETE"],
        ),
    )
    changed = {**created.body, "data": {"a": "2"}}
    assert (await api.request("PUT", f"{path}/u", changed)).status == 200
    assert (await api.request("DELETE", f"{path}/u")).status == 200
    update, delete = hooks.requests("/watch")
    assert update["operation"] == "UPDATE"
    assert update["object"]["data"] == {"a": "2"}
    assert update["oldObject"]["data"] == {"a": "1"}
    assert update["options"]["kind"] == "UpdateOptions"
    assert delete["operation"] == "DELETE"
    assert delete["object"] is None
    assert delete["oldObject"]["data"] == {"a": "2"}
    assert delete["options"]["kind"] == "DeleteOptions"


async def test_a_webhook_that_cannot_be_reached_fails_the_write_unless_it_fails_open(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    dead = {"url": "https://127.0.0.1:1/dead", "caBundle": hooks.ca_bundle}
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("dead.example.com", dead),
        name="dead",
    )
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("f"))
    assert reply.status == 500
    assert reply.body["reason"] == "InternalError"
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "dead.example.com": failed to call '
        'webhook: Post "https://127.0.0.1:1/dead?timeout=10s": dial tcp 127.0.0.1:1: '
        "connect: connection refused"
    )
    await api.request("DELETE", f"{VALIDATING}/dead")
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("dead.example.com", dead, failurePolicy="Ignore"),
        name="dead",
    )
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("f"))
    assert reply.status == 201, reply.body


async def test_a_hanging_webhook_costs_its_timeout_and_never_blocks_the_server(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    release = asyncio.Event()
    called = asyncio.Event()

    async def hang(request: dict[str, Any]) -> dict[str, Any]:
        called.set()
        await release.wait()
        return {"allowed": True}

    hooks.responders["/hang"] = hang
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("hang.example.com", hooks.client_config("/hang"), timeoutSeconds=1),
    )
    write = asyncio.ensure_future(
        api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("h"))
    )
    await called.wait()
    # While the webhook hangs, the server answers other requests.
    assert (await api.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")).status == 200
    assert not write.done()
    reply = await write
    release.set()
    assert reply.status == 500
    assert reply.body["message"].endswith(
        f'failed to call webhook: Post "{hooks.url("/hang")}?timeout=1s": context deadline exceeded'
    )


async def test_the_webhook_configurations_are_never_sent_to_webhooks(
    api: RawAPI, hooks: WebhookServer
) -> None:
    hooks.responders["/all"] = deny("everything is denied")
    everything = webhook("all.example.com", hooks.client_config("/all"))
    everything["rules"] = [
        {
            "operations": ["*"],
            "apiGroups": ["*"],
            "apiVersions": ["*"],
            "resources": ["*/*"],
        }
    ]
    await register(api, "ValidatingWebhookConfiguration", everything, name="deny-all")
    reply = await api.request("DELETE", f"{VALIDATING}/deny-all")
    assert reply.status == 200, reply.body
    assert hooks.requests("/all") == []


async def test_a_configuration_is_defaulted_as_upstream(api: RawAPI, hooks: WebhookServer) -> None:
    await register(
        api,
        "MutatingWebhookConfiguration",
        webhook("defaults.example.com", hooks.client_config("/d")),
        name="defaults",
    )
    stored = (await api.request("GET", f"{MUTATING}/defaults")).body["webhooks"][0]
    assert stored["failurePolicy"] == "Fail"
    assert stored["matchPolicy"] == "Equivalent"
    assert stored["namespaceSelector"] == {}
    assert stored["objectSelector"] == {}
    assert stored["timeoutSeconds"] == 10
    assert stored["reinvocationPolicy"] == "Never"
    assert stored["rules"][0]["scope"] == "*"


async def test_an_invalid_configuration_is_refused_naming_each_field(
    api: RawAPI, hooks: WebhookServer
) -> None:
    bad = webhook("short", {"url": "http://example.com/x?q=1"}, timeoutSeconds=31)
    bad["sideEffects"] = "Some"
    bad["admissionReviewVersions"] = ["v2"]
    reply = await api.request(
        "POST", VALIDATING, configuration("ValidatingWebhookConfiguration", "bad", bad)
    )
    assert reply.status == 422
    causes = {(c["field"], c["message"]) for c in reply.body["details"]["causes"]}
    assert causes >= {
        (
            "webhooks[0].name",
            'Invalid value: "short": should be a domain with at least three segments '
            "separated by dots",
        ),
        (
            "webhooks[0].sideEffects",
            'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        ),
        (
            "webhooks[0].timeoutSeconds",
            "Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        ),
        (
            "webhooks[0].clientConfig.url",
            "Invalid value: \"http\": 'https' is the only allowed URL scheme",
        ),
        (
            "webhooks[0].clientConfig.url",
            'Invalid value: "q=1": query parameters are not permitted in the URL',
        ),
    }
    assert (await api.request("GET", f"{VALIDATING}/bad")).status == 404


async def test_deleting_a_namespace_goes_to_the_webhooks(api: RawAPI, hooks: WebhookServer) -> None:
    hooks.responders["/ns"] = deny("namespaces stay")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "adm-kept"}}
    assert (await api.request("POST", "/api/v1/namespaces", body)).status == 201
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("ns.example.com", hooks.client_config("/ns"), ["namespaces"], ["DELETE"]),
        name="ns",
    )
    refused = await api.request("DELETE", "/api/v1/namespaces/adm-kept")
    assert refused.status == 403
    assert refused.body["message"].endswith("denied the request: namespaces stay")
    [request] = hooks.requests("/ns")
    assert request["oldObject"]["metadata"]["name"] == "adm-kept"
    assert request["namespace"] == "adm-kept"
    kept = await api.request("GET", "/api/v1/namespaces/adm-kept")
    assert "deletionTimestamp" not in kept.body["metadata"]
    await api.request("DELETE", f"{VALIDATING}/ns")
    assert (await api.request("DELETE", "/api/v1/namespaces/adm-kept")).status == 200


async def test_the_server_keeps_its_connection_to_a_webhook(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook("keep.example.com", hooks.client_config("/keep")),
    )
    for name in ("k1", "k2", "k3"):
        reply = await api.request(
            "POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap(name)
        )
        assert reply.status == 201
    assert len(hooks.peers) == 3
    assert len(set(hooks.peers)) == 1  # one TLS connection, not a handshake per write
