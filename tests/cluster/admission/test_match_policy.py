"""``matchPolicy: Equivalent`` (the default): a webhook whose rules name one version of a
resource also sees writes made through an equivalent one (another version of the same CRD,
``events.k8s.io`` events for core events), with the object in the version it asked for; a
mutating webhook's patch is converted back. ``Exact`` sees only the resources its rules name.
ValidatingAdmissionPolicies match the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.cluster.admission.conversion_fixtures import (
    GROUP,
    cronjob_crd,
    cronjob_v1,
    cronjobs_path,
    install_crd,
    raw_converter,
)
from tests.cluster.admission.test_admission_policies import binding, cleanup, create, policy
from tests.cluster.admission.test_webhook_admission import register, webhook
from tests.cluster.admission.webhook_server import WebhookServer, deny, patch
from tests.cluster.raw_api import RawAPI


@pytest.fixture(autouse=True)
async def _crd_without_webhook(api: RawAPI) -> AsyncIterator[None]:
    """Leave the shared CRD with ``strategy: None`` (its test converter is gone after a test)."""
    yield
    await install_crd(api, cronjob_crd(None))


def v2_rule(**extra: Any) -> dict[str, Any]:
    return {
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [GROUP],
                "apiVersions": ["v2"],
                "resources": ["cronjobs"],
            }
        ],
        **extra,
    }


async def test_a_webhook_for_v2_sees_a_v1_write_in_v2_and_its_patch_comes_back_in_v1(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    async with raw_converter() as converter:
        await install_crd(api, cronjob_crd(converter.client_config))
        hooks.responders["/hour"] = patch(
            {"op": "replace", "path": "/spec/schedule/hour", "value": "5"}
        )
        await register(
            api,
            "MutatingWebhookConfiguration",
            webhook("hour.example.com", hooks.client_config("/hour"), **v2_rule()),
            webhook(
                "exact.example.com",
                hooks.client_config("/exact"),
                **v2_rule(matchPolicy="Exact"),
            ),
        )
        reply = await api.request(
            "POST", cronjobs_path("v1", namespace), cronjob_v1("p", "0 1 * * *")
        )
        assert reply.status == 201, reply.body
        assert reply.body["apiVersion"] == f"{GROUP}/v1"
        assert reply.body["spec"]["schedule"] == "0 5 * * *"

        (seen,) = hooks.requests("/hour")
        assert seen["kind"] == {"group": GROUP, "version": "v2", "kind": "CronJob"}
        assert seen["resource"] == {"group": GROUP, "version": "v2", "resource": "cronjobs"}
        assert seen["requestKind"] == {"group": GROUP, "version": "v1", "kind": "CronJob"}
        assert seen["requestResource"]["version"] == "v1"
        assert seen["object"]["apiVersion"] == f"{GROUP}/v2"
        assert seen["object"]["spec"]["schedule"]["hour"] == "1"
        assert hooks.requests("/exact") == []

        stored = await api.request("GET", cronjobs_path("v1", namespace, "p"))
        assert stored.body["spec"]["schedule"] == "0 5 * * *"


async def test_a_validating_webhook_for_v2_judges_a_v1_update_in_v2(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    async with raw_converter() as converter:
        await install_crd(api, cronjob_crd(converter.client_config))
        created = await api.request(
            "POST", cronjobs_path("v1", namespace), cronjob_v1("u", "0 1 * * *")
        )
        hooks.responders["/deny"] = deny("no updates in v2 terms")
        await register(
            api,
            "ValidatingWebhookConfiguration",
            webhook("deny.example.com", hooks.client_config("/deny"), **v2_rule()),
        )
        updated = {**created.body, "spec": {"schedule": "0 2 * * *"}}
        reply = await api.request("PUT", cronjobs_path("v1", namespace, "u"), updated)
        assert reply.status == 403
        assert reply.body["message"] == (
            'admission webhook "deny.example.com" denied the request: no updates in v2 terms'
        )
        (seen,) = hooks.requests("/deny")
        assert seen["operation"] == "UPDATE"
        assert seen["object"]["spec"]["schedule"]["hour"] == "2"
        assert seen["oldObject"]["spec"]["schedule"]["hour"] == "1"


async def test_a_failing_conversion_for_an_equivalent_webhook_is_an_internal_error(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    async with raw_converter() as converter:
        await install_crd(api, cronjob_crd(converter.client_config))
        await register(
            api,
            "ValidatingWebhookConfiguration",
            webhook("v2.example.com", hooks.client_config("/v2"), **v2_rule()),
        )

        def failure(review: dict[str, Any]) -> dict[str, Any]:
            return {
                "apiVersion": review["apiVersion"],
                "kind": "ConversionReview",
                "response": {
                    "uid": review["request"]["uid"],
                    "result": {"status": "Failure", "message": "cannot"},
                },
            }

        converter.answer = failure
        reply = await api.request(
            "POST", cronjobs_path("v1", namespace), cronjob_v1("f", "0 1 * * *")
        )
        assert reply.status == 500
        assert reply.body["reason"] == "InternalError"
        assert reply.body["message"] == (
            f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=CronJob "
            "failed: cannot"
        )
        assert hooks.requests("/v2") == []


async def test_a_webhook_for_events_k8s_io_sees_core_events_in_its_own_shape(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    await register(
        api,
        "ValidatingWebhookConfiguration",
        webhook(
            "events.example.com",
            hooks.client_config("/events"),
            rules=[
                {
                    "operations": ["CREATE"],
                    "apiGroups": ["events.k8s.io"],
                    "apiVersions": ["v1"],
                    "resources": ["events"],
                }
            ],
        ),
    )
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "reason": "Tested",
        "message": "hello",
        "type": "Normal",
        "source": {"component": "tests"},
    }
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/events", event)
    assert reply.status == 201, reply.body
    (seen,) = hooks.requests("/events")
    assert seen["kind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert seen["requestKind"] == {"group": "", "version": "v1", "kind": "Event"}
    assert seen["object"]["apiVersion"] == "events.k8s.io/v1"
    assert seen["object"]["note"] == "hello"
    assert seen["object"]["regarding"]["name"] == "p"


async def test_a_policy_for_v2_judges_a_v1_write_in_v2_terms(api: RawAPI, namespace: str) -> None:
    def cronjob_policy(name: str, match_policy: str, expression: str) -> dict[str, Any]:
        return policy(
            name,
            {"expression": expression, "message": f"{name} refused"},
            matchConstraints={
                "matchPolicy": match_policy,
                "resourceRules": [
                    {
                        "apiGroups": [GROUP],
                        "apiVersions": ["v2"],
                        "operations": ["CREATE"],
                        "resources": ["cronjobs"],
                    }
                ],
            },
        )

    async with raw_converter() as converter:
        await install_crd(api, cronjob_crd(converter.client_config))
        try:
            await create(
                api,
                # Sees v2: the schedule is an object, request.kind says v2, requestKind v1.
                cronjob_policy(
                    "no-minute-13",
                    "Equivalent",
                    "object.spec.schedule.minute != '13' && request.kind.version == 'v2' "
                    "&& request.requestKind.version == 'v1'",
                ),
                binding("no-minute-13-binding", "no-minute-13", ["Deny"]),
                # Exact: never sees a v1 write (it would refuse everything).
                cronjob_policy("exact", "Exact", "false"),
                binding("exact-binding", "exact", ["Deny"]),
            )
            path = cronjobs_path("v1", namespace)
            ok = await api.request("POST", path, cronjob_v1("fine", "14 * * * *"))
            assert ok.status == 201, ok.body
            refused = await api.request("POST", path, cronjob_v1("thirteen", "13 * * * *"))
            assert refused.status == 422, refused.body
            assert refused.body["message"] == (
                "ValidatingAdmissionPolicy 'no-minute-13' with binding 'no-minute-13-binding' "
                "denied request: no-minute-13 refused"
            )
        finally:
            await cleanup(api)
