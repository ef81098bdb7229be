"""Webhooks' ``auditAnnotations`` and ValidatingAdmissionPolicy ``Audit`` failures land in the
audit log's Event of the request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.admission.test_admission_policies import binding, cleanup, create, policy
from tests.cluster.admission.test_webhook_admission import configmap, register, webhook
from tests.cluster.admission.webhook_server import WebhookServer
from tests.cluster.raw_api import raw_api


@pytest.fixture(scope="module")
def audited_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    log = tmp_path_factory.mktemp("audit") / "audit.log"
    cluster = BackgroundCluster(in_memory=True, controllers=False, audit_log=log).start()
    try:
        yield cluster
    finally:
        cluster.stop()


async def test_audit_annotations_of_webhooks_are_recorded(
    audited_cluster: BackgroundCluster, hooks: WebhookServer
) -> None:
    hooks.responders["/audit"] = lambda request: {
        "allowed": True,
        "auditAnnotations": {"checked-by": "policy-42"},
    }
    async with raw_api(audited_cluster.url, audited_cluster.token) as api:
        await register(
            api,
            "ValidatingWebhookConfiguration",
            webhook("audit.example.com", hooks.client_config("/audit")),
        )
        try:
            reply = await api.request(
                "POST", "/api/v1/namespaces/default/configmaps", configmap("audited")
            )
            assert reply.status == 201, reply.body
        finally:
            await api.request(
                "DELETE",
                "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            )
    audited_cluster.flush_audit_log()
    assert audited_cluster.audit_log_path is not None
    text = await asyncio.to_thread(audited_cluster.audit_log_path.read_text)
    events = [json.loads(line) for line in text.splitlines()]
    [create] = [
        e
        for e in events
        if e["verb"] == "create" and e.get("objectRef", {}).get("resource") == "configmaps"
    ]
    assert create["annotations"]["audit.example.com/checked-by"] == "policy-42"
    assert create["annotations"]["authorization.k8s.io/decision"] == "allow"


async def test_an_audit_binding_records_the_failure_and_allows_the_write(
    audited_cluster: BackgroundCluster,
) -> None:
    async with raw_api(audited_cluster.url, audited_cluster.token) as api:
        try:
            await create(
                api,
                policy(
                    "audited",
                    {"expression": "true"},
                    {"expression": "object.data.a == '2'", "message": "a must be 2 & > 1"},
                ),
                binding("audited-binding", "audited", ["Warn", "Audit"]),
            )
            reply = await api.request(
                "POST", "/api/v1/namespaces/default/configmaps", configmap("policy-audited")
            )
            assert reply.status == 201, reply.body
            assert "a must be 2 & > 1" in reply.headers["Warning"]
        finally:
            await cleanup(api)
    audited_cluster.flush_audit_log()
    assert audited_cluster.audit_log_path is not None
    text = await asyncio.to_thread(audited_cluster.audit_log_path.read_text)
    events = [json.loads(line) for line in text.splitlines()]
    creates = [
        e
        for e in events
        if e["verb"] == "create" and e.get("objectRef", {}).get("resource") == "configmaps"
    ]
    key = "validation.policy.admission.k8s.io/validation_failure"
    # The webhook test's create (no policy then) has none; this test's create has one.
    [value] = [e["annotations"][key] for e in creates if key in e.get("annotations", {})]
    # Go's encoding/json: compact, upstream's field order, HTML characters escaped.
    assert value == (
        '[{"message":"a must be 2 \\u0026 \\u003e 1","policy":"audited",'
        '"binding":"audited-binding","expressionIndex":1,"validationActions":["Warn","Audit"]}]'
    )
    assert json.loads(value)[0]["message"] == "a must be 2 & > 1"
