"""ValidatingAdmissionPolicy and its bindings in the local cluster: CEL validations with
variables, params, match conditions and messageExpression; Deny and Warn; failurePolicy."""

from __future__ import annotations

from typing import Any

from tests.cluster.admission.test_webhook_admission import configmap
from tests.cluster.raw_api import RawAPI

BASE = "/apis/admissionregistration.k8s.io/v1"


def policy(name: str, *validations: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["configmaps"],
                    }
                ]
            },
            "validations": list(validations),
            **spec,
        },
    }


def binding(name: str, policy_name: str, actions: list[str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy_name, "validationActions": actions, **spec},
    }


async def create(api: RawAPI, *objects: dict[str, Any]) -> None:
    for obj in objects:
        plural = obj["kind"].lower() + ("s" if obj["kind"].endswith("Binding") else "")
        plural = plural.replace("policy", "policie") if plural.endswith("policy") else plural
        path = f"{BASE}/{plural if plural.endswith('s') else plural + 's'}"
        reply = await api.request("POST", path, obj)
        assert reply.status == 201, reply.body


async def cleanup(api: RawAPI) -> None:
    for plural in ("validatingadmissionpolicybindings", "validatingadmissionpolicies"):
        await api.request("DELETE", f"{BASE}/{plural}")


async def test_a_deny_binding_refuses_with_the_policys_message(api: RawAPI, namespace: str) -> None:
    try:
        await create(
            api,
            policy(
                "max-keys",
                {"expression": "size(object.data) <= 2", "message": "at most 2 keys"},
            ),
            binding("max-keys-binding", "max-keys", ["Deny"]),
        )
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        assert (await api.request("POST", path, configmap("ok"))).status == 201
        big = configmap("big")
        big["data"] = {"a": "1", "b": "2", "c": "3"}
        refused = await api.request("POST", path, big)
        assert refused.status == 422
        assert refused.body["reason"] == "Invalid"
        assert refused.body["message"] == (
            "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied "
            "request: at most 2 keys"
        )
    finally:
        await cleanup(api)


async def test_params_variables_and_message_expression_with_a_warn_binding(
    api: RawAPI, namespace: str
) -> None:
    limits = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "limits"},
        "data": {"max": "1"},
    }
    assert (
        await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", limits)
    ).status == 201
    try:
        await create(
            api,
            policy(
                "param-keys",
                {
                    "expression": "variables.keys <= int(params.data.max)",
                    "messageExpression": "'has ' + string(variables.keys) + ' keys, max ' "
                    "+ params.data.max",
                    "reason": "Forbidden",
                },
                paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                variables=[{"name": "keys", "expression": "size(object.data)"}],
                matchConditions=[
                    {"name": "not-limits", "expression": "object.metadata.name != 'limits'"}
                ],
            ),
            binding(
                "param-keys-warn",
                "param-keys",
                ["Warn"],
                paramRef={"name": "limits", "parameterNotFoundAction": "Deny"},
            ),
        )
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        two = configmap("two")
        two["data"] = {"a": "1", "b": "2"}
        reply = await api.request("POST", path, two)
        assert reply.status == 201, reply.body
        warning = (
            "Validation failed for ValidatingAdmissionPolicy 'param-keys' with binding "
            "'param-keys-warn': has 2 keys, max 1"
        )
        assert reply.headers.getall("Warning") == [f'299 - "{warning}"']
    finally:
        await cleanup(api)


async def test_missing_params_and_failing_expressions_follow_the_policy(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    try:
        await create(
            api,
            policy(
                "needs-params",
                {"expression": "true"},
                paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            ),
            binding(
                "needs-params-binding",
                "needs-params",
                ["Deny"],
                paramRef={"name": "absent", "parameterNotFoundAction": "Deny"},
            ),
        )
        refused = await api.request("POST", path, configmap("x"))
        assert refused.status == 422
        assert refused.body["message"] == (
            "ValidatingAdmissionPolicy 'needs-params' with binding 'needs-params-binding' "
            "denied request: no params found for policy binding with `Deny` "
            "parameterNotFoundAction"
        )
        await cleanup(api)
        await create(
            api,
            policy("broken", {"expression": "object.spec.replicas > 1"}),
            binding("broken-binding", "broken", ["Deny"]),
        )
        refused = await api.request("POST", path, configmap("x"))
        assert refused.status == 422
        assert refused.body["message"] == (
            "ValidatingAdmissionPolicy 'broken' with binding 'broken-binding' denied request: "
            "expression 'object.spec.replicas > 1' resulted in error: no such key: spec"
        )
        await cleanup(api)
        await create(
            api,
            policy("broken", {"expression": "object.spec.replicas > 1"}, failurePolicy="Ignore"),
            binding("broken-binding", "broken", ["Deny"]),
        )
        assert (await api.request("POST", path, configmap("y"))).status == 201
    finally:
        await cleanup(api)


async def test_invalid_policies_and_bindings_are_refused(api: RawAPI) -> None:
    bad = policy("bad", {"expression": "object.data =="})
    reply = await api.request("POST", f"{BASE}/validatingadmissionpolicies", bad)
    assert reply.status == 422
    [cause] = reply.body["details"]["causes"]
    assert cause["field"] == "spec.validations[0].expression"
    both = binding("both", "bad", ["Deny", "Warn"])
    reply = await api.request("POST", f"{BASE}/validatingadmissionpolicybindings", both)
    assert reply.status == 422
    assert reply.body["details"]["causes"][0]["field"] == "spec.validationActions"
